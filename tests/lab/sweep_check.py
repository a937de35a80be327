#!/usr/bin/env python3
"""Checks over a sweep's run.json for the sweep lab tests.

  sweep_check.py RUN_JSON full N              every ordered pair of N nodes is an OK cell > 0
  sweep_check.py RUN_JSON blame KIND SUBJECT  exactly this blame (and no other)
  sweep_check.py RUN_JSON dead NODE           NODE's cells after its death failed with a reason,
                                              every cell not involving NODE is OK
  sweep_check.py RUN_JSON same OTHER_JSON     same cells (status, and OK values) and pairs
Prints one line per finding; exit 1 with "FAIL: ..." on the first failed check.
"""
import json
import sys


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def load(path):
    with open(path) as f:
        return json.load(f)


def verdict_matrix(run):
    best = {}
    for m in run.get("matrices", []):
        r = m.get("rail", 0)
        if r not in best or int(m.get("size_bytes", 0)) > int(best[r].get("size_bytes", 0)):
            best[r] = m
    if not best:
        fail("run has no matrices")
    return best[min(best)]


def cells(run):
    m = verdict_matrix(run)
    names = m["nodes"]
    out = {}
    for c in m.get("cells", []):
        out[(names[c.get("src", 0)], names[c.get("dst", 0)])] = c
    return names, out


def main():
    run = load(sys.argv[1])
    what = sys.argv[2]
    names, cs = cells(run)
    if what == "full":
        n = int(sys.argv[3])
        if len(names) != n:
            fail(f"{len(names)} nodes in the matrix, expected {n}")
        for a in names:
            for b in names:
                if a == b:
                    continue
                c = cs.get((a, b))
                if c is None:
                    fail(f"cell {a}->{b} missing")
                if c.get("status") != "RESULT_STATUS_OK" or not c.get("bw_avg_gbps", 0) > 0:
                    fail(f"cell {a}->{b}: {c.get('status')} {c.get('reason', '')}")
        vals = sorted(c["bw_avg_gbps"] for c in cs.values())
        print(f"ok full {n}x{n} matrix: {len(cs)} cells, {vals[0]:.3g} .. {vals[-1]:.3g} Gb/s")
    elif what == "blame":
        kind, subject = sys.argv[3], sys.argv[4]
        blame = [(b.get("kind"), b.get("subject")) for b in run.get("blame", [])]
        if blame != [(kind, subject)]:
            fail(f"blame {blame}, expected [({kind!r}, {subject!r})]; summary: {run.get('summary')}")
        print(f"ok blame: {kind} {subject}")
    elif what == "dead":
        node = sys.argv[3]
        failed = 0
        for (a, b), c in cs.items():
            ok = c.get("status") == "RESULT_STATUS_OK"
            if node in (a, b):
                if not ok:
                    failed += 1
                    if not c.get("reason"):
                        fail(f"failed cell {a}->{b} has no reason")
            elif not ok:
                fail(f"cell {a}->{b} (not involving {node}) is {c.get('status')}: {c.get('reason')}")
        total = 2 * (len(names) - 1)
        if len(cs) != len(names) * (len(names) - 1):
            fail(f"{len(cs)} cells, expected a full matrix")
        if failed < total // 2:
            fail(f"only {failed} of {node}'s {total} cells failed")
        reasons = {c.get("reason") for (a, b), c in cs.items() if node in (a, b) and c.get("status") != "RESULT_STATUS_OK"}
        print(f"ok {node}: {failed} of {total} cells failed; reasons: {sorted(reasons)[:2]}")
    elif what == "same":
        other = load(sys.argv[3])
        _, ocs = cells(other)
        if set(cs) != set(ocs):
            fail(f"cells differ: {sorted(set(cs) ^ set(ocs))}")
        for k in cs:
            if cs[k].get("status") != ocs[k].get("status"):
                fail(f"cell {k}: {cs[k].get('status')} vs {ocs[k].get('status')}")
        print(f"ok same {len(cs)} cells")
    else:
        fail("unknown check " + what)


if __name__ == "__main__":
    main()
