#!/usr/bin/env python3
"""Checks over a sweep's run.json for the sweep lab tests.

  sweep_check.py RUN_JSON full N              every ordered pair of N nodes is an OK cell > 0
  sweep_check.py RUN_JSON blame KIND SUBJECT  exactly this blame (and no other)
  sweep_check.py RUN_JSON dead NODE           NODE's cells after its death failed with a reason,
                                              every cell not involving NODE is OK
  sweep_check.py RUN_JSON same OTHER_JSON     same cells (status, and OK values) and pairs
  sweep_check.py RUN_JSON incast N K          --mode incast: every one of N nodes a target of K
                                              senders in one round, all OK, sum = the senders' Gb/s
  sweep_check.py RUN_JSON crossrail N R       --mode cross-rail: for every ordered pair of N nodes
                                              and every rail i != j of R, an OK cell > 0 in the
                                              (i, j) matrix; the target's NIC is its rail j's; no
                                              NIC in two tests of a round (each end's own rail)
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
    elif what == "incast":
        n, k = int(sys.argv[3]), int(sys.argv[4])
        if run.get("mode") != "incast":
            fail(f"mode {run.get('mode')}, expected incast")
        targets = run.get("incast", [])
        if sorted(t["node"] for t in targets) != sorted(names) or len(names) != n:
            fail(f"incast targets {[t['node'] for t in targets]}, expected each of {n} nodes once")
        rounds = {}
        for p in run.get("pairs", []):
            rounds.setdefault((p.get("round", 0), p["dst"]["node"]), []).append(p["src"]["node"])
        for t in targets:
            senders = t.get("senders", [])
            if t.get("fan_in") != k or len(senders) != k:
                fail(f"target {t['node']}: fan_in {t.get('fan_in')}, {len(senders)} senders, expected {k}")
            if sorted(rounds.get((t.get("round", 0), t["node"]), [])) != sorted(s["node"] for s in senders):
                fail(f"target {t['node']}: its senders are not the pairs of its round")
            bad = [s for s in senders if s.get("status") != "RESULT_STATUS_OK" or not s.get("bw_avg_gbps", 0) > 0]
            if bad:
                fail(f"target {t['node']}: senders not OK: {bad}")
            total = sum(s["bw_avg_gbps"] for s in senders)
            if abs(total - t.get("aggregate_gbps", 0)) > 1e-9 * max(total, 1):
                fail(f"target {t['node']}: aggregate {t.get('aggregate_gbps')} != sum {total}")
        # A round holds a target with its K senders; no node sends and receives at once.
        by_round = {}
        for (r, dst), srcs in rounds.items():
            by_round.setdefault(r, []).append((dst, srcs))
        for r, groups in by_round.items():
            used = [x for dst, srcs in groups for x in [dst] + srcs]
            if len(used) != len(set(used)):
                fail(f"round {r}: a node in two roles or groups: {groups}")
        sums = sorted(t["aggregate_gbps"] for t in targets)
        print(f"ok incast {n} targets x {k} senders; per-target sums {sums[0]:.3g} .. {sums[-1]:.3g} Gb/s")
    elif what == "crossrail":
        n, rails = int(sys.argv[3]), int(sys.argv[4])
        if run.get("mode") != "cross-rail":
            fail(f"mode {run.get('mode')}, expected cross-rail")
        lanes = {}
        for m in run.get("matrices", []):
            if "dst_rail" not in m or m["dst_rail"] == m.get("rail", 0):
                fail(f"a same-rail matrix (rail {m.get('rail', 0)}) in a cross-rail run")
            lane = (m.get("rail", 0), m["dst_rail"])
            if lane not in lanes or int(m.get("size_bytes", 0)) > int(lanes[lane].get("size_bytes", 0)):
                lanes[lane] = m
        want = {(i, j) for i in range(rails) for j in range(rails) if i != j}
        if set(lanes) != want:
            fail(f"matrices of lanes {sorted(lanes)}, expected {sorted(want)}")
        low = high = None
        for lane, m in sorted(lanes.items()):
            names = m["nodes"]
            got = {(names[c.get("src", 0)], names[c.get("dst", 0)]): c for c in m.get("cells", [])}
            if len(names) != n or len(got) != n * (n - 1):
                fail(f"lane {lane}: {len(got)} cells of {len(names)} nodes, expected {n * (n - 1)}")
            for (a, b), c in got.items():
                if a == b or c.get("status") != "RESULT_STATUS_OK" or not c.get("bw_avg_gbps", 0) > 0:
                    fail(f"lane {lane} cell {a}->{b}: {c.get('status')} {c.get('reason', '')}")
                v = c["bw_avg_gbps"]
                low, high = min(low or v, v), max(high or v, v)
        busy = {}
        for p in run.get("pairs", []):
            r, d = p.get("rail", 0), p.get("dst_rail", p.get("rail", 0))
            if r == d:
                fail(f"pair {p['src']['node']}->{p['dst']['node']} on one rail {r}")
            k = p["dst"]["node"][len("node"):]
            nic = f"rxe{k}" + (f"r{d}" if d else "")
            if p["dst"].get("nic_device") != nic:
                fail(f"pair {p['src']['node']}->{p['dst']['node']} rail {r}->{d}: target NIC "
                     f"{p['dst'].get('nic_device')}, expected {nic}")
            for end in ((p["src"]["node"], r), (p["dst"]["node"], d)):
                key = (p.get("round", 0),) + end
                if key in busy:
                    fail(f"round {key[0]}: NIC of rail {end[1]} on {end[0]} in two tests")
                busy[key] = True
        print(f"ok cross-rail {n} nodes x lanes {sorted(lanes)}: {n * (n - 1) * len(lanes)} cells OK, "
              f"{low:.3g} .. {high:.3g} Gb/s")
    else:
        fail("unknown check " + what)


if __name__ == "__main__":
    main()
