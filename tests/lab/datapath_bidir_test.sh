#!/usr/bin/env bash
# lab: nodes=2 timeout=420
# Bidirectional tests in lock-step (issue 34): the reverse direction (node2 -> node1) rate-limited
# by a token bucket on node2's egress only (tc tbf on veth2; deploy/lab/shape shapes both ways),
# the forward one not. A per-size barrier makes both directions start and end each size together:
# the agent says so, every size of both directions is reported, and the shaped direction's
# figures stay under its limit at every size. Then a target whose agent stops and dies (SIGSTOP,
# then kill -9) while the initiator waits for the reverse direction: the initiator's keep-alive
# WRITEs go unanswered, RC's retries end them, and the pair ends in seconds with the reason named.
# The kill waits for the initiator's port to fall quiet (its forward pass done): a kill during the
# forward pass is another case (rxe retried 271 times there without failing the WRs; the data
# loop's stall limit ended the test after 84 s).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/datapath_lib.sh"

dp_launch_agent node1
dp_launch_agent node2
dp_wait_agent node1
dp_wait_agent node2
dp_pair node2 node1 --sizes 64K --iterations 10 || { dp_show; lab_fail "a first pair test"; }

lab_log "each direction alone, unshaped"
dp_pair node2 node1 --sizes 256K --iterations 200 --json || { dp_show; lab_fail "forward alone"; }
fwd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sizes"][-1]["bw_avg_gbps"])' "$DP_DIR/pair.out")
rate_mbit=$(awk -v g="$fwd" 'BEGIN{r = int(g * 1000 / 4); print (r < 8 ? 8 : r)}')
echo "  forward alone: $fwd Gb/s; the reverse direction is limited to ${rate_mbit}mbit"
tc qdisc replace dev veth2 root tbf rate "${rate_mbit}mbit" burst 64kb latency 2s ||
  lab_fail "tc tbf on veth2"
trap 'tc qdisc del dev veth2 root 2>/dev/null; dp_cleanup' EXIT

lab_log "the reverse direction alone, shaped"
dp_pair node1 node2 --sizes 64K,256K --iterations 100 --json || { dp_show; lab_fail "reverse alone"; }
cp "$DP_DIR/pair.out" "$DP_DIR/alone.json"

lab_log "bidirectional, the reverse direction shaped"
DP_PAIR_TIMEOUT=300 dp_pair node2 node1 --sizes 64K,256K --iterations 100 --bidirectional --json ||
  { dp_show; dp_agent_logs node1 node2; lab_fail "the bidirectional pair failed"; }
python3 - "$DP_DIR/alone.json" "$DP_DIR/pair.out" "$rate_mbit" <<'PY' || lab_fail "bidirectional figures"
import json, sys
alone = {int(s["size_bytes"]): s["bw_avg_gbps"] for s in json.load(open(sys.argv[1]))["sizes"]}
r = json.load(open(sys.argv[2])); limit = int(sys.argv[3]) / 1000 * 1.25
fwd = {int(s["size_bytes"]): s["bw_avg_gbps"] for s in r["sizes"]}
rev = {int(s["size_bytes"]): s["bw_avg_gbps"] for s in r.get("reverse_sizes", [])}
print("  size     forward  reverse  reverse alone (Gb/s)")
for size in sorted(fwd):
    print(f"  {size:<8} {fwd[size]:<8.3f} {rev.get(size, 0):<8.3f} {alone.get(size, 0):.3f}")
assert sorted(rev) == sorted(fwd) == [65536, 262144], (fwd, rev)
assert all(v > 0 for v in list(fwd.values()) + list(rev.values())), (fwd, rev)
assert all(v <= limit for v in rev.values()), f"reverse above its limit {limit}: {rev}"
PY
grep -q "in lock-step" "$DP_DIR/node1.log" || { dp_agent_logs node1; lab_fail "the initiator does not say the sizes ran in lock-step"; }

lab_log "the target's agent killed while the initiator waits for the reverse direction"
tc qdisc del dev veth2 root || lab_fail "removing the tc tbf of veth2"
# One 256 KiB size, about 3 s of WRITEs each way at the forward rate alone. Once the data flows,
# node2's agent is stopped (SIGSTOP): its kernel still ACKs node1's WRITEs, so node1 ends its
# forward pass and waits at the size's barrier for a reverse pass that no longer posts; node1's
# port falling quiet (200 ms windows under a fortieth of the forward rate alone, after one above
# a tenth of it) says it waits. Then the stopped agent is killed.
iters=$(awk -v g="$fwd" 'BEGIN{n = int(g * 1e9 / 8 * 3 / 262144); print (n < 200 ? 200 : n)}')
win_bytes=$(awk -v g="$fwd" 'BEGIN{print int(g * 1e9 / 8 * 0.2)}')
netdev1=$(lab_netdev node1) || lab_fail "node1's netdev"
tx() { cat "/sys/class/net/$netdev1/statistics/tx_bytes"; }
DP_PAIR_TIMEOUT=120 dp_pair node2 node1 --sizes 256K --iterations "$iters" --bidirectional &
pair=$!
phase=start prev=$(tx)
for ((i = 0; i < 300; i++)); do
  sleep 0.2
  now=$(tx); d=$((now - prev)); prev=$now
  if [[ $phase == start ]] && ((d * 10 > win_bytes)); then
    kill -STOP "${DP_PID[node2]}"; phase=stopped
  elif [[ $phase == stopped ]] && ((d * 40 < win_bytes)); then
    phase=waiting; break
  fi
  kill -0 $pair 2>/dev/null || break
done
[[ $phase == waiting ]] || { kill -9 "${DP_PID[node2]}"; wait $pair; dp_show; lab_fail "the initiator never waited for the reverse direction ($phase)"; }
killed=$(date +%s.%N)
kill -9 "${DP_PID[node2]}"
wait $pair
rc=$?
took=$(awk -v a="$killed" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
echo "  the pair ended ${took} s after the kill (exit $rc): $(tail -n 1 "$DP_DIR/pair.err")"
((rc == 1)) || { dp_show; dp_agent_logs node1; lab_fail "the pair's exit status $rc (expected 1: the test failed)"; }
awk -v t="$took" 'BEGIN{exit !(t <= 20)}' || { dp_show; lab_fail "the pair took ${took} s after the kill (at most 20)"; }
grep -q "the peer stopped answering" "$DP_DIR/pair.err" ||
  { dp_show; dp_agent_logs node1; lab_fail "the reason does not name the dead peer"; }

echo "PASS"
