#!/usr/bin/python3
"""Counts that agree (issue 32, item 2): for a real failed lab run and a real passing one
(tests/testdata/runs, README there: each the whole run.json a real sweep wrote),
`gdrbench report run` writes the reports again and every output is read back here on its
own terms, not through the code that wrote it:
  - run.json: the cells of each rail's largest size (the verdict size) and their verdicts;
  - stdout's summary line and summary.md's first line: "N/M cells pass; K low";
  - junit.xml: valid against Jenkins' junit-10.xsd (tests/testdata/junit, xmllint), its
    attributes equal to the elements it holds, one case per cell, a failure per cell that
    did not pass;
  - pairs.csv (Python's csv): the verdict column at the verdict size, a reading that a retest
    replaced naming that round instead of a verdict;
  - gdrbench-server's /metrics after the run is uploaded (the Prometheus text format,
    parsed here): gdrbench_last_run_cells{verdict="low"} and {verdict="all"}.
Usage: report_counts_test.py BIN_DIR SOURCE_DIR WORK_DIR"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "server"))
import serverlib as sl  # noqa: E402
from serverlib import check  # noqa: E402


def from_run(run):
    """(cells, pass, low, other) at each rail's verdict size, and all cells of all sizes."""
    largest = {}
    for m in run["matrices"]:
        key = (m.get("rail", 0), m.get("dst_rail", m.get("rail", 0)))
        largest[key] = max(largest.get(key, 0), int(m["size_bytes"]))
    counts = {"cells": 0, "pass": 0, "low": 0, "other": 0, "all": 0}
    for m in run["matrices"]:
        counts["all"] += len(m.get("cells", []))
        key = (m.get("rail", 0), m.get("dst_rail", m.get("rail", 0)))
        if int(m["size_bytes"]) != largest[key]:
            continue
        for c in m.get("cells", []):
            counts["cells"] += 1
            v = c.get("verdict", "")
            counts[v if v in ("pass", "low") else "other"] += 1
    return counts, largest


def summary_counts(line):
    m = re.search(r"(\d+)/(\d+) cells pass(?:; (\d+) low)?", line)
    check(m is not None, f"'N/M cells pass' in {line!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def junit_counts(path, xsd):
    v = subprocess.run(["xmllint", "--noout", "--schema", xsd, path], capture_output=True, text=True)
    check(v.returncode == 0, f"junit.xml valid against junit-10.xsd: {v.stderr.strip()[-400:]}")
    root = ET.parse(path).getroot()
    suites = [root] + root.findall("testsuite")
    cases = root.findall(".//testcase")
    held = {"tests": len(cases), "failures": len(root.findall(".//failure")),
            "errors": len(root.findall(".//error"))}
    for el in suites:
        for k, n in held.items():
            check(int(el.get(k)) == n, f"<{el.tag}> {k}={el.get(k)}, as many as it holds ({n})")
    return held


def metrics_for(bin_dir, work, run_path):
    with tempfile.TemporaryDirectory(dir=work) as d:
        server = sl.Server(bin_dir, d, ["--db", os.path.join(d, "store.db"), "--insecure", "--no-dashboard",
                                        "--tokens", sl.write_tokens(d)], name="counts")
        try:
            with open(os.path.join(d, "tok"), "w") as f:
                f.write(sl.TOKENS["write"] + "\n")
            up = subprocess.run([os.path.join(bin_dir, "gdrbench"), "runs", "upload", run_path, "--cluster", "lab",
                                 "--server", server.grpc, "--server-insecure", "--server-token-file", os.path.join(d, "tok")],
                                capture_output=True, text=True, timeout=60)
            check(up.returncode == 0, f"runs upload {run_path}: {up.returncode} {up.stderr.strip()}")
            code, text = sl.curl(f"http://{server.http}/metrics", token=sl.TOKENS["read"])
            check(code == 200, f"/metrics: {code}")
        finally:
            server.stop()
    values = {}
    for line in text.splitlines():
        m = re.match(r'gdrbench_last_run_cells\{cluster="lab",verdict="(\w+)"\} (\S+)$', line)
        if m:
            values[m.group(1)] = float(m.group(2))
    return values


def main():
    bin_dir, src, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    xsd = os.path.join(src, "tests", "testdata", "junit", "junit-10.xsd")
    for name, passed in (("slurm-lab-node4.json", False), ("lab-demo-4node.json", True)):
        path = os.path.join(src, "tests", "testdata", "runs", name)
        run = json.load(open(path))
        want, largest = from_run(run)
        out = tempfile.mkdtemp(dir=work)
        r = subprocess.run([os.path.join(bin_dir, "gdrbench"), "report", "run", path, "--out", out],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == (0 if passed else 1), f"{name}: report run exit {r.returncode}, {r.stderr.strip()}")
        lines = [line for line in r.stdout.splitlines() if "cells pass" in line]
        check(len(lines) == 1, f"{name}: one summary line on stdout, got {lines}")
        got = summary_counts(lines[0])
        check(got == (want["pass"], want["cells"], want["low"]),
              f"{name}: stdout {got} vs run.json (pass, cells, low) {(want['pass'], want['cells'], want['low'])}")
        md = open(os.path.join(out, "summary.md")).read().splitlines()
        first = next(line for line in md if "cells pass" in line)
        check(summary_counts(first) == got, f"{name}: summary.md {summary_counts(first)} vs stdout {got}")
        j = junit_counts(os.path.join(out, "junit.xml"), xsd)
        check(j["tests"] == want["cells"] and j["failures"] + j["errors"] == want["cells"] - want["pass"],
              f"{name}: junit {j} vs {want['cells']} cells, {want['pass']} pass")
        rows = list(csv.DictReader(open(os.path.join(out, "pairs.csv"), newline="")))
        at_verdict = [row for row in rows if int(row["size_bytes"]) == largest.get(
            (int(row["rail"]), int(row["dst_rail"])), -1) and row["memory"] == rows[0]["memory"]]
        counted = [row for row in at_verdict if not row["superseded_by_round"]]
        verdicts = [row["verdict"] for row in counted]
        check(len(counted) == want["cells"] and verdicts.count("pass") == want["pass"]
              and verdicts.count("low") == want["low"],
              f"{name}: pairs.csv at the verdict size: {len(counted)} readings counted, "
              f"{verdicts.count('pass')} pass, {verdicts.count('low')} low; run.json {want}")
        check(all(row["verdict"] == "" for row in at_verdict if row["superseded_by_round"]),
              f"{name}: no superseded reading carries a verdict")
        metrics = metrics_for(bin_dir, work, path)
        check(metrics.get("low") == want["low"] and metrics.get("all") == want["all"],
              f"{name}: /metrics {metrics} vs run.json low {want['low']}, all {want['all']}")
        print(f"ok: {name}: {want['pass']}/{want['cells']} pass, {want['low']} low in stdout, summary.md, "
              f"junit.xml (valid), pairs.csv ({len(at_verdict) - len(counted)} superseded readings) and /metrics")


if __name__ == "__main__":
    main()
