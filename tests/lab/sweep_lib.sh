# shellcheck shell=bash
# Helpers for the sweep lab tests (tests/lab/sweep_*_test.sh), sourced after lib.sh and
# datapath_lib.sh: an agent per lab node, an inventory for them, and `gdrbench sweep`.
# The lab moves ~0.4 Gb/s, far below any port's reported rate, so the sweeps here judge
# fleet-relative only (--min-link-fraction 0) and use small iteration counts.

# sw_start_agents NODE...: one agent per node (dp_start_agent), then writes $DP_DIR/inv.yaml.
sw_start_agents() {
  local n
  for n in "$@"; do dp_start_agent "$n"; done
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
