#!/usr/bin/env bash
# Where a tiny 4-node sweep's wall time goes in the lab (issue 11 item 9): the tests' own
# timeline from run.json (started_at, duration_ns) against the command's start and end.
#   [TIMELINE_RUNS="rdma_cm oob oob-nopreflight ..."] bench/sweep_timeline.sh   (boots a 4-node lab unless run inside one)
# Prints, per run, when the first test started, each test's duration and the gaps between tests,
# when the reports were written and when the command exited, then every agent's debug log.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
if [[ -z "${LAB_NODES:-}" ]]; then
  exec "$REPO/deploy/lab/lab" run --nodes 4 --timeout "${BENCH_TIMEOUT:-600}" -- "$0" "$@"
fi
source "$REPO/tests/lab/lib.sh"
source "$REPO/tests/lab/datapath_lib.sh"
source "$REPO/tests/lab/sweep_lib.sh"
read -ra N <<<"$LAB_NODES"
DP_LOG_LEVEL=debug sw_start_agents "${N[@]}"
SWEEP=(--insecure --sizes 2 --iterations 5 --warmup 0 --max-concurrent 1 --min-link-fraction 0
  --mad-k 0 --retries 0 --retest-low 0 --progress json)
for run in ${TIMELINE_RUNS:-rdma_cm oob-nopreflight}; do
  cm=${run%-nopreflight}; extra=(); [[ $run == *-nopreflight ]] && extra=(--no-preflight)
  out=$DP_DIR/p-$run-$RANDOM
  t0=$(date +%s.%N)
  "$GDRBENCH_BIN/gdrbench" sweep --inventory "$DP_DIR/inv.yaml" "${SWEEP[@]}" --cm $cm "${extra[@]}" \
     --out "$out" >"$out.stdout" 2>"$out.stderr"
  t1=$(date +%s.%N)
  python3 - "$out" "$t0" "$t1" "$run" <<'PY'
import json, sys, os
out, t0, t1, name = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
run = json.load(open(out + "/run.json"))
def ts(s):
    import datetime
    d = datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    return d.timestamp()
pairs = sorted(run["pairs"], key=lambda p: ts(p["started_at"]))
print(f"== {name}: wall {t1 - t0:.2f} s")
print(f"  run started_at  +{ts(run['started_at']) - t0:.3f} s (journal header: after connect, probe, plan)")
prev_end = None
for p in pairs:
    s = ts(p["started_at"]) - t0; d = int(p.get("duration_ns", 0)) / 1e9
    gap = "" if prev_end is None else f" gap {1000 * (s - prev_end):.0f} ms"
    print(f"  {p['src']['node']}->{p['dst']['node']} +{s:.3f} s test {1000 * d:.0f} ms{gap}")
    prev_end = s + d
print(f"  last test end +{prev_end:.3f} s; finished_at +{ts(run['finished_at']) - t0:.3f} s; exit +{t1 - t0:.3f} s")
for f in sorted(os.listdir(out)):
    print(f"  {f} mtime +{os.path.getmtime(os.path.join(out, f)) - t0:.3f} s")
# Each agent's preflight: the run's time and its slowest checks.
for rep in run.get("preflight", []):
    checks = sorted(rep.get("checks", []), key=lambda c: -int(c.get("duration_ns", 0)))
    slow = ", ".join(f"{c['id']} {int(c.get('duration_ns', 0)) / 1e6:.0f}" for c in checks[:5])
    print(f"  preflight {rep.get('hostname')}: {int(rep.get('duration_ns', 0)) / 1e6:.0f} ms; slowest (ms): {slow}")
PY
  # The controller's own log, timed from the command's start.
  python3 - "$out.stderr" "$t0" <<'PY'
import sys, datetime
t0 = float(sys.argv[2])
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("[20") and "]" in line:
        stamp = line[1:line.index("]")]
        try:
            t = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f").timestamp()
            print(f"  controller +{t - t0:.3f} s {line[line.index(']') + 1:].strip()[:160]}")
            continue
        except ValueError:
            pass
    print(f"  controller {line.rstrip()[:160]}")
PY
done
for n in "${N[@]}"; do echo "== agent log $n"; grep -v "^$" "$DP_DIR/$n.log" | cut -c12-220; done
