#!/usr/bin/env bash
# The controller against a real fleet on one host (issue 30, item 1): N simulated agents
# (build/tests/gdrbench-sim-fleet: the shipped AgentServer over mTLS, one port each, the data
# path on the unit tests' fake NIC, every member the captured 8-rail DGX H100 tree) driven by
# the real `gdrbench` CLI:
#   preflight  `gdrbench preflight --inventory` (GetNodeInfo + RunPreflight of every agent)
#   quick      `gdrbench sweep --mode quick --quick-rounds 3 --no-preflight` (N x 8 rails)
#   ring       `gdrbench sweep --mode ring --no-preflight`
# Each: the host's load average (1 min) before it, wall, controller CPU (user+sys), the fleet's
# CPU over the same step (the fleet shares this host: its CPU is the rest of the load), peak RSS
# (/usr/bin/time -v), the most threads, fds and sockets the controller held (sampled from /proc
# every 100 ms), the channels it opened (its log: one TLS connection each) and the most open at
# once against the bound (2 x --parallel), and, for sweeps, the tests,
# their per-test control overhead (a test's wall less its data time, from run.json) and, for
# preflight, TLS handshakes per second (one connection per agent: N over the wall).
# The fake NIC's clock is simulated: a test's data time is what its sizes report, its wall the
# real control path (gRPC, TLS, the agents' session code, the controller).
#
#   bench/fleet_scale.sh [--sizes "256 1024"] [--parallel 64] [--steps "preflight quick ring"]
#                        [--build build] [--keep DIR]
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
fleets="256 1024" parallel=64 steps="preflight quick ring" build=$REPO/build keep=""
while (($#)); do
  case $1 in
    --sizes) fleets=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes \"256 1024\"] [--parallel N] [--steps \"preflight quick ring\"] [--build DIR]" \
         "[--keep DIR]" >&2; exit 2 ;;
  esac
done
BIN=$build/bin TESTS_BIN=$build/tests
source "$REPO/tests/integration/fleet/fleet_lib.sh"
work=${keep:-$(mktemp -d /tmp/fleet-scale.XXXXXX)}
mkdir -p "$work/pki"
trap 'fleet_stop; [[ -z $keep ]] && rm -rf "$work"' EXIT
fleet_make_pki "$work/pki" || { echo "openssl failed" >&2; exit 1; }
read -ra TLS <<<"$(fleet_tls_flags "$work/pki")"
SWEEP=(--cm oob --memory host --sizes 64K --iterations 100 --retries 0 --retest-low 0 --progress none
       --parallel "$parallel" "${TLS[@]}")
ulimit -n "$(ulimit -Hn)"

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)," \
     "ulimit -n $(ulimit -n), --parallel $parallel, commit $(git -C "$REPO" rev-parse --short HEAD)"
printf '%-6s %-9s %6s %8s %7s %7s %7s %8s %7s %7s %14s %6s %8s %s\n' agents step load wall_s cpu_s fleet_s rss_mb \
  threads fds sockets channels/most tests ok "overhead_ms(med/mean/max) or handshakes/s"

fleet_cpu() { python3 -c "import sys; sys.path.insert(0, '$FLEET_LIB_DIR'); import proc_sample; print(proc_sample.cpu_seconds($FLEET_PID))"; }

# measure NAME WORK -- COMMAND...: fleet_measure, with the host's load before it and the fleet's
# CPU over it (M_LOAD, M_FLEET_CPU) and the controller's channels from its log (M_CHANNELS).
measure() {
  M_LOAD=$(cut -d' ' -f1 /proc/loadavg)
  local f0
  f0=$(fleet_cpu)
  fleet_measure "$@"
  M_FLEET_CPU=$(echo "$(fleet_cpu) - $f0" | bc)
  M_CHANNELS=$(grep -o 'agent channels: [0-9]* opened for [0-9]* agents, at most [0-9]*' "$2/$1.err" | tail -1 |
    awk '{print $3 "/" $NF}')
}

report() {  # N STEP TESTS OK EXTRA
  printf '%-6s %-9s %6s %8.2f %7.2f %7.2f %7s %8s %7s %7s %14s %6s %8s %s\n' "$1" "$2" "$M_LOAD" "$M_WALL" "$M_CPU" \
    "$M_FLEET_CPU" "$M_RSS_MB" "$M_THREADS" "$M_FDS" "$M_SOCKETS" "${M_CHANNELS:--}" "${3:--}" "${4:--}" "${5:-}"
}

run_sweep() {  # N NAME MODE-FLAGS...
  local n=$1 name=$2
  shift 2
  measure "$name-$n" "$work" -- "$BIN/gdrbench" --log-level info sweep --inventory "$work/fleet.yaml" "$@" "${SWEEP[@]}" \
    --no-preflight --out "$work/$name-$n"
  local s
  s=$(python3 "$REPO/tests/integration/fleet/fleet_check.py" stats "$work/$name-$n/run.json" 2>/dev/null)
  local get
  get() { grep -o "$1=[0-9.]*" <<<"$s" | cut -d= -f2; }
  report "$n" "$name" "$(get tests)" "$(get ok)" "$(get overhead_ms_median)/$(get overhead_ms_mean)/$(get overhead_ms_max)"
  [[ $M_RC -le 1 ]] || { echo "  $name exited $M_RC:"; tail -3 "$work/$name-$n.err" | sed 's/^/  /'; }
}

has_step() { [[ " $steps " == *" $1 "* ]]; }

for n in $fleets; do
  if ! fleet_start "$n" "$work"; then
    echo "$n agents: the fleet did not start (see above)"
    continue
  fi
  fleet_rss=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$FLEET_PID/status")
  fleet_threads=$(awk '/Threads/ {print $2}' "/proc/$FLEET_PID/status")
  echo "# $n agents up in ${FLEET_START_S} s (fleet process: ${fleet_rss} MB RSS, ${fleet_threads} threads)"
  if has_step preflight; then
    measure "preflight-$n" "$work" -- "$BIN/gdrbench" --log-level info preflight --inventory "$work/fleet.yaml" \
      --parallel "$parallel" "${TLS[@]}"
    answered=$(grep -c ' PASS$' "$work/preflight-$n.out")
    report "$n" preflight "$n" "$answered" "$(echo "scale=0; $n / $M_WALL" | bc) handshakes/s (rc $M_RC)"
  fi
  has_step quick && run_sweep "$n" quick --mode quick --quick-rounds 3
  has_step ring && run_sweep "$n" ring --mode ring
  fleet_threads=$(awk '/Threads/ {print $2}' "/proc/$FLEET_PID/status")
  fleet_hwm=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$FLEET_PID/status")
  echo "# fleet process after the sweeps: ${fleet_hwm} MB peak RSS, ${fleet_threads} threads"
  fleet_stop
done
