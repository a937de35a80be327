#!/usr/bin/env bash
# The cost of a sweep (issue 11 item 9): the same all-pairs sweep of tiny tests (2 B x 5
# iterations, every ordered pair of the lab's nodes, one test at a time) through
#   A: a shell loop that starts perftest's ib_write_bw server and client per pair, the client
#      retried until the server listens (as SuperBench and NVIDIA's multinode scripts do), and
#   B: `gdrbench sweep --cm rdma_cm` and `gdrbench sweep --cm oob` (agents already running),
# with the wall time of each, the ratio A/B (goal >= 10) and gdrbench's per-test control
# overhead from the run's JSON: a test's duration_ns minus its sizes' data time (first post to
# last completion).
# Every run starts from an empty neighbour (ARP) table (`ip neigh flush`), so each one pays
# first contact, as a freshly booted cluster does; the table before and after is printed.
#
#   bench/sweep_cost.sh [--nodes 4] [--order first-oob,loop,rdma_cm,oob,oob-nopreflight] [--no-flush]
# (a run name with -nopreflight adds --no-preflight: the wall without the preflight fan-out; first-CM
# is the agents' first sweep since they started, shown apart: a nightly sweep meets agents that have
# been up for a day).
# Overhead column: per test, wall minus data time in ms, upper median / mean / max; path column: the
# tests' span (first start to last end) per test less the data time: the critical path per test.
# Outside the lab it boots one (deploy/lab/lab run --nodes N) and runs itself inside.
# Exit 0 when every run finished with all its tests OK; prints the table either way.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)

nodes=4 order=first-oob,loop,rdma_cm,oob,oob-nopreflight flush=1
args=("$@")
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --order) order=$2; shift 2 ;;
    --no-flush) flush=0; shift ;;
    *) echo "usage: $0 [--nodes N] [--order loop,rdma_cm,oob] [--no-flush]" >&2; exit 2 ;;
  esac
done

if [[ -z "${LAB_NODES:-}" ]]; then
  exec "$REPO/deploy/lab/lab" run --nodes "$nodes" --timeout "${BENCH_TIMEOUT:-900}" -- "$0" "${args[@]}"
fi

source "$REPO/tests/lab/lib.sh"
source "$REPO/tests/lab/datapath_lib.sh"
source "$REPO/tests/lab/sweep_lib.sh"
read -ra N <<<"$LAB_NODES"

now() { date +%s.%N; }
neigh() { ip -4 neigh show | grep -c . ; }
flush_neigh() {
  ((flush)) || return 0
  local n
  for n in "${N[@]}"; do ip neigh flush dev "$(lab_netdev "$n")" 2>/dev/null; done
}

sw_start_agents "${N[@]}"
SWEEP=(--insecure --sizes 2 --iterations 5 --warmup 0 --max-concurrent 1 --min-link-fraction 0
  --mad-k 0 --retries 0 --retest-low 0 --progress json)

declare -A WALL OVER TESTS SPAN
loop_run() {
  local s d i rc port=19000 t0 ok=0
  t0=$(now)
  for s in "${N[@]}"; do
    for d in "${N[@]}"; do
      [[ $s == "$d" ]] && continue
      port=$((port + 1))
      timeout 60 ib_write_bw -d "$(lab_dev "$d")" -x 1 -s 2 -n 5 -F -p "$port" \
        >"$DP_DIR/pt.server" 2>&1 &
      local srv=$!
      rc=1
      for ((i = 0; i < 100 && rc != 0; i++)); do
        timeout 60 ib_write_bw -d "$(lab_dev "$s")" -x 1 -s 2 -n 5 -F -p "$port" "$(lab_ip "$d")" \
          >"$DP_DIR/pt.client" 2>&1
        rc=$?
        ((rc == 0)) || sleep 0.1
      done
      wait "$srv"
      local src=$?
      if ((rc == 0 && src == 0)); then ok=$((ok + 1)); else
        echo "  perftest $s -> $d: client exit $rc, server exit $src" >&2
        sed 's/^/    /' "$DP_DIR/pt.client" "$DP_DIR/pt.server" | tail -n 8 >&2
      fi
    done
  done
  WALL[loop]=$(awk -v a="$t0" -v b="$(now)" 'BEGIN{printf "%.2f", b - a}')
  TESTS[loop]=$ok
  OVER[loop]=-
  SPAN[loop]=-
}

