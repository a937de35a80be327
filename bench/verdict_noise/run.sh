#!/usr/bin/env bash
# bench/verdict_noise (issue 29, item 5): simulate 30 nights of a 1,024-node x 8-rail cluster under
# gdrbench's verdict rules (rules.py mirrors them) at the lab's noise (fitted from the recorded
# sweeps, tests/testdata/verdict_noise/lab-cells.csv: record.sh made them) and at hardware-like
# noise (Normal, sd HW_SD), then print the table and the plot.
# Usage: bench/verdict_noise/run.sh [OUT]   (default bench/results/$(date +%F)-verdict-noise;
#        writes OUT.txt and OUT.png; the models' JSON and logs in build/verdict_noise/$(basename OUT)/)
# Environment: HW_SD (space-separated, default "0.02 0.01"), SIZE (the lab fit's size, default
# 1048576: the sweeps' verdict size), NIGHTS (30), EPISODES (5: 2-night detection episodes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/bench/results/$(date -u +%F)-verdict-noise}
cells=$root/tests/testdata/verdict_noise/lab-cells.csv
work=$root/build/verdict_noise/$(basename "$out")
size=${SIZE:-1048576}
nights=${NIGHTS:-30}
episodes=${EPISODES:-5}
py=/usr/bin/python3
mkdir -p "$work"
header=$work/header.txt
{
  echo "# bench/verdict_noise/run.sh, $(date -u +%FT%TZ), $(git -C "$root" rev-parse --short HEAD)"
  echo "# host: $(nproc) cores, load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# commands:"
  echo "#   $py bench/verdict_noise/run_model.py lab $cells $size LAB.json $nights $episodes"
  for sd in ${HW_SD:-0.02 0.01}; do
    echo "#   $py bench/verdict_noise/run_model.py normal $sd HW.json $nights $episodes"
  done
  echo "#   $py bench/verdict_noise/verdict_noise.py report $cells OUT HEADER LABEL=JSON..."
  echo "# rules mirrored (bench/verdict_noise/rules.py): sweep verdicts at the verdict size (fleet floor:"
  echo "# MAD k 3, 10 % min drop; no absolute check: links at their own level), one outlier retest"
  echo "# whose reading replaces the first, blame (node/nic: more than half of its cells, >= 2),"
  echo "# server regressions against each link's history and the pinned baseline (max(5 %, 3 x noise),"
  echo "# min history 5, window 10, node: >= 2 partners), streaks, drain of node/nic blames at streak 2."
} >"$header"
# Each model in its own process, side by side (each is one core's work).
pids=()
(cd "$here" && exec $py run_model.py lab "$cells" "$size" "$work/lab.json" "$nights" "$episodes") 2>"$work/lab.log" &
pids+=($!)
pairs=("lab noise (1 MiB fit)=$work/lab.json")
for sd in ${HW_SD:-0.02 0.01}; do
  (cd "$here" && exec $py run_model.py normal "$sd" "$work/hw-$sd.json" "$nights" "$episodes") 2>"$work/hw-$sd.log" &
  pids+=($!)
  pairs+=("hardware-like (Normal, sd $sd)=$work/hw-$sd.json")
done
for p in "${pids[@]}"; do wait "$p" || { echo "run.sh: a model failed (logs in $work)" >&2; exit 1; }; done
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$header"
(cd "$here" && $py verdict_noise.py report "$cells" "$out" "$header" "${pairs[@]}")
