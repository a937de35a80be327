#!/usr/bin/env bash
# The two one-shot preflights speak the same flags (issue 32, Why 3: "NIC selection is --devices,
# --rail-nics or --devices again"; "gdrbench-preflight has no --json"): gdrbench-preflight and
# `gdrbench-agent preflight` list the same options, print the same JSON for a real captured tree
# (tests/testdata/preflight/dgx-h100; its sources in that folder's README), and --devices means
# the same after the subcommand as before it.
# Usage: preflight_cli_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
bin=$1/bin
tree=$2/tests/testdata/preflight/dgx-h100
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

options() { "$@" --help | grep -oE '^  (-[a-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+' | grep -v -- '--help' | sort; }
options "$bin/gdrbench-preflight" >"$work/a.opts"
options "$bin/gdrbench-agent" preflight >"$work/b.opts"
diff -u "$work/a.opts" "$work/b.opts" || fail "gdrbench-preflight and gdrbench-agent preflight have different options"
for o in --fs-root --checks --devices --rail-nics --json --verbose; do
  grep -qx -- "$o" "$work/a.opts" || fail "the one-shot preflights lack $o"
done
echo "ok: both one-shot preflights take $(tr '\n' ' ' <"$work/a.opts")"

# The same JSON (durations aside: each run times itself); exit 1 when a check FAILs, in both.
"$bin/gdrbench-preflight" --fs-root "$tree" --json >"$work/a.json"
a=$?
"$bin/gdrbench-agent" preflight --fs-root "$tree" --json >"$work/b.json"
b=$?
[[ $a == "$b" ]] || fail "exit $a (gdrbench-preflight) vs $b (gdrbench-agent preflight)"
/usr/bin/python3 - "$work/a.json" "$work/b.json" <<'PY' || fail "the two --json documents differ"
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k != "duration_ns"}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
assert a == b, (a, b)
assert len(a["checks"]) > 10 and a["overall"].startswith("CHECK_STATUS_"), a
print(f"ok: --json: the same {len(a['checks'])} checks, overall {a['overall']}, in both")
PY

# --devices after the subcommand is --devices before it.
dev=$(ls "$tree/sys/class/infiniband" | head -n 1)
[[ -n $dev ]] || fail "no RDMA device in $tree"
"$bin/gdrbench-agent" preflight --fs-root "$tree" --devices "$dev" --checks rdma_devices >"$work/after.txt"
"$bin/gdrbench-agent" --devices "$dev" preflight --fs-root "$tree" --checks rdma_devices >"$work/before.txt"
"$bin/gdrbench-preflight" --fs-root "$tree" --devices "$dev" --checks rdma_devices >"$work/tool.txt"
sed -i -E 's/[0-9]+(\.[0-9]+)? ?(ms|s|us)\b/T/g' "$work"/{after,before,tool}.txt
diff -u "$work/before.txt" "$work/after.txt" || fail "gdrbench-agent preflight --devices differs from gdrbench-agent --devices preflight"
diff -u "$work/tool.txt" "$work/after.txt" || fail "gdrbench-preflight --devices differs from gdrbench-agent preflight --devices"
grep -q "$dev" "$work/after.txt" || fail "the rdma_devices check does not name $dev: $(cat "$work/after.txt")"
echo "ok: --devices $dev: the same rdma_devices check from all three spellings"
echo PASS
