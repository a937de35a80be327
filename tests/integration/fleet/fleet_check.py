#!/usr/bin/python3
"""What a simulated fleet's run.json holds (tests/integration/fleet, bench/fleet_scale.sh).

  fleet_check.py stats RUN.json
      one line: tests, ok, failed, and the per-test control overhead (a test's wall,
      duration_ns, less its sizes' data time) median / mean / max in ms.
  fleet_check.py complete RUN.json PLAN.json --nics a,b,... [--dead NODE]
      the run against the plan (`gdrbench sweep --dry-run --json`: a test on a rail the
      inventory names is on that NIC, one on a rail the agents name on every NIC of --nics): every planned test ran exactly once and nothing
      else; every test without NODE passed; with --dead, at least one test of NODE failed,
      every failed one involves NODE, and the run's summary or a failed test's error names
      NODE (its name or its agent's address). Exit 1 with the reasons otherwise.
"""
import argparse
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def overhead_ms(pair):
    data = sum(int(s.get("duration_ns", 0)) for s in pair.get("sizes", []))
    return (int(pair.get("duration_ns", 0)) - data) / 1e6


def stats(run):
    pairs = run["pairs"]
    ok = sum(1 for p in pairs if p["status"] == "RESULT_STATUS_OK")
    over = sorted(overhead_ms(p) for p in pairs) or [0.0]
    print(f"tests={len(pairs)} ok={ok} failed={len(pairs) - ok} "
          f"overhead_ms_median={statistics.median(over):.1f} overhead_ms_mean={statistics.mean(over):.1f} "
          f"overhead_ms_max={over[-1]:.1f}")
    return 0


def planned(plan, nics):
    """(src, dst, NIC) -> times: a test on a named rail is on its NIC; a test on a rail the
    agents name (no NIC in the plan) is on every one of `nics`."""
    rails = {n["name"]: [r.get("nic", "") for r in n.get("rails", [])] for n in plan["nodes"]}
    want = {}
    for rnd in plan["rounds"]:
        for t in rnd["tests"]:
            named = rails.get(t["src"], [])
            nic = named[t.get("rail", 0)] if t.get("rail", 0) < len(named) else ""
            for n in [nic] if nic else nics:
                key = (t["src"], t["dst"], n)
                want[key] = want.get(key, 0) + 1
    return want


def error_text(pair):
    parts = [pair.get("reason", ""), pair.get("error", ""), pair.get("summary", {}).get("error", "")]
    parts += [s.get("error", "") for s in pair.get("sizes", [])]
    return " ".join(p for p in parts if p)


def complete(run, plan, nics, dead):
    problems = []
    want = planned(plan, nics)
    got = {}
    for p in run["pairs"]:
        key = (p["src"]["node"], p["dst"]["node"], p["src"]["nic_device"])
        got.setdefault(key, []).append(p)
    for key, n in want.items():
        if len(got.get(key, [])) != n:
            problems.append(f"planned {key} x{n}, ran x{len(got.get(key, []))}")
    problems += [f"ran {key}, not planned" for key in got if key not in want]
    failed = [p for p in run["pairs"] if p["status"] != "RESULT_STATUS_OK"]
    for p in failed:
        if dead not in (p["src"]["node"], p["dst"]["node"]):
            problems.append(f"{p['src']['node']} -> {p['dst']['node']} on {p['src']['nic_device']} failed "
                            f"without the dead node: {p['status']} {error_text(p)[:200]}")
    if dead:
        mine = [p for p in failed if dead in (p["src"]["node"], p["dst"]["node"])]
        if not mine:
            problems.append(f"no test of {dead} failed: was it stopped?")
        summary = json.dumps(run.get("summary", ""))
        addresses = {p[end]["agent_address"] for p in mine for end in ("src", "dst") if p[end]["node"] == dead}
        named = dead in summary or any(dead in error_text(p) or any(a in error_text(p) for a in addresses)
                                       for p in mine)
        if not named:
            problems.append(f"neither the summary nor a failed test names {dead}")
        print(f"{len(failed)} failed tests, all of {dead}; summary: {summary[:300]}")
    for p in problems[:20]:
        print("FAIL:", p)
    if len(problems) > 20:
        print(f"FAIL: ... and {len(problems) - 20} more")
    print(f"{len(want)} planned tests, {len(run['pairs'])} ran, {len(problems)} problems")
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stats")
    s.add_argument("run")
    c = sub.add_parser("complete")
    c.add_argument("run")
    c.add_argument("plan")
    c.add_argument("--nics", required=True)
    c.add_argument("--dead", default="")
    a = ap.parse_args()
    if a.cmd == "stats":
        return stats(load(a.run))
    return complete(load(a.run), load(a.plan), a.nics.split(","), a.dead)


if __name__ == "__main__":
    sys.exit(main())
