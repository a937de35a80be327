#!/usr/bin/python3
"""Live runs (issue 30, item 3) against the real gdrbench-server process:
  1. the protocol over grpcio (gdrbench.v1.LiveRuns): a live run cut by a SIGKILL of the server
     after 3 chunks, the server restarted on the same store, the client asks
     where it is and resumes; a resend and a gap change nothing; its cells
     (GET /api/v1/live-runs/ID/cells) equal an uninterrupted upload's; an
     open run is listed and an operator abandons it (DELETE, write role);
  2. the CLI: `gdrbench sweep --server` streams the journal while it runs
     and its final upload closes the live run; a sweep whose server was down
     keeps its journal, and `gdrbench sweep --resume` sends the journal's
     tests and stores the run.
Agents are real processes on loopback (no RDMA here: every cell is an ERR,
still a run)."""
import argparse
import os
import subprocess
import tempfile

import serverlib as sl
from serverlib import check


def cells(api, run, token, page=3):
    out, frm = [], 0
    for _ in range(1000):
        code, body = sl.curl(f"{api}/live-runs/{run}/cells?from_test={frm}&page_size={page}", token=token,
                             expect=200)
        got = body.get("cells", [])
        if not got:
            return out
        out += [(c["src"], c["dst"], c.get("bwAvgGbps", 0)) for c in got]
        frm = int(body["nextTest"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    p = lambda n: os.path.join(work, n)
    procs, server = [], None
    try:
        sl.gen_stubs(args.proto_dir, work)
        import grpc
        from gdrbench.v1 import live_pb2 as cpb, live_pb2_grpc, sweep_pb2
        tokens = sl.write_tokens(work)
        flags = ["--insecure", "--tokens", tokens, "--db", p("s.db")]
        server = sl.Server(args.bin_dir, work, flags)
        W, R = sl.TOKENS["write"], sl.TOKENS["read"]
        md = [("authorization", "Bearer " + W)]

        def stub():
            return live_pb2_grpc.LiveRunsStub(grpc.insecure_channel(server.grpc))

        plan = cpb.LivePlan(cluster="lab", mode="all-pairs", nodes=[f"node{i}" for i in range(4)], rails=1,
                            sizes_bytes=[65536])

        def chunk(run, first, n):
            c = cpb.LiveChunk(run_id=run, first_test=first)
            for i in range(first, first + n):
                t = c.tests.add(src=i % 4, dst=(i + 1) % 4, round=i // 2, status=sweep_pb2.RESULT_STATUS_OK)
                t.cells.add(size_bytes=65536, status=sweep_pb2.RESULT_STATUS_OK, bw_avg_gbps=100.0 + i)
            return c

        s = stub()
        s.OpenLiveRun(cpb.OpenLiveRunRequest(run_id="whole", plan=plan), metadata=md)
        for at in range(0, 40, 5):
            ack = s.AppendLiveRun(chunk("whole", at, 5), metadata=md)
        check(ack.next_test == 40, "an uninterrupted live upload: 40 tests acknowledged")
        r = s.OpenLiveRun(cpb.OpenLiveRunRequest(run_id="cut", plan=plan), metadata=md)
        check(r.state == cpb.LIVE_RUN_STATE_OPEN and r.next_test == 0, "a new live run is open at test 0")
        for at in (0, 5, 10):
            ack = s.AppendLiveRun(chunk("cut", at, 5), metadata=md)
        check(ack.next_test == 15, "3 chunks acknowledged (durable when answered)")
        server.proc.kill()  # SIGKILL: no drain, no flush of our own
        server.proc.wait()
        try:
            s.AppendLiveRun(chunk("cut", 15, 5), metadata=md, timeout=5)
            check(False, "an append to a killed server fails")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.UNAVAILABLE, f"an append to a killed server: {e.code()}")
        server = sl.Server(args.bin_dir, work, flags, name="server2")
        s = stub()
        r = s.OpenLiveRun(cpb.OpenLiveRunRequest(run_id="cut", plan=plan), metadata=md)
        check(r.state == cpb.LIVE_RUN_STATE_OPEN and r.next_test == 15,
              f"after the restart the server says where it is: next test {r.next_test}")
        ack = s.AppendLiveRun(chunk("cut", 10, 5), metadata=md)
        check(ack.next_test == 15, "a resent chunk changes nothing (idempotent)")
        ack = s.AppendLiveRun(chunk("cut", 25, 5), metadata=md)
        check(ack.next_test == 15, "a chunk beyond a gap is not stored")
        for at in range(15, 40, 5):
            ack = s.AppendLiveRun(chunk("cut", at, 5), metadata=md)
        check(ack.next_test == 40, "resumed from the acknowledged test: 40")
        api = f"http://{server.http}/api/v1"
        whole, cut = cells(api, "whole", R), cells(api, "cut", R)
        check(len(whole) == 40 and cut == whole, "the resumed run's cells equal the uninterrupted run's")
        code, body = sl.curl(api + "/live-runs", token=R, expect=200)
        check([x["runId"] for x in body["runs"]] == ["whole", "cut"] and body["runs"][1]["state"] == "LIVE_RUN_STATE_OPEN",
              "open live runs are listed (oldest first) with their state")
        # The CLI's view: `gdrbench runs live` and `gdrbench runs abandon`.
        gdr = os.path.join(args.bin_dir, "gdrbench")
        for role, tok in (("read", R), ("write", W)):
            with open(p(role), "w") as f:
                f.write(tok + "\n")

        def runs(token, *cmd):
            return subprocess.run([gdr, "runs"] + list(cmd) + ["--server", server.grpc, "--server-insecure",
                                                               "--server-token-file", p(token)],
                                  capture_output=True, text=True, timeout=30)

        r = runs("read", "live")
        rows = [l.split() for l in r.stdout.splitlines()[1:]]
        check(r.returncode == 0 and [x[0] for x in rows] == ["whole", "cut"]
              and all(x[1:5] == ["lab", "all-pairs", "4", "40"] for x in rows),
              f"gdrbench runs live lists both with cluster, mode, nodes and tests stored: {r.stdout!r} {r.stderr!r}")
        r = runs("read", "abandon", "cut")
        check(r.returncode != 0 and "write" in r.stderr, f"gdrbench runs abandon with a read token: {r.stderr!r}")
        r = runs("write", "abandon", "nosuchrun")
        check(r.returncode != 0 and "nosuchrun" in r.stderr, f"abandoning an unknown run names it: {r.stderr!r}")
        code, _ = sl.curl(api + "/live-runs/whole", token=R, method="DELETE")
        check(code == 403, "abandoning a live run needs a write token: 403")
        code, body = sl.curl(api + "/live-runs/whole", token=W, method="DELETE", expect=200)
        code, body = sl.curl(api + "/live-runs/whole", token=R)
        check(code == 404, "an abandoned live run is gone")
        r = runs("write", "abandon", "cut")
        check(r.returncode == 0 and "live run cut dropped (40 / ? tests had arrived)" in r.stdout,
              f"gdrbench runs abandon with a write token: {r.stdout!r} {r.stderr!r}")
        r = runs("read", "live")
        check(r.returncode == 0 and "no sweep in progress" in r.stdout, f"nothing left in progress: {r.stdout!r}")

        # 2. The CLI over real agents.
        agents, inv = sl.loopback_agents(args.bin_dir, work)
        procs += agents
        def sweep(out, address, *extra):
            return subprocess.run([gdr, "sweep", "--inventory", inv, "--out", out, "--sizes", "64K",
                                   "--iterations", "10", "--no-preflight", "--retest-low", "0", "--progress",
                                   "none", "--server", address, "--server-insecure", "--server-token-file",
                                   p("write"), "--cluster", "lab"] + list(extra),
                                  capture_output=True, text=True, timeout=120)

        r = sweep(p("out1"), server.grpc)
        check(r.returncode in (0, 1) and "tests read from the journal are on the server" in r.stderr,
              f"sweep --server: the live upload reports: {r.returncode} {r.stderr.strip()[-300:]}")
        code, body = sl.curl(api + "/runs", token=R, expect=200)
        check(len(body["runs"]) == 1, "the sweep's run is stored")
        code, body = sl.curl(api + "/live-runs", token=R, expect=200)
        check(body["runs"] == [], "the final upload closed the live run")

        # The server down for a whole sweep: the journal keeps the tests; the
        # resume sends them and stores the run.
        dead = server.grpc
        server.stop()
        r = sweep(p("out2"), dead)
        check(r.returncode != 0 and "0 of " in r.stderr and "last failure" in r.stderr,
              f"a sweep whose server is down says what the server lacks: {r.stderr.strip()[-400:]}")
        server = sl.Server(args.bin_dir, work, flags, name="server3")
        api = f"http://{server.http}/api/v1"
        r = sweep(p("out2"), server.grpc, "--resume", p("out2/journal.bin"))
        check("tests read from the journal are on the server" in r.stderr and r.returncode in (0, 1),
              f"--resume sends the journal's tests: {r.returncode} {r.stderr.strip()[-300:]}")
        code, body = sl.curl(api + "/runs", token=R, expect=200)
        check(len(body["runs"]) == 2, "the resumed run is stored")
        code, body = sl.curl(api + "/live-runs", token=R, expect=200)
        check(body["runs"] == [], "and its live run closed")
    finally:
        for pr in procs:
            pr.kill()
        if server is not None and server.proc.poll() is None:
            server.stop()


if __name__ == "__main__":
    main()
