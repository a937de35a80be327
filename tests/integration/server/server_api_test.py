#!/usr/bin/python3
"""gdrbench-server through clients that are not ours, over TLS with tokens:
Python grpcio (stubs generated from proto/ at test time) over mTLS, curl for
the HTTP/JSON API, and our CLI (`gdrbench sweep --server` against two real
agents on loopback, `runs`, `baseline`). Bad tokens are refused, bad input
is rejected with a sentence, and a malformed upload changes nothing."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import serverlib as sl
from serverlib import check


def expect_rpc_error(fn, code, what):
    import grpc
    try:
        fn()
    except grpc.RpcError as e:
        check(e.code() == code, f"{what}: {e.code().name} ({e.details()})")
        return e.details()
    sys.exit(f"FAIL: {what}: the call succeeded")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    procs = []
    server = None
    try:
        sl.make_pki(work)
        sl.gen_stubs(args.proto_dir, work)
        import grpc
        from gdrbench.v1 import controller_pb2, controller_pb2_grpc, run_pb2, sweep_pb2
        import reflection_pb2, reflection_pb2_grpc, health_pb2, health_pb2_grpc

        p = lambda n: os.path.join(work, n)
        tokens = sl.write_tokens(work)
        server = sl.Server(args.bin_dir, work, [
            "--db", p("store.db"), "--tls-cert", p("server.pem"), "--tls-key", p("server.key"),
            "--tls-client-ca", p("ca.pem"), "--tokens", tokens, "--regression-tolerance", "0.1"])
        creds = grpc.ssl_channel_credentials(open(p("ca.pem"), "rb").read(), open(p("client.key"), "rb").read(),
                                             open(p("client.pem"), "rb").read())
        ch = grpc.secure_channel(server.grpc, creds)
        grpc.channel_ready_future(ch).result(timeout=10)
        stub = controller_pb2_grpc.ControllerStub(ch)
        R = [("authorization", "Bearer " + sl.TOKENS["read"])]
        W = [("authorization", "Bearer " + sl.TOKENS["write"])]

        # Reflection and health.
        refl = reflection_pb2_grpc.ServerReflectionStub(ch)
        resp = list(refl.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]),
                                              timeout=10))
        services = sorted(s.name for s in resp[0].list_services_response.service)
        check("gdrbench.v1.Controller" in services and "grpc.health.v1.Health" in services,
              f"reflection lists {services}")
        h = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
        check(h.status == health_pb2.HealthCheckResponse.SERVING, "health SERVING")

        # Tokens and client certificates.
        expect_rpc_error(lambda: stub.ListRuns(controller_pb2.ListRunsRequest(), timeout=5),
                         grpc.StatusCode.UNAUTHENTICATED, "no token refused")
        expect_rpc_error(lambda: stub.ListRuns(controller_pb2.ListRunsRequest(), timeout=5,
                                               metadata=[("authorization", "Bearer wrong-token-0123456789")]),
                         grpc.StatusCode.UNAUTHENTICATED, "unknown token refused")
        base = sl.make_run(run_pb2, sweep_pb2, "base-1", 0)
        expect_rpc_error(lambda: stub.UploadRun(sl.chunks(run_pb2, controller_pb2, base), timeout=10, metadata=R),
                         grpc.StatusCode.PERMISSION_DENIED, "read token cannot upload")
        bare = grpc.secure_channel(server.grpc, grpc.ssl_channel_credentials(open(p("ca.pem"), "rb").read()))
        expect_rpc_error(lambda: controller_pb2_grpc.ControllerStub(bare).ListRuns(
            controller_pb2.ListRunsRequest(), timeout=5, metadata=R),
            grpc.StatusCode.UNAVAILABLE, "gRPC client without a certificate refused (mTLS)")

        # Upload, idempotent; a malformed upload changes nothing.
        up = stub.UploadRun(sl.chunks(run_pb2, controller_pb2, base), timeout=30, metadata=W)
        check(up.run_id == "base-1" and not up.already_stored and up.cells == 24 and up.pairs == 12,
              f"UploadRun stored base-1 ({up.cells} cells, {up.pairs} pairs)")
        again = stub.UploadRun(sl.chunks(run_pb2, controller_pb2, base), timeout=30, metadata=W)
        check(again.already_stored, "the same run id again: already_stored")
        bad = sl.make_run(run_pb2, sweep_pb2, "bad-1", 1)
        bad.matrices[1].cells[5].dst = 17
        msg = expect_rpc_error(lambda: stub.UploadRun(sl.chunks(run_pb2, controller_pb2, bad), timeout=30, metadata=W),
                               grpc.StatusCode.INVALID_ARGUMENT, "cell naming node 17 of 4 rejected")
        check("is not a node index of the matrix" in msg, f"the sentence says why: {msg}")
        # A pair chunk that is not one (its last 3 bytes cut off), sent as raw bytes: the server
        # takes pair chunks as they came, unparsed, and must refuse it with the reason.
        from google.protobuf.internal.encoder import _VarintBytes
        raw_upload = ch.stream_unary("/gdrbench.v1.Controller/UploadRun", request_serializer=lambda b: b,
                                     response_deserializer=controller_pb2.UploadRunResponse.FromString)
        cut = sl.make_run(run_pb2, sweep_pb2, "cut-1", 1)
        pieces = [c.SerializeToString() for c in sl.chunks(run_pb2, controller_pb2, cut)]
        short = controller_pb2.PairChunk(pairs=cut.pairs).SerializeToString()[:-3]
        pieces[-1] = _VarintBytes(3 << 3 | 2) + _VarintBytes(len(short)) + short  # RunChunk.pairs
        msg = expect_rpc_error(lambda: raw_upload(iter(pieces), timeout=30, metadata=W),
                               grpc.StatusCode.INVALID_ARGUMENT, "a pair chunk cut short rejected")
        check("not a serialized gdrbench.v1.PairChunk" in msg, f"the sentence says why: {msg}")
        listed = stub.ListRuns(controller_pb2.ListRunsRequest(), timeout=5, metadata=R)
        check([r.run_id for r in listed.runs] == ["base-1"], "the malformed uploads stored nothing")
        expect_rpc_error(lambda: stub.ListRuns(controller_pb2.ListRunsRequest(page_size=5000), timeout=5, metadata=R),
                         grpc.StatusCode.INVALID_ARGUMENT, "page_size 5000 rejected")
        expect_rpc_error(lambda: stub.GetRun(controller_pb2.GetRunRequest(run_id="no such"), timeout=5, metadata=R),
                         grpc.StatusCode.INVALID_ARGUMENT, "a run id with a space rejected")

        # Baseline, then a run with one slow link: that link regresses, nothing else.
        bl = stub.SetBaseline(controller_pb2.SetBaselineRequest(run_id="base-1"), timeout=5, metadata=W)
        check(bl.cluster == "lab" and bl.run_id == "base-1" and bl.set_by == "ci", "SetBaseline by the write token")
        slow = sl.make_run(run_pb2, sweep_pb2, "slow-2", 1, slow=(2, 3, 150.0))
        up2 = stub.UploadRun(sl.chunks(run_pb2, controller_pb2, slow), timeout=30, metadata=W)
        rep = {r.reference: r for r in up2.regressions}
        b = rep[run_pb2.REGRESSION_REFERENCE_BASELINE]
        check(len(b.regressions) == 1 and b.regressions[0].subject == "node2->node3"
              and b.regressions[0].kind == run_pb2.REGRESSION_KIND_LINK,
              f"only node2->node3 regressed against the baseline: {b.summary}")
        got = stub.GetRun(controller_pb2.GetRunRequest(run_id="slow-2"), timeout=5, metadata=R)
        check(len(got.regressions) == 2 and len(got.pairs) == 0 and len(got.matrices[0].cells) == 0,
              "GetRun: the header with its regressions")
        full = stub.GetRun(controller_pb2.GetRunRequest(run_id="slow-2", view=controller_pb2.RUN_VIEW_FULL),
                           timeout=5, metadata=R)
        check(len(full.pairs) == 12 and sum(len(m.cells) for m in full.matrices) == 24, "GetRun FULL: the whole run")
        trend = stub.GetLinkTrend(controller_pb2.LinkTrendRequest(cluster="lab", src="node2", dst="node3"),
                                  timeout=5, metadata=R)
        check([round(t.bw_avg_gbps) for t in trend.points] == [376 + (2 * 7 + 3 * 13) % 12, 150],
              f"link trend node2->node3: {[t.bw_avg_gbps for t in trend.points]}")
        cmp = stub.CompareRuns(controller_pb2.CompareRunsRequest(a="base-1", b="slow-2"), timeout=5, metadata=R)
        check(cmp.compared == 24 and cmp.dropped == 2 and cmp.changed[0].src == "node2",
              f"CompareRuns: {cmp.dropped} dropped of {cmp.compared}")
        expect_rpc_error(lambda: stub.SubmitSweep(controller_pb2.SubmitSweepRequest(cluster="lab"), timeout=5,
                                                  metadata=W),
                         grpc.StatusCode.FAILED_PRECONDITION, "SubmitSweep for a cluster without inventory")

        # REST with curl.
        url = "https://" + server.http.replace("127.0.0.1", "localhost")
        ca = p("ca.pem")
        code, body = sl.curl(url + "/api/v1/runs?cluster=lab", token=sl.TOKENS["read"], cacert=ca, expect=200)
        check([r["runId"] for r in body["runs"]] == ["slow-2", "base-1"], "GET /api/v1/runs, newest first")
        check(body["runs"][0]["baselineRegressions"] == 1 and body["runs"][1]["isBaseline"],
              "run summaries in protobuf's JSON mapping")
        code, body = sl.curl(url + "/api/v1/runs", cacert=ca)
        check(code == 401 and body["error"]["status"] == "UNAUTHENTICATED", "REST without a token: 401")
        code, body = sl.curl(url + "/api/v1/runs", token="nope-nope-nope-nope", cacert=ca)
        check(code == 401, "REST with an unknown token: 401")
        code, body = sl.curl(url + "/api/v1/runs", token=sl.TOKENS["read"], method="POST",
                             data=json.dumps({"runId": "x"}), cacert=ca)
        check(code == 403 and "read role" in body["error"]["message"], "REST upload with a read token: 403")
        code, body = sl.curl(url + "/api/v1/runs", token=sl.TOKENS["write"], method="POST", data="{not json",
                             cacert=ca)
        check(code == 400 and "not a JSON gdrbench.v1.Run" in body["error"]["message"],
              f"REST malformed JSON: 400 ({body['error']['message'][:80]})")
        code, body = sl.curl(url + "/api/v1/runs?colour=red", token=sl.TOKENS["read"], cacert=ca)
        check(code == 400 and "unknown parameter 'colour'" in body["error"]["message"], "REST unknown parameter: 400")
        from google.protobuf import json_format
        third = sl.make_run(run_pb2, sweep_pb2, "rest-3", 2)
        code, body = sl.curl(url + "/api/v1/runs", token=sl.TOKENS["write"], method="POST",
                             data=json_format.MessageToJson(third), cacert=ca)
        check(code == 201 and body["runId"] == "rest-3", "REST upload of a whole run as JSON: 201")
        code, body = sl.curl(url + "/api/v1/runs", token=sl.TOKENS["write"], method="POST",
                             data=json_format.MessageToJson(third), cacert=ca)
        check(code == 200 and body["alreadyStored"], "REST upload again: 200, already stored")
        code, body = sl.curl(url + "/api/v1/runs/slow-2/cells?node=node3&sizeBytes=1048576", token=sl.TOKENS["read"],
                             cacert=ca, expect=200)
        check(len(body["cells"]) == 6, "GET cells of node3 at 1 MiB: 6")
        code, body = sl.curl(url + "/api/v1/compare?a=base-1&b=slow-2&page_size=1", token=sl.TOKENS["read"],
                             cacert=ca, expect=200)
        check(body["dropped"] == "2" and len(body["changed"]) == 1 and body.get("nextPageToken"),
              "GET compare, one per page")
        code, body = sl.curl(url + "/api/v1/clusters/lab/trends/node?node=node2", token=sl.TOKENS["read"],
                             cacert=ca, expect=200)
        check(len(body["points"]) == 3, "GET node trend: one point per run")
        code, body = sl.curl(url + "/api/v1/clusters/lab/baseline", token=sl.TOKENS["write"], method="PUT",
                             data=json.dumps({"runId": "rest-3"}), cacert=ca, expect=200)
        check(body["runId"] == "rest-3", "PUT baseline")
        code, body = sl.curl(url + "/api/v1/clusters/lab/baseline", token=sl.TOKENS["write"], method="PUT",
                             data=json.dumps({"runId": "nope-9"}), cacert=ca)
        check(code == 404, "PUT baseline of an unknown run: 404")
        code, body = sl.curl(url + "/healthz", cacert=ca, expect=200)
        plain = subprocess.run(["curl", "-sS", url.replace("https", "http") + "/api/v1/runs"], capture_output=True)
        check(plain.returncode != 0, f"plaintext HTTP to the TLS port is not served (curl exit {plain.returncode})")

        # Our CLI: a real sweep against two real agents (no RDMA here, so
        # every cell is an ERR: still a run), stored with --server.
        gdr = os.path.join(args.bin_dir, "gdrbench")
        agents, inv = sl.loopback_agents(args.bin_dir, work)
        procs += agents
        with open(p("token"), "w") as f:
            f.write(sl.TOKENS["write"] + "\n")
        srv = ["--server", server.grpc.replace("127.0.0.1", "localhost")]
        tls = ["--server-tls-ca", ca, "--server-tls-cert", p("client.pem"), "--server-tls-key", p("client.key")]
        out = subprocess.run([gdr, "sweep", "--inventory", p("inv.yaml"), "--no-preflight", "--sizes", "64K",
                              "--progress", "none", "--out", p("sweep"), "--cluster", "loop",
                              "--server-token-file", p("token")] + srv + tls,
                             capture_output=True, text=True, timeout=120)
        check(out.returncode == 1 and "stored (2 cells" in out.stdout,
              f"gdrbench sweep --server: exit {out.returncode}: {out.stdout[-600:]} {out.stderr[-600:]}")
        run_json = json.load(open(p("sweep/run.json")))
        check(run_json["cluster"] == "loop" and len(run_json["regressions"]) == 2,
              "the sweep's run.json was rewritten with the server's regressions")
        cli = lambda *a, token="read": subprocess.run(
            [gdr] + list(a) + srv + ["--server-tls-ca", ca, "--server-tls-cert", p("client.pem"), "--server-tls-key", p("client.key"),
                                     "--server-token-file", p(token)], capture_output=True, text=True, timeout=30)
        with open(p("read"), "w") as f:
            f.write(sl.TOKENS["read"] + "\n")
        r = cli("runs", "list", "--cluster", "loop", token="read")
        check(r.returncode == 0 and run_json["run_id"] in r.stdout, "gdrbench runs list")
        r = cli("runs", "show", "slow-2", token="read")
        check(r.returncode == 0 and "node2->node3" in r.stdout, "gdrbench runs show: the regression")
        r = cli("runs", "compare", "base-1", "slow-2", token="read")
        check(r.returncode == 0 and "2 dropped" in r.stdout, "gdrbench runs compare")
        r = cli("baseline", "set", "slow-2", token="read")
        check(r.returncode == 4 and r.stderr.count("\n") == 1 and "read role" in r.stderr,
              f"gdrbench baseline set with a read token: exit {r.returncode} (expected 4), {r.stderr.strip()}")
        r = cli("baseline", "set", "slow-2", token="token")
        check(r.returncode == 0, "gdrbench baseline set")
        r = cli("baseline", "show", "--cluster", "lab", token="read")
        check(r.returncode == 0 and "slow-2" in r.stdout, "gdrbench baseline show")
        # The journal's run is the sweep rebuilt (its own summary and times),
        # not the run the sweep stored: a run id names one run (issue 31).
        r = cli("runs", "upload", p("sweep/journal.bin"), "--cluster", "loop", token="token")
        check(r.returncode == 4 and f"run {run_json['run_id']} was stored at " in r.stderr
              and "with other content" in r.stderr,
              f"gdrbench runs upload JOURNAL of a stored run with other content: exit {r.returncode}, {r.stderr.strip()}")
        # One rule for a field this build does not know, CLI and HTTP alike: refused, named, nothing stored.
        extra = json.load(open(p("sweep/run.json")))
        extra["run_id"] = "extra-field-1"
        extra["pairs"][0]["frobnicate"] = 1
        with open(p("extra.json"), "w") as f:
            json.dump(extra, f)
        r = cli("runs", "upload", p("extra.json"), "--cluster", "loop", token="token")
        check(r.returncode == 2 and "frobnicate: Cannot find field" in r.stderr,
              f"gdrbench runs upload of a run with an unknown field: exit {r.returncode}, {r.stderr.strip()}")
        code, body = sl.curl(url + "/api/v1/runs", token=sl.TOKENS["write"], method="POST",
                             data=json.dumps(extra), cacert=ca)
        check(code == 400 and "frobnicate: Cannot find field" in body["error"]["message"],
              f"REST upload of a run with an unknown field: {code} ({body['error']['message'][:120]})")
        r = cli("runs", "show", "extra-field-1", token="read")
        check(r.returncode == 4 and "not stored" in r.stderr, f"the run with the unknown field was not stored: {r.stderr}")
        r = cli("runs", "upload", p("sweep/run.json"), "--cluster", "loop", token="token")
        check(r.returncode == 0 and "already stored" in r.stdout,
              f"gdrbench runs upload of the same run: idempotent by run id ({r.stdout.strip()})")
        check(server.stop() == 0, "SIGTERM: the server stops cleanly")
        server = None
        print("1 passed, 0 failed")
    finally:
        for pr in procs:
            pr.terminate()
            pr.wait()
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
