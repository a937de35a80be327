#!/usr/bin/env python3
"""Checks lab.fabric's evidence (tests/lab/fabric_test.sh), in one interpreter start.

  fabric_check.py [plan ROUTES_DIR PLAN.json...] [flows RECORD...]   (one interpreter start)

  plan ROUTES_DIR PLAN.json...
      Every cross-leaf flow of each `gdrbench topology plan --json` (the controller's ftree model
      of the lab's LLDP topology) climbs to the spine the lab's leaf really routes it to, and
      comes down from that spine to the destination's leaf: ROUTES_DIR/leafL.json is
      `ip -j route` in leafL's namespace, ROUTES_DIR/uplinks is "leafL swpU spineS" lines.

  flows RECORD...
      RECORD = LABEL,BEFORE.json,AFTER.json,MIN_BYTES,PATH_FILE,QUIET
      BEFORE/AFTER are `fabric counters` snapshots around one flow and PATH_FILE is `fabric path`
      for it ("DEVICE PORT rx|tx" lines). Each port direction on the path must have grown by at
      least MIN_BYTES; with QUIET=1 every other port direction by less than a tenth of it. No
      error counter may grow.

Prints one line per check; exits 1 with "FAIL: ..." lines when one does not hold.
"""
import ipaddress
import json
import os
import sys

FIELDS = ("tx_bytes", "rx_bytes", "tx_packets", "rx_packets", "rx_errors", "tx_errors",
          "rx_dropped", "tx_dropped")


def load_counters(path):
    with open(path) as f:
        doc = json.load(f)
    ports = {}
    for p in doc["ports"]:
        missing = [k for k in ("device", "port") + FIELDS if k not in p]
        if missing:
            raise SystemExit(f"FAIL: {path}: a port without {missing}: {p}")
        ports[(p["device"], p["port"])] = p
    return ports


def check_flows(records):
    failures = []
    for rec in records:
        failed_before = len(failures)
        label, before, after, min_bytes, path_file, quiet = rec.split(",")
        min_bytes, quiet = int(min_bytes), quiet == "1"
        a, b = load_counters(before), load_counters(after)
        if set(a) != set(b):
            failures.append(f"{label}: the ports changed between snapshots")
            continue
        with open(path_file) as f:
            path = {tuple(line.split()) for line in f if line.strip()}
        moved = []
        for key in sorted(b):
            for d in ("rx", "tx"):
                delta = b[key][f"{d}_bytes"] - a[key][f"{d}_bytes"]
                on_path = (key[0], key[1], d) in path
                if on_path:
                    moved.append(f"{key[0]}:{key[1]} {d} +{delta}")
                    if delta < min_bytes:
                        failures.append(f"{label}: {key[0]} {key[1]} {d} grew {delta} bytes, "
                                        f"< {min_bytes} (the flow's path)")
                elif quiet and delta >= min_bytes // 10:
                    failures.append(f"{label}: {key[0]} {key[1]} {d} grew {delta} bytes, off the "
                                    f"predicted path (limit {min_bytes // 10})")
            for e in ("rx_errors", "tx_errors"):
                if b[key][e] > a[key][e]:
                    failures.append(f"{label}: {key[0]} {key[1]} {e} grew by {b[key][e] - a[key][e]}")
        unknown = path - {(k[0], k[1], d) for k in b for d in ("rx", "tx")}
        if unknown:
            failures.append(f"{label}: the path names ports the counters lack: {sorted(unknown)}")
        others = 0
        for key in b:
            for d in ("rx", "tx"):
                if (key[0], key[1], d) not in path:
                    others = max(others, b[key][f"{d}_bytes"] - a[key][f"{d}_bytes"])
        print(f"{'ok' if len(failures) == failed_before else 'BAD'} {label}: path {', '.join(moved)}; largest elsewhere +{others} "
              f"(need >= {min_bytes} on the path{', < ' + str(min_bytes // 10) + ' elsewhere' if quiet else ''})")
    return failures


def check_plan(routes_dir, plan_files):
    uplink_spine = {}
    with open(os.path.join(routes_dir, "uplinks")) as f:
        for line in f:
            leaf, port, spine = line.split()
            uplink_spine[(leaf, port)] = spine
    # The lab's routes: at leaf L, node d (10.0.0.d) leaves on port P.
    route_port = {}
    for name in os.listdir(routes_dir):
        if not name.endswith(".json"):
            continue
        leaf = name[:-5]
        with open(os.path.join(routes_dir, name)) as f:
            for r in json.load(f):
                dst = r.get("dst", "")
                if "/" not in dst and dst.startswith("10.0.0."):
                    route_port[(leaf, int(ipaddress.ip_address(dst).packed[3]))] = r["dev"]
    # The lab's leaves: node d hangs off the leaf that routes it on a port of its own (no via).
    leaf_of = {d: leaf for (leaf, d), port in route_port.items() if (leaf, port) not in uplink_spine}

    def ends(cable):  # "leaf1[5] -> spine2[1]": (leaf1, spine2), the lower end first
        lower, upper = cable["cable"].split(" -> ")
        return lower.split("[")[0], upper.split("[")[0]

    failures = []
    for plan_file in plan_files:
        with open(plan_file) as f:
            plan = json.load(f)
        checked, before = 0, len(failures)
        for rnd in plan["rounds"]:
            for flow in rnd:
                ups = [ends(c) for c in flow["cables"] if c["tier"] == 1 and c["direction"] == "up"]
                downs = [ends(c) for c in flow["cables"] if c["tier"] == 1 and c["direction"] == "down"]
                if not ups:
                    continue
                checked += 1
                what = f"{plan['mode']} plan flow {flow['src']} -> {flow['dst']}"
                (leaf, model_spine), d = ups[0], int(flow["dst"].removeprefix("node"))
                port = route_port.get((leaf, d))
                lab_spine = uplink_spine.get((leaf, port))
                if lab_spine != model_spine:
                    failures.append(f"{what}: the model climbs {leaf} -> {model_spine}, the lab "
                                    f"routes it out {leaf} {port} ({lab_spine})")
                if downs != [(leaf_of.get(d), model_spine)]:
                    failures.append(f"{what}: the model comes down {downs}, the lab's node{d} is "
                                    f"on {leaf_of.get(d)} under {model_spine}")
        if checked == 0:
            failures.append(f"{plan_file}: no flow between leaves")
        if len(failures) == before:
            print(f"ok the controller's ftree model and the lab's leaf routes agree on all {checked} "
                  f"cross-leaf flow(s) of the {plan['mode']} plan")
    return failures


def main(argv):
    args, failures = argv[1:], []
    flows = args.index("flows") if "flows" in args else len(args)
    plan, records = args[:flows], args[flows + 1:]
    if (plan and (plan[0] != "plan" or len(plan) < 3)) or (flows < len(args) and not records) or not args:
        print(__doc__, file=sys.stderr)
        return 2
    if plan:
        failures += check_plan(plan[1], plan[2:])
    if records:
        failures += check_flows(records)
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
