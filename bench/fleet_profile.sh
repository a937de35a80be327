#!/usr/bin/env bash
# Where the CPU of the real-fleet benchmark goes (issue 30, item 1): a system-wide flat profile
# (perf record -a) of the N-agent preflight fan-out and of SECONDS in the middle of the N-agent
# quick x 3 sweep, each split by process (the controller, the fleet, anything else on the host)
# and, for the controller and the fleet, by library. The fleet is bench/fleet_scale.sh's
# (tests/integration/fleet/fleet_lib.sh); run under the lab lock, as fleet_scale.sh:
#   flock /tmp/gdr-lab.lock bench/fleet_profile.sh [--agents 1024] [--seconds 40] [--build build]
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
n=1024 secs=40 build=$REPO/build
while [[ $# -gt 0 ]]; do
  case $1 in
    --agents) n=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    *) echo "usage: $0 [--agents N] [--seconds S] [--build DIR]" >&2; exit 2 ;;
  esac
done
command -v perf >/dev/null || { echo "perf is not installed (Debian: linux-perf)" >&2; exit 1; }
BIN=$build/bin TESTS_BIN=$build/tests
source "$REPO/tests/integration/fleet/fleet_lib.sh"
work=$(mktemp -d /tmp/fleet-profile.XXXXXX)
trap 'fleet_stop; rm -rf "$work"' EXIT
mkdir -p "$work/pki"
fleet_make_pki "$work/pki" || exit 1
read -ra TLS <<<"$(fleet_tls_flags "$work/pki")"
ulimit -n "$(ulimit -Hn)"
fleet_start "$n" "$work" || exit 1

# split DATA CONTROLLER_PID: shares of the samples by process, then by library (1 % and up) within the
# controller and the fleet.
split() {
  perf script -i "$1" -F pid,ip,dso 2>/dev/null | awk -v ctl="$2" -v fleet="$FLEET_PID" '
    { split($1, a, "/"); d = $NF; gsub(/[()]/, "", d); sub(/.*\//, "", d)
      who = a[1] == ctl ? "controller" : a[1] == fleet ? "fleet" : "other"; n[who]++; t++; lib[who "\t" d]++ }
    END { for (w in n) printf "P\t%s\t%.1f\n", w, 100 * n[w] / t
          for (k in lib) { split(k, b, "\t"); if (b[1] != "other" && lib[k] >= n[b[1]] / 100)
            printf "L\t%s\t%.1f\t%s\n", b[1], 100 * lib[k] / n[b[1]], b[2] } }' |
    sort -t$'\t' -k1,1r -k2,2 -k3,3nr |
    awk -F'\t' '$1 == "P" { printf "  %-10s %5.1f %% of the samples\n", $2, $3 } $1 == "L" { printf "    %-10s %5.1f %% %s\n", $2, $3, $4 }'
}

echo "# $(date -u +%FT%TZ) $n agents, load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git -C "$REPO" rev-parse --short HEAD)"
"$BIN/gdrbench" preflight --inventory "$work/fleet.yaml" --parallel 64 "${TLS[@]}" >"$work/pre.out" 2>&1 &
ctl=$!
perf record -q -F 499 -a -o "$work/pre.data" -- bash -c "while kill -0 $ctl 2>/dev/null; do sleep 0.05; done" 2>/dev/null
wait $ctl
echo "preflight fan-out (exit $?):"
split "$work/pre.data" "$ctl"

echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN/gdrbench" sweep --inventory "$work/fleet.yaml" --mode quick --quick-rounds 3 --cm oob --memory host \
  --sizes 64K --iterations 100 --retries 0 --retest-low 0 --progress none --parallel 64 "${TLS[@]}" \
  --no-preflight --out "$work/quick" >"$work/quick.out" 2>&1 &
ctl=$!
sleep 20  # past the probe, into the rounds
perf record -q -F 499 -a -o "$work/quick.data" -- sleep "$secs" 2>/dev/null
kill "$ctl" 2>/dev/null
wait "$ctl" 2>/dev/null
echo "quick x 3 sweep, $secs s from 20 s in:"
split "$work/quick.data" "$ctl"
