#!/usr/bin/env bash
# lab: nodes=3 timeout=240
# deploy/lab/shape makes one link bad on purpose: a rate limit toward one peer lowers that pair
# only, a limit on the whole link lowers every pair of the node, --down takes the node's port
# out (ib_write_bw fails) and --up brings it back.
# shellcheck source=tests/lab/lib.sh
source "$(dirname "$0")/lib.sh"

size=65536
# node3 -> node2 is the unshaped reference. The emulated guest's speed follows the host's load
# (2 CPUs for everything), so the limit is set from what was measured now: a quarter of it,
# which a working limit must show as less than half.
lab_write_bw node2 node3 -s "$size" -n 300 || exit 1
other=$LAB_BW
rate_mbit=$(awk -v bw="$other" 'BEGIN{r = int(bw * 8 / 4); print (r < 8 ? 8 : r)}')
limit_mbs=$(awk -v r="$rate_mbit" 'BEGIN{print r / 8 * 1.25}')   # MB/s, 25 % tolerance
echo "ok node3 -> node2 (not shaped): $other MB/s; limit ${rate_mbit}mbit"

lab_log "node2 <-> node1 limited to ${rate_mbit}mbit"
shape node2 --to node1 --rate "${rate_mbit}mbit" || lab_fail "shape --to failed"
lab_write_bw node2 node1 -s "$size" -n 60 || exit 1
peer_shaped=$LAB_BW
echo "ok node1 -> node2 shaped: $peer_shaped MB/s; node3 -> node2 (not shaped): $other MB/s"
lab_ge "$limit_mbs" "$peer_shaped" ||
  lab_fail "shaped pair measured $peer_shaped MB/s, above the ${rate_mbit}mbit limit ($limit_mbs MB/s)"
lab_ge "$other" "$(awk -v s="$peer_shaped" 'BEGIN{print 2 * s}')" ||
  lab_fail "unshaped node3 -> node2 ($other MB/s) is not above twice the shaped pair ($peer_shaped MB/s)"

lab_log "node2's whole link limited to ${rate_mbit}mbit"
shape node2 --rate "${rate_mbit}mbit" || lab_fail "shape failed"
lab_write_bw node2 node3 -s "$size" -n 60 || exit 1
echo "ok node3 -> node2 with node2's link shaped: $LAB_BW MB/s"
lab_ge "$limit_mbs" "$LAB_BW" ||
  lab_fail "node3 -> node2 measured $LAB_BW MB/s, above the ${rate_mbit}mbit link limit"
lab_ge "$other" "$(awk -v s="$LAB_BW" 'BEGIN{print 2 * s}')" ||
  lab_fail "node3 -> node2 with the link shaped ($LAB_BW MB/s) is not below half of unshaped ($other MB/s)"
shape node2 --clear || lab_fail "shape --clear failed"

lab_log "node2 down"
shape node2 --down || lab_fail "shape --down failed"
for ((i = 0; i < 50; i++)); do
  state=$(<"/sys/class/infiniband/$(lab_dev node2)/ports/1/state")
  [[ "$state" != *ACTIVE* ]] && break
  sleep 0.1
done
[[ "$state" != *ACTIVE* ]] || lab_fail "$(lab_dev node2) still ACTIVE 5 s after shape --down"
echo "ok $(lab_dev node2) port state after --down: $state"
if LAB_BW_TIMEOUT=30 lab_write_bw node2 node1 -s "$size" -n 20 2>/dev/null; then
  lab_fail "ib_write_bw to a node whose link is down succeeded ($LAB_BW MB/s)"
fi
echo "ok ib_write_bw node1 -> node2 fails while node2 is down"

lab_log "node2 up"
shape node2 --up || lab_fail "shape --up failed"
lab_write_bw node2 node1 -s "$size" -n 100 || exit 1
echo "ok node1 -> node2 after --up: $LAB_BW MB/s"
echo "PASS"
