#!/usr/bin/env bash
# lab: nodes=4 timeout=420
# gdrbench sweep over 4 lab agents: the plan (--dry-run), then an all-pairs sweep whose 12
# cells are real rxe traffic (each node's veth carries its tests' bytes), every report written,
# exit 0 (fleet-relative verdicts: the lab is far below any port rate).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/datapath_lib.sh"
source "$(dirname "$0")/sweep_lib.sh"

sw_start_agents node1 node2 node3 node4
out=$DP_DIR/allpairs

lab_log "dry run"
"$GDRBENCH_BIN/gdrbench" sweep --inventory "$DP_DIR/inv.yaml" --dry-run "${SW_FLAGS[@]}" >"$DP_DIR/plan.txt" ||
  lab_fail "dry run failed"
sed 's/^/  /' "$DP_DIR/plan.txt"
grep -q "^rounds: 6, tests: 12" "$DP_DIR/plan.txt" || lab_fail "plan is not 6 rounds of 12 tests"

lab_log "all-pairs sweep"
declare -A rx0
for n in node1 node2 node3 node4; do rx0[$n]=$(lab_bytes "$(lab_netdev "$n")" rx); done
sw_sweep "$out"
rc=$?
sw_show "$out"
((rc == 0)) || { dp_agent_logs node1 node2 node3 node4; lab_fail "sweep exit $rc"; }
sw_check "$out/run.json" full 4 || exit 1
# Each node is the target of 3 tests of 150 x 64 KiB.
for n in node1 node2 node3 node4; do
  got=$(( $(lab_bytes "$(lab_netdev "$n")" rx) - rx0[$n] ))
  echo "  $(lab_netdev "$n") received $got bytes"
  ((got >= 3 * 150 * 65536)) || lab_fail "$n received $got bytes, less than its 3 tests' payload"
done
for f in run.json pairs.csv summary.md report.html junit.xml journal.bin; do
  [[ -s "$out/$f" ]] || lab_fail "report $f missing"
done
grep -q 'tests="12" failures="0" errors="0"' "$out/junit.xml" || lab_fail "junit.xml does not show 12 passing tests"
grep -q "report: $out/report.html" "$out.stdout" || lab_fail "no report path printed"
grep -q '"event":"progress".*"tests_done":12' "$out.stderr" || lab_fail "no final JSON progress line"
echo "PASS"
