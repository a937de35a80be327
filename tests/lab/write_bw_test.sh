#!/usr/bin/env bash
# lab: nodes=3 rails=2 timeout=240
# perftest ib_write_bw between lab nodes: with its default TCP exchange the RDMA WRITEs cross
# the right virtual wire (the client's veth sends, the server's veth receives, the third node
# sees none of it), on either rail; with -R (rdma_cm) it succeeds; and rdma_cm with the source
# address bound (rping -I) goes over the wire as well.
# shellcheck source=tests/lab/lib.sh
source "$(dirname "$0")/lib.sh"

size=65536 iters=300
payload=$((size * iters))

# check_wire CLIENT SERVER OTHER [RAIL]: one ib_write_bw CLIENT -> SERVER on RAIL (default 0);
# its payload must leave CLIENT's veth of that rail, arrive on SERVER's and (beyond a tenth of
# it) not on OTHER's, nor on the client's interface of the other rail.
check_wire() {
  local client=$1 server=$2 other=$3 rail=${4:-0}
  local cn sn on xn c0 s0 o0 x0 c1 s1 o1 x1
  cn=$(lab_rail_netdev "$client" "$rail") sn=$(lab_rail_netdev "$server" "$rail")
  on=$(lab_rail_netdev "$other" "$rail") xn=$(lab_rail_netdev "$client" $((1 - rail)))
  c0=$(lab_bytes "$cn" tx) s0=$(lab_bytes "$sn" rx) o0=$(lab_bytes "$on" rx) x0=$(lab_bytes "$xn" tx)
  LAB_RAIL=$rail lab_write_bw "$server" "$client" -s "$size" -n "$iters" || exit 1
  c1=$(lab_bytes "$cn" tx) s1=$(lab_bytes "$sn" rx) o1=$(lab_bytes "$on" rx) x1=$(lab_bytes "$xn" tx)
  echo "ok $client -> $server rail $rail: ${LAB_BW} MB/s; $cn tx +$((c1 - c0)), $sn rx +$((s1 - s0))," \
       "$on rx +$((o1 - o0)), $xn tx +$((x1 - x0)) (payload $payload)"
  ((c1 - c0 >= payload)) || lab_fail "$cn sent $((c1 - c0)) bytes < payload $payload"
  ((s1 - s0 >= payload)) || lab_fail "$sn received $((s1 - s0)) bytes < payload $payload"
  ((o1 - o0 < payload / 10)) || lab_fail "$on (not in the test) received $((o1 - o0)) bytes"
  ((x1 - x0 < payload / 10)) || lab_fail "$xn (the other rail) sent $((x1 - x0)) bytes"
}

lab_log "ib_write_bw, TCP exchange"
check_wire node1 node2 node3
check_wire node1 node3 node2
check_wire node2 node3 node1 1

lab_log "ib_write_bw -R (rdma_cm)"
r0=$(lab_bytes "$(lab_netdev node2)" rx)
lab_write_bw node2 node1 -R -s "$size" -n "$iters" || exit 1
r1=$(lab_bytes "$(lab_netdev node2)" rx)
# perftest's client does not bind its source address in rdma_resolve_addr; with every address
# local to one kernel, rdma_cm then picks the server's device for both ends (see README).
echo "ok node1 -> node2 -R: ${LAB_BW} MB/s ($(lab_netdev node2) rx +$((r1 - r0)))"

lab_log "rping (rdma_cm, source address bound with -I)"
ping_size=32768 count=100
c0=$(lab_bytes "$(lab_netdev node1)" tx) s0=$(lab_bytes "$(lab_netdev node2)" rx)
sout=$(mktemp) cout=$(mktemp)
timeout 60 rping -s -a "$(lab_ip node2)" -p 7174 -V -S "$ping_size" -C "$count" >"$sout" 2>&1 &
spid=$!
crc=1
for ((attempt = 1; attempt <= 20; attempt++)); do
  timeout 60 rping -c -I "$(lab_ip node1)" -a "$(lab_ip node2)" -p 7174 -V -S "$ping_size" \
    -C "$count" >"$cout" 2>&1 && { crc=0; break; }
  kill -0 "$spid" 2>/dev/null || break
  sleep 0.5
done
wait "$spid"
src=$?
c1=$(lab_bytes "$(lab_netdev node1)" tx) s1=$(lab_bytes "$(lab_netdev node2)" rx)
if ((crc != 0 || src != 0)); then
  sed 's/^/  client: /' "$cout" >&2
  sed 's/^/  server: /' "$sout" >&2
  lab_fail "rping node1 -> node2: client exit $crc, server exit $src"
fi
# Each rping iteration moves the client's buffer to the server (an RDMA READ by the server).
echo "ok rping node1 -> node2 -I: $(lab_netdev node1) tx +$((c1 - c0)), $(lab_netdev node2) rx +$((s1 - s0))"
((c1 - c0 >= ping_size * count / 2 && s1 - s0 >= ping_size * count / 2)) ||
  lab_fail "rping with a bound source address did not cross the wire"
echo "PASS"
