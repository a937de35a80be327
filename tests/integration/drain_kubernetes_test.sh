#!/usr/bin/env bash
# `gdrbench drain --on kubernetes` and `gdrbench resume --on kubernetes` against a stand-in
# kubectl that records its argv and answers `auth can-i` and `get nodes` as kubectl does
# (the runs are the lab's: tests/testdata/runs): the blamed node gets gdrbench's NoSchedule
# taint and the reason annotation; a caller kubectl says may not patch nodes gets the reason
# and no change; a run over --max-fraction calls no kubectl at all; resume removes the taint
# only from a node gdrbench tainted that the run passed.
# Usage: drain_kubernetes_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
bin=${1:?}/bin src=${2:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=$src/tests/testdata/runs
cat >"$work/kubectl" <<'K'
#!/bin/bash
echo "$*" >>"$KUBECTL_LOG"
case "$1 $2" in
  "auth can-i") echo "$KUBECTL_CAN"; [[ "$KUBECTL_CAN" == yes ]] ;;
  "get nodes") printf '%s\n' 'node1|' 'node2|' 'node3|' 'node4|NoSchedule' ;;
  *) exit 0 ;;
esac
K
chmod +x "$work/kubectl"
export KUBECTL_LOG=$work/log KUBECTL_CAN=yes
k=(--on kubernetes --kubectl "$work/kubectl")

out=$("$bin/gdrbench" drain --run "$runs/slurm-lab-node4.json" "${k[@]}") || fail "drain: $out"
echo "drain: $out"
grep -qx "taint nodes node4 gdrbench.io/fabric=drain:NoSchedule --overwrite" "$work/log" ||
  fail "no taint: $(cat "$work/log")"
grep -q "^annotate nodes node4 gdrbench.io/fabric-reason=gdrbench: node: .* --overwrite$" "$work/log" ||
  fail "no reason annotation: $(cat "$work/log")"

: >"$work/log"
KUBECTL_CAN=no "$bin/gdrbench" drain --run "$runs/slurm-lab-node4.json" "${k[@]}" >"$work/out" 2>&1
rc=$?
echo "may not: exit $rc: $(cat "$work/out")"
((rc == 4)) && grep -q "patch nodes" "$work/out" || fail "drain without the rights"
[[ "$(cat "$work/log")" == "auth can-i patch nodes" ]] || fail "kubectl calls without the rights: $(cat "$work/log")"

: >"$work/log"
"$bin/gdrbench" drain --run "$runs/slurm-lab-node4.json" "${k[@]}" --max-fraction 0.2 >/dev/null 2>&1
rc=$?
((rc == 3)) && [[ ! -s "$work/log" ]] || fail "over the fraction: exit $rc, kubectl: $(cat "$work/log")"

: >"$work/log"
out=$("$bin/gdrbench" resume --run "$runs/lab-demo-4node.json" "${k[@]}") || fail "resume: $out"
echo "resume: $out"
[[ "$out" == "resumed node4: passed in run "* ]] || fail "resume said '$out'"
grep -qx "taint nodes node4 gdrbench.io/fabric:NoSchedule-" "$work/log" &&
  grep -qx "annotate nodes node4 gdrbench.io/fabric-reason-" "$work/log" || fail "resume's calls: $(cat "$work/log")"
[[ $(grep -c "^taint\|^annotate" "$work/log") == 2 ]] || fail "resume touched other nodes: $(cat "$work/log")"
out=$("$bin/gdrbench" resume --run "$runs/slurm-lab-node4.json" "${k[@]}" --dry-run) || fail "resume (failing run)"
[[ "$out" == "kept node4 drained: "* ]] || fail "resume on the failing run said '$out'"
echo "1 passed, 0 failed"
