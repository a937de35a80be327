#!/bin/bash
# `gdrbench topology show` and `gdrbench topology plan` on the published dumps
# (tests/testdata/topology/README.md): exit codes, the printed model, and the
# plan's JSON with each flow's cables.
set -euo pipefail
bin=$1/gdrbench
data=$2/tests/testdata/topology
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$tmp/inv.yaml" <<'YAML'
nodes:
  - name: RMD701091901003
    rails: [{nic: ibp11s0f0}]
  - name: gpu07
    rails: [{nic: mlx5_3}]
YAML
out=$("$bin" topology show --topology "$data/superbench-ibnetdiscover.txt" --inventory "$tmp/inv.yaml")
grep -q '^  host<->leaf: 10 (10 at 200 Gb/s)$' <<<"$out" || fail "show: host cables: $out"
grep -q '^nodes not found: 1$' <<<"$out" || fail "show: nodes not found: $out"
grep -q "mlx5_3 of gpu07: no HCA described 'gpu07 mlx5_3'" <<<"$out" || fail "show: the reason: $out"
grep -q '^cables without a node: 9$' <<<"$out" || fail "show: cables without a node: $out"

out=$("$bin" topology show --topology "$data/ib2neo4j-iblinkinfo-line.txt")
grep -q '^  host<->leaf: 3 (3 at 100 Gb/s)$' <<<"$out" || fail "show iblinkinfo: $out"

set +e
err=$("$bin" topology show --topology "$data/lldp" 2>&1); rc=$?
set -e
[[ $rc == 2 ]] || fail "lldp without an inventory: exit $rc"
grep -q 'needs the inventory' <<<"$err" || fail "lldp without an inventory: $err"

set +e
err=$("$bin" topology show --topology /nonexistent/f.txt 2>&1); rc=$?
set -e
[[ $rc == 2 ]] || fail "a missing file: exit $rc ($err)"

out=$("$bin" topology plan --topology "$data/superbench-ibnetdiscover.txt")
grep -q '^plan: cover under ftree routing: ' <<<"$out" || fail "plan: $out"
grep -q '^  host<->leaf: 10 / 10 cables covered' <<<"$out" || fail "plan: host cables: $out"

"$bin" topology plan --topology "$data/superbench-ibnetdiscover.txt" --json > "$tmp/plan.json"
python3 - "$tmp/plan.json" <<'PY' || fail "plan --json"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["mode"] == "cover" and p["routing"] == "ftree", p
flows = [f for r in p["rounds"] for f in r]
assert flows, "no flows"
for f in flows:
    assert f["cables"][0]["tier"] == 0 and f["cables"][0]["direction"] == "up", f
    assert f["cables"][-1]["tier"] == 0 and f["cables"][-1]["direction"] == "down", f
hosts = {f["src"] for f in flows} | {f["dst"] for f in flows}
assert "RMD701091901003 ibp11s0f0" in hosts, hosts
PY

set +e
err=$("$bin" topology plan --topology "$data/superbench-ibnetdiscover.txt" --mode shift --routing ecmp 2>&1); rc=$?
set -e
[[ $rc == 2 ]] || fail "shift under ecmp: exit $rc"
grep -q 'shift plans under --routing ftree only' <<<"$err" || fail "shift under ecmp: $err"
echo PASS
