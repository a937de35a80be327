#!/usr/bin/python3
"""Issue 32, Why 8: the API's and CLI's rough edges, against a real
gdrbench-server (plaintext, with tokens) and the lab's published run
(tests/testdata/runs/lab-demo-4node.json):
  - an empty GET /api/v1/runs is {"runs": []}, not the {} proto3 JSON prints;
  - an unknown route is a JSON 404 naming the route;
  - re-uploading a run says under which cluster it is stored (it used to
    print "already stored (0 cells, 0 pairs)"); under another --cluster the
    server refuses it naming the change;
  - `baseline show` without --cluster picks the server's only cluster, as
    `report capacity` does."""
import argparse
import os
import shutil
import subprocess
import tempfile

import serverlib as sl
from serverlib import check


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    server = None
    try:
        p = lambda n: os.path.join(work, n)
        server = sl.Server(args.bin_dir, work, ["--db", p("store.db"), "--insecure", "--tokens", sl.write_tokens(work)])
        url = "http://" + server.http
        for role in ("read", "write"):
            with open(p(role), "w") as f:
                f.write(sl.TOKENS[role] + "\n")
        gdr = os.path.join(args.bin_dir, "gdrbench")
        cli = lambda *a, token="read": subprocess.run(
            [gdr] + list(a) + ["--server", server.grpc, "--server-insecure", "--server-token-file", p(token)],
            capture_output=True, text=True, timeout=30)

        code, body = sl.curl(url + "/api/v1/runs", token=sl.TOKENS["read"])
        check(code == 200 and body == {"runs": []}, f"GET /api/v1/runs on an empty store: {code} {body}")
        code, body = sl.curl(url + "/api/v1/nosuch?x=1", token=sl.TOKENS["read"])
        check(code == 404 and isinstance(body, dict) and body["error"]["code"] == 404
              and body["error"]["message"] == "no route GET /api/v1/nosuch",
              f"an unknown route: JSON 404 naming it ({code} {body})")

        run = os.path.join(args.source_dir, "tests/testdata/runs/lab-demo-4node.json")
        r = cli("runs", "upload", run, "--cluster", "lab", token="write")
        check(r.returncode == 0 and " stored (" in r.stdout, f"upload under lab: {r.stdout.strip()} {r.stderr.strip()}")
        r = cli("runs", "upload", run, "--cluster", "lab", token="write")
        check(r.returncode == 0 and "was already stored under cluster 'lab'; nothing changed" in r.stdout
              and "0 cells" not in r.stdout,
              f"re-upload says where the run is, not '0 cells': {r.stdout.strip()} {r.stderr.strip()}")
        r = cli("runs", "upload", run, "--cluster", "other", token="write")
        check(r.returncode != 0 and 'cluster: "lab" -> "other"' in r.stderr,
              f"re-upload under another cluster is refused naming the change: {r.returncode} {r.stderr.strip()}")
        code, body = sl.curl(url + "/api/v1/runs?cluster=other", token=sl.TOKENS["read"])
        check(code == 200 and body == {"runs": []}, f"nothing stored under 'other': {body}")

        r = cli("baseline", "set", "20261201-110920-19cf", token="write")
        check(r.returncode == 0, f"baseline set: {r.stdout.strip()} {r.stderr.strip()}")
        r = cli("baseline", "show")
        check(r.returncode == 0 and "baseline of lab: 20261201-110920-19cf" in r.stdout,
              f"baseline show without --cluster picks the only cluster: {r.returncode} {r.stdout.strip()} "
              f"{r.stderr.strip()}")
        check(server.stop() == 0, "SIGTERM: the server stops cleanly")
        server = None
        print("1 passed, 0 failed")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
