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
