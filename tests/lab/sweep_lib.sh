# shellcheck shell=bash
# Helpers for the sweep lab tests (tests/lab/sweep_*_test.sh), sourced after lib.sh and
# datapath_lib.sh: an agent per lab node, an inventory for them, and `gdrbench sweep`.
# The lab moves ~0.4 Gb/s, far below any port's reported rate, so the sweeps here judge
# fleet-relative only (--min-link-fraction 0) and use small iteration counts.

# sw_start_agents NODE...: one agent per node (dp_start_agent), then writes $DP_DIR/inv.yaml.
sw_start_agents() {
  local n
  for n in "$@"; do dp_launch_agent "$n"; done
  for n in "$@"; do dp_wait_agent "$n"; done
  {
    echo "nodes:"
    for n in "$@"; do
      printf '  - name: %s\n    address: %s\n    rails: [{nic: %s}]\n' "$n" "${DP_ADDR[$n]}" "$(lab_dev "$n")"
    done
  } >"$DP_DIR/inv.yaml"
}

SW_FLAGS=(--insecure --sizes 64K --iterations "${SW_ITERATIONS:-150}" --warmup 10 --min-link-fraction 0
  --fleet-min-drop 0.3
  --progress json --retries 0)

# sw_sweep OUT [flags]: runs a sweep into OUT; stdout to OUT.stdout, stderr (progress) to
# OUT.stderr; returns gdrbench's exit code.
sw_sweep() {
  local out=$1
  shift
  timeout "${SW_TIMEOUT:-300}" "$GDRBENCH_BIN/gdrbench" sweep --inventory "$DP_DIR/inv.yaml" \
    "${SW_FLAGS[@]}" --out "$out" "$@" >"$out.stdout" 2>"$out.stderr"
}

sw_show() {
  sed 's/^/  /' "$1.stdout"
  grep -v '"event":"progress"' "$1.stderr" | sed 's/^/  stderr: /' | tail -n 20
}

# sw_check OUT ARGS...: python checks over OUT/run.json (see sweep_check.py).
sw_check() { python3 "$(dirname "${BASH_SOURCE[0]}")/sweep_check.py" "$@"; }

# sw_first_contact SERVER CLIENT CM MAX_MS: a first contact, as in a freshly booted cluster:
# both nodes' neighbour (ARP) entries flushed, then one tiny pair test (2 B x 5, --cm CM); fails
# unless the test (the PairResult's duration_ns, OpenTarget to the last answer) took < MAX_MS.
# Issue 11: before the agents resolved the neighbour first (rdma_cm: short address-resolution
# attempts, cm.h; oob: verbs/neighbour.h before RTR), such a test took 1.5-10.7 s with rdma_cm and
# 1.2-1.3 s out of band, against ~0.2 s once the neighbour was known. With CM=oob the client's
# agent must also have logged its warm-up ("neighbour IP on NETDEV resolved in N ms").
sw_first_contact() {
  local server=$1 client=$2 cm=$3 max_ms=$4 n ms
  for n in "$server" "$client"; do ip neigh flush dev "$(lab_netdev "$n")" 2>/dev/null; done
  dp_pair "$server" "$client" --cm "$cm" --sizes 2 --iterations 5 --warmup 0 --json ||
    { dp_show; lab_fail "first-contact pair $client -> $server (--cm $cm) failed"; }
  ms=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1])).get("duration_ns", 0)) // 1000000)' \
    "$DP_DIR/pair.out")
  echo "  first contact $client -> $server, --cm $cm: test $ms ms (limit $max_ms ms)"
  ((ms > 0 && ms < max_ms)) || lab_fail "first-contact test $client -> $server (--cm $cm) took $ms ms, limit $max_ms"
  if [[ $cm == oob ]]; then
    grep -q "neighbour $(lab_ip "$server") on $(lab_netdev "$client") \(resolved in\|already resolved\)" \
      "$DP_DIR/$client.log" ||
      { dp_agent_logs "$client"; lab_fail "the $client agent logged no neighbour warm-up for $(lab_ip "$server")"; }
  fi
}

