#!/usr/bin/env bash
# lab: nodes=2 timeout=420
# gdrbench pair between two lab nodes over rdma_cm, host memory: a full `all` sweep (2 B ..
# 8 MiB) with verify whose bytes cross the server's veth; a bidirectional sweep; 4 QPs with
# verify; a duration-mode run. Iteration counts are sized for the lab's ~0.4 Gb/s.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/datapath_lib.sh"
check() { python3 "$(dirname "$0")/datapath_check.py" "$DP_DIR/pair.out" "$@"; }

dp_start_agent node1
dp_start_agent node2
sn=$(lab_netdev node2)

lab_log "all sizes, verify, 20 iterations"
r0=$(lab_bytes "$sn" rx)
dp_pair node2 node1 --sizes all --iterations 20 --verify --json || { dp_show; dp_agent_logs node1 node2; lab_fail "all-size sweep"; }
r1=$(lab_bytes "$sn" rx)
check sizes=23 verified=1 || { dp_agent_logs node1 node2; exit 1; }
payload=$(( (16 * 1024 * 1024 - 2) * 20 ))
echo "  $sn received $((r1 - r0)) bytes for a payload of $payload"
((r1 - r0 >= payload)) || lab_fail "the sweep's bytes did not cross $sn"

lab_log "4 QPs, verify"
dp_pair node2 node1 --sizes 4K,64K,1M --iterations 30 --qps 4 --verify --json || { dp_show; dp_agent_logs node1 node2; lab_fail "4-QP sweep"; }
check sizes=3 qps=4 verified=1 || { dp_agent_logs node1 node2; exit 1; }

# The drain after the deadline (up to tx depth x size in flight) counts in the run, as in
# perftest's BW average; 256 KiB keeps it near a second in the lab.
lab_log "duration mode, 1 s per size"
dp_pair node2 node1 --sizes 64K,256K --duration 1 --json || { dp_show; dp_agent_logs node1 node2; lab_fail "duration sweep"; }
check sizes=2 min_ns=1000000000 max_ns=6000000000 || { dp_agent_logs node1 node2; exit 1; }

# Both directions share each QP and the emulated wire: with 1 MiB messages and a deep send
# queue, rxe's ACKs queue behind the other direction's data past the ACK timeout and RC
# retransmits the whole window again and again (no completion in 30 s: the test reports it).
# Smaller messages and a shallower queue keep the lab inside the timeout.
lab_log "bidirectional"
dp_pair node2 node1 --sizes 4K,64K,256K --iterations 100 --tx-depth 32 --bidirectional --json || { dp_show; dp_agent_logs node1 node2; lab_fail "bidirectional sweep"; }
check sizes=3 reverse=3 || { dp_agent_logs node1 node2; exit 1; }

lab_log "table output"
dp_pair node2 node1 --sizes 64K --iterations 20 --verify || { dp_show; lab_fail "table run"; }
dp_show
grep -q "BW average\[Gb/s\]" "$DP_DIR/pair.out" || lab_fail "no table header"
grep -q "ib_write_bw -d " "$DP_DIR/pair.out" || lab_fail "no perftest command line"
echo "PASS"