# sweep_run NAME: NAME is rdma_cm, oob, or either with -nopreflight (the same with --no-preflight,
# to show what the preflight fan-out adds to the wall time).
sweep_run() {
  local cm=${1%-nopreflight} t0 rc out=$DP_DIR/sweep-$1 extra=()
  cm=${cm#first-}
  [[ $1 == *-nopreflight ]] && extra=(--no-preflight)
  t0=$(now)
  timeout 600 "$GDRBENCH_BIN/gdrbench" sweep --inventory "$DP_DIR/inv.yaml" "${SWEEP[@]}" --cm "$cm" \
    "${extra[@]}" --out "$out" >"$out.stdout" 2>"$out.stderr"
  rc=$?
  WALL[$1]=$(awk -v a="$t0" -v b="$(now)" 'BEGIN{printf "%.2f", b - a}')
  ((rc == 0)) || { echo "  gdrbench sweep $1 exit $rc" >&2; sw_show "$out" >&2; }
  # Per test: wall (duration_ns) - data (sum of the sizes' duration_ns), both directions.
  read -r TESTS[$1] OVER[$1] SPAN[$1] < <(python3 - "$out/run.json" "$1" <<'EOF'
import json, sys
try:
    run = json.load(open(sys.argv[1]))
except OSError:
    print(0, "-"); sys.exit()
ok, over = 0, []
for p in run.get("pairs", []):
    if p.get("status") == "RESULT_STATUS_OK":
        ok += 1
    wall = int(p.get("duration_ns", 0))
    data = sum(int(s.get("duration_ns", 0)) for s in p.get("sizes", []) + p.get("reverse_sizes", []))
    over.append((wall - data) / 1e6)
    print("  %s %s -> %s: test %.0f ms, data %.3f ms" % (sys.argv[2], p["src"]["node"], p["dst"]["node"],
          wall / 1e6, data / 1e6), file=sys.stderr)
over.sort()
# The critical path per test: from the first test's start to the last one's end, over the tests, less
# the mean data time (set-up done ahead of a test, while another moved data, is not in it; gaps between
# tests are).
import datetime
def t(p):
    s = p.get("started_at", "")
    if not s:
        return None
    head, _, frac = s.rstrip("Z").partition(".")
    base = datetime.datetime.strptime(head, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp()
    return base + (float("0." + frac) if frac else 0.0)
spans = [(t(p), t(p) + int(p.get("duration_ns", 0)) / 1e9) for p in run.get("pairs", []) if t(p) is not None]
n = len(run.get("pairs", []))
data_ms = sum(sum(int(s.get("duration_ns", 0)) for s in p.get("sizes", []) + p.get("reverse_sizes", []))
              for p in run.get("pairs", [])) / 1e6
span = "-"
if spans and n:
    span = "%.0f" % (((max(e for _, e in spans) - min(b for b, _ in spans)) * 1e3 - data_ms) / n)
print(ok, ("%.0f/%.0f/%.0f" % (over[len(over) // 2], sum(over) / len(over), over[-1]) if over else "-") + " " + span)
EOF
  )
}

total=$((${#N[@]} * (${#N[@]} - 1)))
lab_log "$total directed tests (2 B x 5) per run, one at a time; order $order"
IFS=, read -ra runs <<<"$order"
# Both tools' binaries and libraries read once before any run is timed: the guest reads the host's
# root over 9p, so a first start pays for a cold page cache (0.5 s and more for gdrbench's gRPC
# libraries) that a node's local disk does not, and that the loop pays once, in its first pair.
ib_write_bw --help >/dev/null 2>&1
"$GDRBENCH_BIN/gdrbench" --help >/dev/null 2>&1
for r in "${runs[@]}"; do
  flush_neigh
  before=$(neigh)
  lab_log "run $r (neighbour entries before: $before)"
  case $r in
    loop) loop_run ;;
    rdma_cm | oob | rdma_cm-nopreflight | oob-nopreflight | first-rdma_cm | first-oob) sweep_run "$r" ;;
    *) lab_fail "--order: loop, [first-]rdma_cm, [first-]oob, rdma_cm-nopreflight or oob-nopreflight, not '$r'" ;;
  esac
  lab_log "run $r: ${WALL[$r]} s, ${TESTS[$r]}/$total OK (neighbour entries after: $(neigh))"
done

# What the agents did about first contact (neighbour warm-up, address resolution retries).
grep -h "neighbour \|resolved on attempt" "$DP_DIR"/node*.log 2>/dev/null | sed 's/^/  agent: /' | head -n 30
echo
echo "date $(date -u +%FT%TZ), guest load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo ?)"
echo "$total directed tests of 2 B x 5 iterations, one at a time, neighbour tables flushed before each run: $((flush))"
printf '%-42s %8s %6s %10s %28s %12s\n' run wall_s ok ratio "overhead ms/test med/mean/max" "path ms/test"
ok=1
for r in "${runs[@]}"; do
  name=$r
  name="gdrbench sweep --cm ${r%-nopreflight}"
  [[ $r == *-nopreflight ]] && name+=" --no-preflight"
  [[ $r == first-* ]] && name="gdrbench sweep --cm ${r#first-}, first"
  [[ $r == loop ]] && name="perftest loop"
  ratio=-
  [[ $r != loop && -n "${WALL[loop]:-}" ]] &&
    ratio=$(awk -v a="${WALL[loop]}" -v b="${WALL[$r]}" 'BEGIN{printf "%.2fx", a / b}')
  printf '%-42s %8s %6s %10s %28s %12s\n' "$name" "${WALL[$r]}" "${TESTS[$r]}/$total" "$ratio" "${OVER[$r]}" "${SPAN[$r]}"
  [[ "${TESTS[$r]}" == "$total" ]] || ok=0
done
echo "ratio = perftest loop wall / gdrbench wall (goal >= 10x; issue 30: >= 20x)"
echo "overhead: a test's duration_ns less its data time (a target opened ahead is not in it); path: first test's"
echo "start to last test's end over the tests, less the mean data time (the gaps between tests are in it)"
[[ $order == first-* ]] && echo "first: the agents' first sweep since they started (their first preflight and first verbs and rdma_cm use, and in the lab the guest's cold 9p caches); the others: agents that have run one"
((ok)) || { echo "FAIL: a run had failed tests"; exit 1; }
