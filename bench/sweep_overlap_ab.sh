#!/usr/bin/env bash
# Set-up ahead A/B (issue 30 item 2): the same tiny sweep as bench/sweep_cost.sh (12 directed tests of
# 2 B x 5, one at a time) through two controllers against the same agents in one lab boot, alternated
# A B A B, so that the host's load (other builds on the lab's 2 cores) falls on both alike.
#   bench/sweep_overlap_ab.sh A_BIN_DIR [ROUNDS]   (B: this checkout's build/bin; agents: B's)
# Prints per run: wall, and the critical path per test (the tests' span per test less their data time);
# then the medians per controller and mode.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
if [[ -z "${LAB_NODES:-}" ]]; then
  exec "$REPO/deploy/lab/lab" run --nodes 4 --timeout "${BENCH_TIMEOUT:-900}" -- "$0" "$@"
fi
A_BIN=${1:?usage: $0 A_BIN_DIR [ROUNDS]}
ROUNDS=${2:-4}
source "$REPO/tests/lab/lib.sh"
source "$REPO/tests/lab/datapath_lib.sh"
source "$REPO/tests/lab/sweep_lib.sh"
read -ra N <<<"$LAB_NODES"
sw_start_agents "${N[@]}"
SWEEP=(--insecure --sizes 2 --iterations 5 --warmup 0 --max-concurrent 1 --min-link-fraction 0
  --mad-k 0 --retries 0 --retest-low 0 --progress json)
"$A_BIN/gdrbench" --help >/dev/null 2>&1
"$GDRBENCH_BIN/gdrbench" --help >/dev/null 2>&1
# One warm-up sweep per mode (the agents' first verbs and rdma_cm use), not counted.
for cm in oob rdma_cm; do
  "$GDRBENCH_BIN/gdrbench" sweep --inventory "$DP_DIR/inv.yaml" "${SWEEP[@]}" --cm $cm --out "$DP_DIR/warm-$cm" \
    >/dev/null 2>&1
done
results=$DP_DIR/ab.tsv
: >"$results"
for ((i = 1; i <= ROUNDS; i++)); do
  for cm in rdma_cm oob; do
    for side in A B; do
      bin=$GDRBENCH_BIN
      [[ $side == A ]] && bin=$A_BIN
      out=$DP_DIR/ab-$side-$cm-$i
      t0=$(date +%s.%N)
      "$bin/gdrbench" sweep --inventory "$DP_DIR/inv.yaml" "${SWEEP[@]}" --cm $cm --out "$out" >"$out.stdout" 2>&1 ||
        echo "  $side $cm run $i: exit $?" >&2
      t1=$(date +%s.%N)
      python3 - "$out/run.json" "$side" "$cm" "$t0" "$t1" "$(cut -d' ' -f1 /proc/loadavg)" >>"$results" <<'PY'
import datetime, json, sys
path, side, cm, t0, t1, load = sys.argv[1:]
def t(s):
    head, _, frac = s.rstrip("Z").partition(".")
    base = datetime.datetime.strptime(head, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp()
    return base + (float("0." + frac) if frac else 0.0)
run = json.load(open(path))
pairs = run.get("pairs", [])
ok = sum(p.get("status") == "RESULT_STATUS_OK" for p in pairs)
b = min(t(p["started_at"]) for p in pairs)
e = max(t(p["started_at"]) + int(p.get("duration_ns", 0)) / 1e9 for p in pairs)
data = sum(int(s.get("duration_ns", 0)) for p in pairs for s in p.get("sizes", [])) / 1e6
print("%s\t%s\t%.2f\t%.0f\t%d\t%s" % (side, cm, float(t1) - float(t0), ((e - b) * 1e3 - data) / len(pairs), ok, load))
PY
      tail -n 1 "$results" | sed 's/^/  /'
    done
  done
done
echo
echo "date $(date -u +%FT%TZ); A = $A_BIN, B = $GDRBENCH_BIN; $ROUNDS alternated runs per mode"
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]) if l.strip()]
print("%-4s %-8s %12s %18s %6s" % ("ctl", "mode", "wall_s med", "path ms/test med", "ok"))
for cm in ("rdma_cm", "oob"):
    for side in ("A", "B"):
        r = [x for x in rows if x[0] == side and x[1] == cm]
        if not r:
            continue
        print("%-4s %-8s %12.2f %18.0f %6s   (walls %s; paths %s)" % (side, cm, statistics.median(float(x[2]) for x in r),
              statistics.median(float(x[3]) for x in r), "/".join(x[4] for x in r),
              " ".join(x[2] for x in r), " ".join(x[3] for x in r)))
PY
