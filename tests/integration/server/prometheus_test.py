#!/usr/bin/python3
"""/metrics against the tools that read it: `promtool check metrics` finds
nothing to lint, and a real Prometheus (Debian's prometheus 2.42, its own
temporary config and data folder, loopback only) scrapes the server over TLS
with a bearer token; the values are read back through Prometheus' HTTP query
API (https://prometheus.io/docs/prometheus/latest/querying/api/)."""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import serverlib as sl
from serverlib import check


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    server = prom = None
    try:
        sl.make_pki(work)
        sl.gen_stubs(args.proto_dir, work)
        import grpc
        from gdrbench.v1 import controller_pb2, controller_pb2_grpc, run_pb2, sweep_pb2, preflight_pb2
        p = lambda n: os.path.join(work, n)
        server = sl.Server(args.bin_dir, work, ["--db", p("store.db"), "--tls-cert", p("server.pem"),
                                                "--tls-key", p("server.key"), "--tokens", sl.write_tokens(work)])
        ch = grpc.secure_channel(server.grpc, grpc.ssl_channel_credentials(open(p("ca.pem"), "rb").read()))
        stub = controller_pb2_grpc.ControllerStub(ch)
        W = [("authorization", "Bearer " + sl.TOKENS["write"])]
        base = sl.make_run(run_pb2, sweep_pb2, "base-1", 0)
        stub.UploadRun(sl.chunks(run_pb2, controller_pb2, base), timeout=30, metadata=W)
        stub.SetBaseline(controller_pb2.SetBaselineRequest(run_id="base-1"), timeout=5, metadata=W)
        slow = sl.make_run(run_pb2, sweep_pb2, "slow-2", 1, slow=(2, 3, 150.0))
        rep = slow.preflight.add(hostname="node1", overall=preflight_pb2.CHECK_STATUS_FAIL)
        rep.checks.add(id="peermem_loaded", status=preflight_pb2.CHECK_STATUS_FAIL)
        rep.checks.add(id="driver_version", status=preflight_pb2.CHECK_STATUS_PASS)
        stub.UploadRun(sl.chunks(run_pb2, controller_pb2, slow), timeout=30, metadata=W)

        url = "https://" + server.http.replace("127.0.0.1", "localhost")
        code, text = sl.curl(url + "/metrics", token=sl.TOKENS["read"], cacert=p("ca.pem"), expect=200)
        lint = subprocess.run(["promtool", "check", "metrics"], input=text.encode(), capture_output=True)
        check(lint.returncode == 0 and not lint.stdout.strip() and not lint.stderr.strip(),
              f"promtool check metrics is clean ({lint.stdout.decode()}{lint.stderr.decode()})")
        series = [l for l in text.splitlines() if l and not l.startswith("#")]
        check(len(series) < 100, f"{len(series)} series for 4 nodes x 1 rail (O(nodes x rails))")
        code, _ = sl.curl(url + "/metrics", cacert=p("ca.pem"))
        check(code == 401, "/metrics without a token: 401")

        # A real Prometheus scrapes it.
        with open(p("token.read"), "w") as f:
            f.write(sl.TOKENS["read"])
        prom_port = free_port()
        with open(p("prometheus.yml"), "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gdrbench
    scheme: https
    tls_config:
      ca_file: {p('ca.pem')}
      server_name: localhost
    authorization:
      type: Bearer
      credentials_file: {p('token.read')}
    static_configs:
      - targets: ['{server.http}']
""")
        prom = subprocess.Popen(["prometheus", f"--config.file={p('prometheus.yml')}",
                                 f"--storage.tsdb.path={p('tsdb')}", f"--web.listen-address=127.0.0.1:{prom_port}",
                                 "--log.level=warn"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=open(p("prometheus.log"), "w"))

        def query(q):
            u = f"http://127.0.0.1:{prom_port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
            with urllib.request.urlopen(u, timeout=5) as r:
                body = json.load(r)
            return {json.dumps(x["metric"], sort_keys=True): float(x["value"][1]) for x in body["data"]["result"]}

        deadline = time.time() + 60
        got = {}
        while time.time() < deadline:
            try:
                got = query('gdrbench_last_run_passed{cluster="lab"}')
                if got:
                    break
            except OSError:
                pass
            if prom.poll() is not None:
                sys.exit("FAIL: prometheus exited: " + open(p("prometheus.log")).read())
            time.sleep(0.5)
        check(list(got.values()) == [0.0], f"Prometheus read gdrbench_last_run_passed{{cluster=lab}} = {got}")
        up = query('up{job="gdrbench"}')
        check(list(up.values()) == [1.0], "the scrape target is up (TLS + bearer token)")
        regs = query('gdrbench_last_run_regressions{cluster="lab",reference="baseline"}')
        check(list(regs.values()) == [1.0], "one regression against the baseline")
        streak = query('gdrbench_finding_streak{cluster="lab",reference="baseline"}')
        check([(json.loads(k)["kind"], v) for k, v in streak.items()] == [("link", 1.0)],
              f"the regression's streak, naming the link: first seen (1): {streak}")
        bw = query('gdrbench_node_write_bandwidth_bytes_per_second{cluster="lab",node="node2",rail="0",direction="tx"}')
        # node2 as initiator at 1 MiB: to node0 378, to node1 379, to node3 150 (the slow link): median 378 Gb/s.
        check(list(bw.values()) == [378e9 / 8], f"node2 tx median = 378 Gb/s in bytes/s: {bw}")
        pf = query('gdrbench_preflight_check_failed{cluster="lab",node="node1"}')
        check([json.loads(k)["check"] for k in pf] == ["peermem_loaded"], "the failing preflight check per node")
        count = query('count({__name__=~"gdrbench_.*"})')
        print("series scraped:", list(count.values()))
        print("1 passed, 0 failed")
    finally:
        if prom is not None:
            prom.terminate()
            prom.wait(timeout=20)
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
