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
# `gdrbench sweep --mode cover --dry-run` on the same dump: the inventory names 9 of its 10 hosts
# (read from the dump's "Ca" records here, not from the planner), each rail matched by its HCA's
# node description; the tenth host's cable is reported, every test carries its cables.
awk '/^Ca/ { split($0, q, "\""); split(q[4], d, " "); print d[1], d[2] }' "$data/superbench-ibnetdiscover.txt" \
  | sort -u > "$tmp/hosts.txt"
[[ $(wc -l < "$tmp/hosts.txt") == 10 ]] || fail "the dump's hosts: $(cat "$tmp/hosts.txt")"
{
  echo "nodes:"
  head -9 "$tmp/hosts.txt" | while read -r node nic; do
    printf '  - name: %s\n    address: %s:7070\n    rails: [{nic: %s}]\n' "$node" "$node" "$nic"
  done
} > "$tmp/sweep-inv.yaml"
out=$("$bin" sweep --dry-run --mode cover --topology "$data/superbench-ibnetdiscover.txt" \
        --inventory "$tmp/sweep-inv.yaml")
grep -q '^plan [0-9a-f]*: cover, 9 nodes' <<<"$out" || fail "sweep cover dry run: $out"
grep -q '^fabric: .*superbench-ibnetdiscover.txt (ftree routing): [0-9]* rounds planned, lower bound [0-9]*; all-pairs over the same 9 nodes: 18 rounds' <<<"$out" \
  || fail "sweep cover dry run: the fabric line: $out"
grep -q '^  host<->leaf: 9 / 10 cables planned$' <<<"$out" || fail "sweep cover dry run: host cables: $out"
last=$(tail -1 "$tmp/hosts.txt" | cut -d' ' -f1)
grep -q "^  not planned: $last ibp11s0f0 .*: its host port matches no rail of the nodes (not run)\$" <<<"$out" \
  || grep -q "^  not planned: .*$last.*matches no rail" <<<"$out" || fail "sweep cover dry run: $last's cable: $out"

"$bin" sweep --dry-run --json --mode cover --topology "$data/superbench-ibnetdiscover.txt" \
  --inventory "$tmp/sweep-inv.yaml" > "$tmp/sweep.json"
python3 - "$tmp/sweep.json" "$tmp/hosts.txt" <<'PY' || fail "sweep cover --dry-run --json"
import json, sys
p = json.load(open(sys.argv[1]))
hosts = [l.split()[0] for l in open(sys.argv[2])][:9]
assert p["mode"] == "cover", p["mode"]
assert p["fabric"]["routing"] == "ftree" and p["fabric"]["planned_rounds"] >= p["fabric"]["lower_bound_rounds"], p["fabric"]
tests = [t for r in p["rounds"] for t in r["tests"]]
seen = set()
for r in p["rounds"]:
    used = set()
    for t in r["tests"]:
        assert not t["bidirectional"], t
        c = t["cables"]
        assert c[0]["tier"] == 0 and c[0]["direction"] == "up" and c[0]["cable"].startswith(t["src"] + " "), t
        assert c[-1]["tier"] == 0 and c[-1]["direction"] == "down" and c[-1]["cable"].startswith(t["dst"] + " "), t
        for x in c:
            key = (x["cable"], x["direction"])
            assert key not in used, ("a cable direction twice in round", r["round"], key)
            used.add(key)
            seen.add(x["cable"])
host_cables = {c for c in seen if c.split()[0] in hosts}
assert len(host_cables) == 9, sorted(host_cables)
PY
echo PASS
