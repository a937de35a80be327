#!/usr/bin/python3
"""The JSON a user reads, before and after a refactor (issue 27, acceptance):
on fixed inputs, the content of

  1. `gdrbench sweep --dry-run --json` (the plan of the sweep below),
  2. the run.json that sweep writes, and
  3. `GET /api/v1/runs/ID?view=RUN_VIEW_FULL` of a real gdrbench-server
     (loopback, SQLite, plaintext with tokens) after that run.json is
     POSTed to /api/v1/runs

is compared, parsed (content, not key order), with the goldens in
tests/testdata/golden/ (their README says which commit wrote them).

The sweep is real end to end: the shipped CLI over gRPC to three
simulated agents (tests/integration/fleet: the shipped agent service, its
data path on the unit tests' fake NIC, whose clock is simulated, so the
bandwidths are the same every run), each the captured DGX H100 tree, one
rail (mlx5_0), out-of-band connection, host memory, 64 KiB and 1 MiB.

What differs from run to run is masked, in both the output and the golden
(the key stays, its value becomes "<masked: why>"; a key added, removed or
renamed, a value changed anywhere else, fails):
  - run_id / runId, and the journal file named after it: drawn from the
    clock and a random suffix per run;
  - every timestamp (*_at / *At): the wall clock;
  - every duration_ns / interval_ns (camelCase too): wall-clock time of RPCs,
    preflight checks and counter samples;
  - params.seed: the verify seed drawn per run (issue 34);
  - agent_address / address: the loopback ports the simulated agents got from
    the kernel, and the dry-run's fingerprint, which hashes them (the plan's
    fingerprint on fixed addresses is controller.sweep_dry_run_golden's);
  - software.kernel: the simulated agents read this machine's uname -r.
Nodes' `gpus` and `gpus_absent_reason` are dropped from both sides: the
simulated agents ask this machine's CUDA driver (none on CI; GPUs on a GPU
machine), not the captured tree.

  golden_json_test.py --bin-dir B --tests-bin T --source-dir S --work-dir W [--capture]
--capture writes the goldens instead of comparing (see the README there)."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "server"))
import serverlib as sl  # noqa: E402

MASKS = [
    (re.compile(r"^(run_id|runId)$"), "run id: the clock and a random suffix"),
    (re.compile(r"(_at|At)$"), "a timestamp"),
    (re.compile(r"^(duration_ns|durationNs|interval_ns|intervalNs)$"), "wall-clock time"),
    (re.compile(r"^seed$"), "the verify seed drawn per run"),
    (re.compile(r"^(agent_address|agentAddress|address)$"), "a loopback port the kernel chose"),
    (re.compile(r"^fingerprint$"), "the plan's hash, which mixes in the agents' addresses"),
    (re.compile(r"^kernel$"), "this machine's uname -r (node info reads the live kernel)"),
]
DROPPED = {"gpus", "gpus_absent_reason", "gpusAbsentReason"}
SWEEP = ["--cm", "oob", "--memory", "host", "--sizes", "64K,1M", "--iterations", "100", "--retries", "0",
         "--retest-low", "0"]


def normalise(x, key=""):
    if isinstance(x, dict):
        return {k: normalise(v, k) for k, v in x.items() if k not in DROPPED}
    if isinstance(x, list):
        return [normalise(v, key) for v in x]
    for pattern, why in MASKS:
        if pattern.search(key):
            return f"<masked: {why}>"
    return x


def diff(want, got, path="$", out=None):
    """Every difference, as a path and both values (at most 40)."""
    out = [] if out is None else out
    if type(want) is not type(got):
        out.append(f"{path}: {json.dumps(want)[:120]} -> {json.dumps(got)[:120]}")
    elif isinstance(want, dict):
        for k in sorted(set(want) | set(got)):
            if k not in got:
                out.append(f"{path}.{k}: removed (was {json.dumps(want[k])[:80]})")
            elif k not in want:
                out.append(f"{path}.{k}: added ({json.dumps(got[k])[:80]})")
            else:
                diff(want[k], got[k], f"{path}.{k}", out)
    elif isinstance(want, list):
        if len(want) != len(got):
            out.append(f"{path}: {len(want)} elements -> {len(got)}")
        for i, (a, b) in enumerate(zip(want, got)):
            diff(a, b, f"{path}[{i}]", out)
    elif want != got:
        out.append(f"{path}: {json.dumps(want)[:120]} -> {json.dumps(got)[:120]}")
    return out


class Fleet:
    """Three simulated agents, plaintext, and an inventory naming them with
    one rail (the fleet's inventory plus tls and rails)."""

    def __init__(self, tests_bin, source_dir, work):
        self.inv_out = os.path.join(work, "fleet.yaml")
        self.log = os.path.join(work, "fleet.log")
        # cwd = the source tree, so preflight's fs_root reads the same relative path on every machine.
        self.proc = subprocess.Popen(
            [os.path.join(tests_bin, "gdrbench-sim-fleet"), "--members", "3", "--insecure",
             "--fs-root", "tests/testdata/preflight/dgx-h100", "--inventory-out", self.inv_out],
            cwd=source_dir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        deadline = time.time() + 30
        while not os.path.exists(self.inv_out):
            if self.proc.poll() is not None or time.time() > deadline:
                sys.exit("FAIL: the simulated fleet did not start: " + open(self.log).read()[-2000:])
            time.sleep(0.05)
        self.inventory = os.path.join(work, "inv.yaml")
        with open(self.inventory, "w") as f:
            f.write(open(self.inv_out).read())
            f.write("tls: {insecure: true}\nrails:\n  - {nic: mlx5_0, gpu: 0}\n")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def run_cli(gdr, args, cwd):
    r = subprocess.run([gdr] + args, cwd=cwd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"FAIL: gdrbench {' '.join(args)} exited {r.returncode}: {r.stderr[-1500:]}")
    return r.stdout


def produce(args, work):
    """The three JSON documents, parsed, from this build."""
    gdr = os.path.join(args.bin_dir, "gdrbench")
    fleet = Fleet(args.tests_bin, args.source_dir, work)
    server = None
    try:
        plan = json.loads(run_cli(gdr, ["sweep", "--inventory", fleet.inventory] + SWEEP + ["--dry-run", "--json"],
                                  args.source_dir))
        out = os.path.join(work, "run")
        run_cli(gdr, ["sweep", "--inventory", fleet.inventory] + SWEEP + ["--progress", "none", "--out", out],
                args.source_dir)
        run_json = open(os.path.join(out, "run.json")).read()
        run = json.loads(run_json)
        server = sl.Server(args.bin_dir, work, ["--db", os.path.join(work, "store.db"), "--insecure",
                                                "--no-dashboard", "--tokens", sl.write_tokens(work)])
        url = "http://" + server.http
        sl.curl(url + "/api/v1/runs", token=sl.TOKENS["write"], method="POST", data=run_json, expect=201)
        _, api = sl.curl(f"{url}/api/v1/runs/{run['run_id']}?view=RUN_VIEW_FULL", token=sl.TOKENS["read"],
                         expect=200)
        return {"dry_run_plan.json": plan, "run.json": run, "api_run.json": api}
    finally:
        if server:
            server.stop()
        fleet.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--tests-bin", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--golden-dir", help="default: SOURCE/tests/testdata/golden")
    ap.add_argument("--capture", action="store_true", help="write the goldens instead of comparing")
    args = ap.parse_args()
    golden = args.golden_dir or os.path.join(args.source_dir, "tests/testdata/golden")
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    try:
        docs = {name: normalise(doc) for name, doc in produce(args, work).items()}
        if args.capture:
            os.makedirs(golden, exist_ok=True)
            for name, doc in docs.items():
                with open(os.path.join(golden, name), "w") as f:
                    json.dump(doc, f, indent=1, sort_keys=True)
                    f.write("\n")
                print("wrote", os.path.join(golden, name))
            return
        failed = False
        for name, doc in docs.items():
            want = json.load(open(os.path.join(golden, name)))
            d = diff(want, doc)
            if d:
                failed = True
                print(f"FAIL: {name} differs from tests/testdata/golden/{name} ({len(d)} difference(s)):")
                for line in d[:40]:
                    print("  " + line)
            else:
                print(f"ok: {name} matches its golden")
        if failed:
            sys.exit("FAIL: the JSON changed (an intended change: recapture, see tests/testdata/golden/README.md)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
