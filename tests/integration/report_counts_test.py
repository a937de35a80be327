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
Usage: report_counts_test.py BIN_DIR SOURCE_DIR WORK_DIR
The same checks on the reports a sweep wrote (lab.quickstart, a passing sweep and one whose nodes
were left out for three causes), plus, for each cause, that it is said once with its count and
nodes, that its nodes' tests are "not run" and that they have no bandwidth series:
       report_counts_test.py --sweep-out BIN_DIR SOURCE_DIR WORK_DIR OUT STDOUT PASSED [CAUSE=N1,N2 ...]"""
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
    counts = {"cells": 0, "pass": 0, "low": 0, "other": 0, "all": 0, "not_run": 0,
              "left_out": len(run.get("excluded_nodes", []))}
    for m in run["matrices"]:
        counts["all"] += len(m.get("cells", []))
        key = (m.get("rail", 0), m.get("dst_rail", m.get("rail", 0)))
        if int(m["size_bytes"]) != largest[key]:
            continue
        for c in m.get("cells", []):
            counts["cells"] += 1
            v = c.get("verdict", "")
            counts[v if v in ("pass", "low") else "other"] += 1
            counts["not_run"] += c.get("status") == "RESULT_STATUS_SKIPPED"  # its node was left out
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
            "errors": len(root.findall(".//error")), "skipped": len(root.findall(".//skipped"))}
    for el in suites:
        for k, n in held.items():
            if k == "skipped" and el.tag == "testsuites":
                continue  # junit-10.xsd allows no skipped= on <testsuites> (Jenkins' schema)
            check(int(el.get(k, 0)) == n, f"<{el.tag}> {k}={el.get(k)}, as many as it holds ({n})")
    return held


def metrics_for(bin_dir, work, run_path):
    """The run uploaded to a fresh gdrbench-server: its cell counts in /metrics, the nodes that have
    a bandwidth series there, and what `gdrbench runs show` prints of it."""
    run_id = json.load(open(run_path))["run_id"]
    with tempfile.TemporaryDirectory(dir=work) as d:
        server = sl.Server(bin_dir, d, ["--db", os.path.join(d, "store.db"), "--insecure", "--no-dashboard",
                                        "--tokens", sl.write_tokens(d)], name="counts")
        try:
            with open(os.path.join(d, "tok"), "w") as f:
                f.write(sl.TOKENS["write"] + "\n")
            conn = ["--server", server.grpc, "--server-insecure", "--server-token-file", os.path.join(d, "tok")]
            gdr = os.path.join(bin_dir, "gdrbench")
            up = subprocess.run([gdr, "runs", "upload", run_path, "--cluster", "lab"] + conn,
                                capture_output=True, text=True, timeout=60)
            check(up.returncode == 0, f"runs upload {run_path}: {up.returncode} {up.stderr.strip()}")
            code, text = sl.curl(f"http://{server.http}/metrics", token=sl.TOKENS["read"])
            check(code == 200, f"/metrics: {code}")
            show = subprocess.run([gdr, "runs", "show", run_id] + conn, capture_output=True, text=True, timeout=60)
            check(show.returncode == 0, f"runs show {run_id}: {show.returncode} {show.stderr.strip()}")
        finally:
            server.stop()
    values, bw_nodes = {}, set()
    for line in text.splitlines():
        m = re.match(r'gdrbench_last_run_cells\{cluster="lab",verdict="(\w+)"\} (\S+)$', line)
        if m:
            values[m.group(1)] = float(m.group(2))
        m = re.match(r'gdrbench_node_write_bandwidth_bytes_per_second\{([^}]*)\}', line)
        if m:
            bw_nodes.update(re.findall(r'node="([^"]*)"', m.group(1)))
    return values, bw_nodes, show.stdout


def check_reports(bin_dir, work, xsd, name, run_path, out, stdout):
    """Every output of one run read back on its own terms and compared with run.json's cells; the
    counts of the run as (run.json counts, /metrics bandwidth nodes, runs show text)."""
    run = json.load(open(run_path))
    want, largest = from_run(run)
    lines = [line for line in stdout.splitlines() if "cells pass" in line]
    check(len(lines) == 1, f"{name}: one summary line on stdout, got {lines}")
    got = summary_counts(lines[0])
    check(got == (want["pass"], want["cells"], want["low"]),
          f"{name}: stdout {got} vs run.json (pass, cells, low) {(want['pass'], want['cells'], want['low'])}")
    md = open(os.path.join(out, "summary.md")).read().splitlines()
    first = next(line for line in md if "cells pass" in line)
    check(summary_counts(first) == got, f"{name}: summary.md {summary_counts(first)} vs stdout {got}")
    j = junit_counts(os.path.join(out, "junit.xml"), xsd)
    # One case per cell; the cells of nodes left out are skipped ("not run"); the nodes left out
    # are one failing case of their own (controller/report/csv_junit_report.cc).
    extra = 1 if want["left_out"] else 0
    check(j["tests"] == want["cells"] + extra and j["skipped"] == want["not_run"]
          and j["failures"] + j["errors"] == want["cells"] - want["pass"] - want["not_run"] + extra,
          f"{name}: junit {j} vs {want['cells']} cells, {want['pass']} pass, {want['not_run']} not run, "
          f"{want['left_out']} nodes left out")
    rows = list(csv.DictReader(open(os.path.join(out, "pairs.csv"), newline="")))
    at_verdict = [row for row in rows if int(row["size_bytes"]) == largest.get(
        (int(row["rail"]), int(row["dst_rail"])), -1) and row["memory"] == rows[0]["memory"]]
    # A test of a node left out never ran: pairs.csv may list it as "not run" or not at all.
    counted = [row for row in at_verdict if not row["superseded_by_round"] and row["status"] != "not run"]
    verdicts = [row["verdict"] for row in counted]
    check(len(counted) == want["cells"] - want["not_run"] and verdicts.count("pass") == want["pass"]
          and verdicts.count("low") == want["low"],
          f"{name}: pairs.csv at the verdict size: {len(counted)} readings counted, "
          f"{verdicts.count('pass')} pass, {verdicts.count('low')} low; run.json {want}")
    check(all(row["verdict"] == "" for row in at_verdict if row["superseded_by_round"]),
          f"{name}: no superseded reading carries a verdict")
    metrics, bw_nodes, show = metrics_for(bin_dir, work, run_path)
    check(metrics.get("low") == want["low"] and metrics.get("all") == want["all"],
          f"{name}: /metrics {metrics} vs run.json low {want['low']}, all {want['all']}")
    print(f"ok: {name}: {want['pass']}/{want['cells']} pass, {want['low']} low in stdout, summary.md, "
          f"junit.xml (valid), pairs.csv ({len(at_verdict) - len(counted)} superseded readings) and /metrics")
    return rows, bw_nodes, show


def check_left_out(name, out, stdout, rows, bw_nodes, show, groups):
    """Nodes left out, `groups` as [(cause words, [nodes])]: each cause said exactly once, with its
    count and nodes, in stdout's last lines, summary.md's first lines, report.html and runs show;
    their tests "not run" in pairs.csv and junit.xml; no bandwidth series for them in /metrics."""
    run = json.load(open(os.path.join(out, "run.json")))
    total = len({n for m in run["matrices"] for n in m["nodes"]} | {x.split(": ")[0] for x in run["excluded_nodes"]})
    md = open(os.path.join(out, "summary.md")).read()
    html = open(os.path.join(out, "report.html")).read()
    junit = ET.parse(os.path.join(out, "junit.xml")).getroot()
    tail = "\n".join(stdout.splitlines()[-15:])
    for words, nodes in groups:
        head = f"{len(nodes)} of {total} nodes unreachable: {words}"
        for where, text in (("stdout's last lines", tail), ("summary.md's first lines", "\n".join(md.splitlines()[:12])),
                            ("report.html", html), ("runs show", show)):
            check(text.count(head) == 1, f"{name}: {where} says '{head}' once, got {text.count(head)}:\n{text[:1500]}")
            line = next(x for x in text.splitlines() if head in x)
            check(all(n in line for n in nodes), f"{name}: {where}: '{head}' names {nodes}: {line}")
        for n in nodes:
            check(n not in bw_nodes, f"{name}: /metrics has a bandwidth series for {n}, which was never measured")
            mine = [r for r in rows if n in (r["src"], r["dst"])]
            check(all(r["status"] == "not run" for r in mine),
                  f"{name}: pairs.csv: {n}'s tests are 'not run': {[r['status'] for r in mine]}")
            cases = [c for c in junit.iter("testcase") if n in c.get("name", "")]
            check(cases and all((c.find("skipped") is not None and c.find("skipped").get("message", "").startswith("not run"))
                                for c in cases), f"{name}: junit.xml: {n}'s cases are skipped 'not run'")
    print(f"ok: {name}: {len(groups)} causes each said once in stdout, summary.md, report.html and runs show; "
          f"their nodes' tests 'not run' in pairs.csv and junit.xml, no bandwidth series in /metrics")


def sweep_out(bin_dir, src, work, out, stdout_path, passed, groups):
    """The reports a lab sweep wrote into `out` (its stdout in `stdout_path`) checked as above."""
    xsd = os.path.join(src, "tests", "testdata", "junit", "junit-10.xsd")
    stdout = open(stdout_path).read()
    run = json.load(open(os.path.join(out, "run.json")))
    check(bool(run.get("passed", False)) == passed, f"{out}: run.json passed={run.get('passed', False)}, want {passed}")
    rows, bw_nodes, show = check_reports(bin_dir, work, xsd, out, os.path.join(out, "run.json"), out, stdout)
    if groups:
        check_left_out(out, out, stdout, rows, bw_nodes, show, groups)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--sweep-out":
        # --sweep-out BIN_DIR SOURCE_DIR WORK_DIR OUT STDOUT PASSED [CAUSE=NODE,NODE ...]
        bin_dir, src, work, out, stdout_path, passed = sys.argv[2:8]
        groups = [(g.split("=", 1)[0], g.split("=", 1)[1].split(",")) for g in sys.argv[8:]]
        os.makedirs(work, exist_ok=True)
        sweep_out(bin_dir, src, work, out, stdout_path, passed == "1", groups)
        return
    bin_dir, src, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    xsd = os.path.join(src, "tests", "testdata", "junit", "junit-10.xsd")
    for name, passed in (("slurm-lab-node4.json", False), ("lab-demo-4node.json", True)):
        path = os.path.join(src, "tests", "testdata", "runs", name)
        out = tempfile.mkdtemp(dir=work)
        r = subprocess.run([os.path.join(bin_dir, "gdrbench"), "report", "run", path, "--out", out],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == (0 if passed else 1), f"{name}: report run exit {r.returncode}, {r.stderr.strip()}")
        check_reports(bin_dir, work, xsd, name, path, out, r.stdout)


if __name__ == "__main__":
    main()