# sw_routed_first_contact SERVER CLIENT MAX_EXTRA_MS: issue 34 item 8, out of band across the
# spine (deploy/lab/spine on; agents owning both rails of SERVER and CLIENT). Two first contacts
# from the same agents, every neighbour entry on the way flushed before each (both nodes' rail
# interfaces and the spine's legs): CLIENT's rail 0 -> SERVER's rail 1 (two subnets, routed:
# each end's neighbour is its rail's spine leg, 10.0.R.254), then CLIENT's rail 0 -> SERVER's
# rail 0 (one subnet); one tiny pair test each (2 B x 5, --cm oob), after one unmeasured test
# of each kind (the agents' first use of the devices). Prints both tests' durations
# (PairResult duration_ns, OpenTarget to the last answer) and their ratio. Before the warm-up
# waited for the next hop (agent/verbs/neighbour.h NextHop), each end of the routed test waited
# its whole 1 s budget for the peer's own ARP entry, which an off-link peer never gets, one end
# after the other ("neighbour PEER on NETDEV still unresolved after 1000 ms"). Fails unless the
# client's agent logged its spine leg's entry resolved ("neighbour 10.0.0.254 (gateway to PEER)
# on NETDEV resolved in N ms", N < 1000), neither agent waited out its budget, and the routed
# test took less than the one-subnet test plus MAX_EXTRA_MS.
sw_routed_first_contact() {
  local server=$1 client=$2 max_extra=$3 n want net cdev cnet snet sip
  cdev=$(lab_rail_dev "$client" 0) cnet=$(lab_rail_netdev "$client" 0)
  snet=$(lab_rail_netdev "$server" 1) sip=$(lab_rail_ip "$server" 1)
  # Unmeasured first: each agent's first test on a device pays for loading its code and opening
  # the device in the emulated guest (up to 1.5 s here), which is not what is compared.
  _sw_first_contact "$server" "$client" 1 "$cdev" || exit 1
  _sw_first_contact "$server" "$client" 0 "$cdev" || exit 1
  _sw_flush_neigh "$server" "$client"
  _sw_first_contact "$server" "$client" 1 "$cdev" || exit 1
  cp "$DP_DIR/pair.out" "$DP_DIR/routed.json"
  # Each end's warm-up, as its agent logged it: the client's is its spine leg's entry, not the
  # peer's own; the server's leg entry is usually complete by the time it connects (learnt from
  # the spine's ARP request for the server, which the client's first datagram set off: nothing
  # logged), and it must never have waited for the client's own entry ("still unresolved").
  want="neighbour 10\.0\.0\.254 (gateway to ${sip//./\\.}) on $cnet"
  for n in "$client" "$server"; do
    net=$cnet
    [[ $n == "$server" ]] && net=$snet
    grep "neighbour .* on $net " "$DP_DIR/$n.log" | tail -n 1 | sed "s/^/  $n: /"
    ! grep -q "neighbour .* on $net still unresolved" "$DP_DIR/$n.log" ||
      { dp_agent_logs "$n"; lab_fail "the $n agent waited its whole budget for a neighbour on $net"; }
  done
  grep -q "$want \(resolved in [0-9]\{1,3\} ms\|already resolved\)" "$DP_DIR/$client.log" ||
    { dp_agent_logs "$client"; lab_fail "the $client agent did not resolve its spine leg within 1 s ($want)"; }
  _sw_flush_neigh "$server" "$client"
  _sw_first_contact "$server" "$client" 0 "$cdev" || exit 1
  python3 -c 'import json,sys
r, o = (int(json.load(open(f)).get("duration_ns", 0)) // 1000000 for f in sys.argv[1:3])
print(f"  first contact out of band, {sys.argv[3]}: routed (rail 0 -> rail 1, through the spine) {r} ms, "
      f"one subnet (rail 0 -> rail 0) {o} ms, ratio {r / max(o, 1):.2f}")
if r <= 0 or o <= 0: sys.exit("FAIL: a first-contact test reported no duration")
if r >= o + int(sys.argv[4]):
    sys.exit(f"FAIL: the routed first contact took {r} ms, the one-subnet one {o} ms: "
             f"{sys.argv[4]} ms or more apart")' "$DP_DIR/routed.json" "$DP_DIR/pair.out" \
    "$client -> $server" "$max_extra" || exit 1
}

# _sw_flush_neigh NODE...: every neighbour entry of the nodes' rail interfaces and the spine's.
_sw_flush_neigh() {
  local n r
  for n in "$@"; do
    for ((r = 0; r < ${LAB_RAILS:-1}; r++)); do ip neigh flush dev "$(lab_rail_netdev "$n" "$r")" 2>/dev/null; done
  done
  ip -n spine neigh flush all 2>/dev/null
  return 0
}

# _sw_first_contact SERVER CLIENT SERVER_RAIL CLIENT_DEV: one tiny out-of-band pair test from
# CLIENT_DEV to SERVER's rail SERVER_RAIL (its JSON in $DP_DIR/pair.out).
_sw_first_contact() {
  dp_pair "$1" "$2" --cm oob --target-device "$(lab_rail_dev "$1" "$3")" --initiator-device "$4" \
    --sizes 2 --iterations 5 --warmup 0 --json ||
    { dp_show; lab_fail "first-contact pair $4 -> $1 rail $3 (--cm oob) failed"; }
}
