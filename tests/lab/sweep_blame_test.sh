#!/usr/bin/env bash
# lab: nodes=4 timeout=600
# Blame from real rxe traffic: with the node2<->node3 link shaped to a fraction of the others,
# that link (and neither node) is blamed; with node4's whole link shaped, node4 is blamed.
# One test per round (--max-concurrent 1): in the emulated guest two concurrent tests share one
# CPU and would add noise far larger than a real fabric's.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/datapath_lib.sh"

SW_ITERATIONS=100   # read by sweep_lib.sh
export SW_ITERATIONS
source "$(dirname "$0")/sweep_lib.sh"
SW_FLAGS+=(--max-concurrent 1)
sw_start_agents node1 node2 node3 node4

lab_log "node2 <-> node3 shaped to 10mbit"
shape node2 --to node3 --rate 10mbit || lab_fail "shape --to failed"
out=$DP_DIR/link
sw_sweep "$out"
rc=$?
sw_show "$out"
((rc == 1)) || { dp_agent_logs node1 node2 node3 node4; lab_fail "sweep exit $rc, expected 1 (a low link)"; }
sw_check "$out/run.json" full 4 || exit 1
sw_check "$out/run.json" blame link "node2<->node3" || exit 1
shape node2 --clear || lab_fail "shape --clear failed"

lab_log "node4's whole link shaped to 10mbit"
shape node4 --rate 10mbit || lab_fail "shape failed"
out=$DP_DIR/node
sw_sweep "$out"
rc=$?
sw_show "$out"
((rc == 1)) || { dp_agent_logs node1 node2 node3 node4; lab_fail "sweep exit $rc, expected 1 (a low node)"; }
sw_check "$out/run.json" full 4 || exit 1
sw_check "$out/run.json" blame node node4 || exit 1
shape node4 --clear || lab_fail "shape --clear failed"
echo "PASS"
