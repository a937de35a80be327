#!/usr/bin/env bash
# integration.fleet_scale (issue 30): 256 simulated agents (gdrbench-sim-fleet: the shipped
# AgentServer over mTLS, one port each, fake-NIC data path, every member the captured 8-rail
# DGX H100 tree) through the real CLI:
#   1. `gdrbench node-info` of one member says it is simulated;
#   2. `gdrbench preflight --inventory`: every member answers, all PASS;
#   3. `gdrbench sweep --mode quick --quick-rounds 3` over 2 of the 8 rails (the inventory's
#      rails: 1,536 tests, so that it fits CI on 2 cores; bench/fleet_scale.sh runs all 8),
#      member sim0100 dying in the middle (its port closes and its NICs die after it opened
#      its 3rd target, in the second of three rounds): every planned test ran once (the plan
#      from --dry-run --json), every test without sim0100 passed, sim0100's later ones failed
#      and are named; at --parallel 32 the controller held no more TCP sockets than its
#      channel bound (4 x --parallel = 128 for 256 agents), not one per agent.
#
#   fleet_scale_test.sh BUILD_DIR SOURCE_DIR [MEMBERS=256]
set -uo pipefail
build=${1:?usage: $0 BUILD_DIR SOURCE_DIR [MEMBERS]}
src=${2:?usage: $0 BUILD_DIR SOURCE_DIR [MEMBERS]}
members=${3:-256}
BIN=$build/bin TESTS_BIN=$build/tests
source "$src/tests/integration/fleet/fleet_lib.sh"
dead_index=100 dead=sim0100
work=$(mktemp -d /tmp/fleet-scale-test.XXXXXX)
trap 'fleet_stop; rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
step() { echo "[$(date +%T.%N | cut -c1-12)] $*"; }

ulimit -n "$(ulimit -Hn)"
mkdir -p "$work/pki"
fleet_make_pki "$work/pki" || fail "openssl could not make the test PKI"
read -ra TLS <<<"$(fleet_tls_flags "$work/pki")"
rails=(mlx5_0 mlx5_3)
nics=$(IFS=,; echo "${rails[*]}")

step "starting $members simulated agents over mTLS ($dead stops after its 3rd target)"
fleet_start "$members" "$work" --stop-member "$dead_index" --stop-after-targets 3 || fail "the fleet did not start"
step "fleet up in ${FLEET_START_S} s"
{
  cat "$work/fleet.yaml"
  echo "rails:"
  for r in "${rails[@]}"; do echo "  - {nic: $r}"; done
} >"$work/two-rails.yaml"

first=$(grep -o "127.0.0.1:[0-9]*" "$work/fleet.yaml" | head -1)
"$BIN/gdrbench" node-info --agent "$first" "${TLS[@]}" >"$work/node-info.txt" 2>&1 ||
  fail "node-info of $first: $(tail -3 "$work/node-info.txt")"
grep -q "simulated fleet member" "$work/node-info.txt" || fail "node-info does not say the member is simulated"
# Without the client certificate the agent refuses: it is mTLS, not TLS.
if "$BIN/gdrbench" node-info --agent "$first" --tls-ca "$work/pki/ca.pem" >"$work/no-cert.txt" 2>&1; then
  fail "a client without a certificate was served"
fi

step "preflight fan-out"
"$BIN/gdrbench" preflight --inventory "$work/fleet.yaml" --parallel 64 "${TLS[@]}" >"$work/preflight.txt" 2>&1 ||
  fail "preflight exited $?: $(tail -5 "$work/preflight.txt")"
passed=$(grep -c ' PASS$' "$work/preflight.txt")
((passed == members)) || fail "preflight: $passed of $members members PASS"
step "preflight: $passed of $members PASS"

step "quick sweep, 3 rounds x ${#rails[@]} rails; $dead dies in the middle"
"$BIN/gdrbench" sweep --inventory "$work/two-rails.yaml" --mode quick --quick-rounds 3 --dry-run --json \
  "${TLS[@]}" >"$work/plan.json" 2>"$work/plan.err" || fail "dry run: $(tail -3 "$work/plan.err")"
"$BIN/gdrbench" sweep --inventory "$work/two-rails.yaml" --mode quick --quick-rounds 3 --cm oob --memory host \
  --sizes 64K --iterations 100 --retries 0 --retest-low 0 --parallel 32 --progress none --no-preflight \
  "${TLS[@]}" --out "$work/run" >"$work/sweep.out" 2>"$work/sweep.err" &
sweep_pid=$!
python3 "$src/tests/integration/fleet/proc_sample.py" "$sweep_pid" >"$work/sweep.sample" &
sample_pid=$!
wait "$sweep_pid"
rc=$?
wait "$sample_pid"
sockets=$(grep -o 'sockets=[0-9]*' "$work/sweep.sample" | cut -d= -f2)
step "sweep exited $rc; at most ${sockets:-?} sockets"
[[ -s $work/run/run.json ]] || fail "no run.json (exit $rc): $(tail -5 "$work/sweep.err")"
((rc != 0)) || fail "the sweep exited 0 with $dead dead"
grep -q "$dead" "$work/fleet.log" || fail "$dead was never stopped: $(tail -3 "$work/fleet.log")"
python3 "$src/tests/integration/fleet/fleet_check.py" complete "$work/run/run.json" "$work/plan.json" \
  --nics "$nics" --dead "$dead" || fail "the run is not the plan (above)"
grep -q "$dead" "$work/run/summary.md" || fail "summary.md does not name $dead"
# The channel bound, 128, with room for a closed channel's socket not yet gone (gRPC closes
# it asynchronously) and the TLS probe that names the dead agent.
[[ -n $sockets ]] && ((sockets <= 128 + 16)) ||
  fail "the controller held ${sockets:-?} sockets at once for $members agents at --parallel 32 (bound 128)"
step "PASS"
