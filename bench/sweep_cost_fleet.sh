#!/usr/bin/env bash
# bench/sweep_cost.sh's sweep (12 directed tests of 2 B x 5, one at a time) against 4 simulated agents on
# this host (build/tests/gdrbench-sim-fleet: the shipped agent server over real gRPC, its data path the
# fake NIC, out of band), for the controller's side of the cost when the lab is not to be had: two
# controllers alternated A B A B against this checkout's agents, each run's wall, its critical path per
# test (the tests' span per test less their data time) and the controller's own timeline (first test,
# last test's end, exit).
#   bench/sweep_cost_fleet.sh A_BIN_DIR [ROUNDS]   (B: this checkout's build/bin)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
A_BIN=${1:?usage: $0 A_BIN_DIR [ROUNDS]}
ROUNDS=${2:-5}
B_BIN=$REPO/build/bin
work=$(mktemp -d /tmp/sweep-cost-fleet.XXXXXX)
"$REPO/build/tests/gdrbench-sim-fleet" --members 4 --fs-root "$REPO/tests/testdata/preflight/dgx-h100" --insecure \
  --inventory-out "$work/fleet.yaml" 2>"$work/fleet.log" &
fleet=$!
trap 'kill -TERM $fleet 2>/dev/null; wait $fleet 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [[ -s $work/fleet.yaml ]] && break; sleep 0.1; done
# One rail each (the tree has 8): 12 tests, as in the lab.
sed -i 's/^nodes:/rails: [{nic: mlx5_0}]\nnodes:/' "$work/fleet.yaml"
SWEEP=(--insecure --sizes 2 --iterations 5 --warmup 0 --max-concurrent 1 --min-link-fraction 0 --mad-k 0
  --retries 0 --retest-low 0 --progress none --cm oob)
echo "# $(date -u +%FT%TZ), host load $(cut -d' ' -f1-3 /proc/loadavg), A = $A_BIN, B = $B_BIN ($(git -C "$REPO" rev-parse --short HEAD))"
printf '%-4s %3s %7s %7s %6s %8s %8s %8s\n' ctl run wall_s path_ms ok first_s last_s exit_s
for ((i = 0; i <= ROUNDS; i++)); do  # run 0 warms both up, not counted
  for side in A B; do
    bin=$B_BIN
    [[ $side == A ]] && bin=$A_BIN
    out=$work/$side-$i
    t0=$(date +%s.%N)
    "$bin/gdrbench" sweep --inventory "$work/fleet.yaml" "${SWEEP[@]}" --out "$out" >"$out.stdout" 2>&1 ||
      { echo "  $side run $i: exit $?" >&2; tail -n 5 "$out.stdout" >&2; }
    t1=$(date +%s.%N)
    ((i == 0)) && continue
    python3 - "$out/run.json" "$side" "$i" "$t0" "$t1" <<'PY'
import datetime, json, sys
path, side, i, t0, t1 = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
def t(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
pairs = json.load(open(path)).get("pairs", [])
ok = sum(p.get("status") == "RESULT_STATUS_OK" for p in pairs)
b = min(t(p["started_at"]) for p in pairs)
e = max(t(p["started_at"]) + int(p.get("duration_ns", 0)) / 1e9 for p in pairs)
data = sum(int(s.get("duration_ns", 0)) for p in pairs for s in p.get("sizes", [])) / 1e6
print("%-4s %3s %7.3f %7.1f %6d %8.3f %8.3f %8.3f" % (side, i, t1 - t0, ((e - b) * 1e3 - data) / len(pairs), ok,
      b - t0, e - t0, t1 - t0))
PY
  done
done
