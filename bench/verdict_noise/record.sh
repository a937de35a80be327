#!/usr/bin/env bash
# Records M unshaped 4-node lab sweeps for bench/verdict_noise (issue 29): boots the lab once
# (deploy/lab/lab, under the lab lock /tmp/gdr-lab.lock), runs record_lab.sh in it, logs the
# host's load (/proc/loadavg every 10 s) while it runs, and writes every cell's reading
# (sweep, rail, size, src, dst, Gb/s) into OUT/lab-cells.csv with the load into OUT/host-load.txt.
# Usage: bench/verdict_noise/record.sh OUT [M=6] (from the source root; needs a build in
#        $GDRBENCH_BUILD_DIR, default build/)
set -euo pipefail
out=${1:?usage: record.sh OUT [M]}
m=${2:-6}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export GDRBENCH_BUILD_DIR=${GDRBENCH_BUILD_DIR:-$root/build}
export GDRBENCH_SOURCE_DIR=$root
mkdir -p "$out"
raw=$(mktemp -d "$root/build/verdict-noise.XXXXXX")
trap 'rm -rf "$raw"' EXIT
(
  flock 9
  echo "lab lock taken $(date -u +%FT%TZ)" >&2
  { echo "# host /proc/loadavg every 10 s while the lab ran (nproc $(nproc))"
    while sleep 10; do echo "$(date -u +%FT%TZ) $(cat /proc/loadavg)"; done; } >"$out/host-load.txt" &
  logger=$!
  rc=0
  "$root/deploy/lab/lab" run --nodes 4 --timeout $((240 + 150 * m)) -- "$here/record_lab.sh" "$raw" "$m" || rc=$?
  kill "$logger"
  exit $rc
) 9>/tmp/gdr-lab.lock
cp "$raw/sweeps.txt" "$out/sweeps.txt"
/usr/bin/python3 "$here/verdict_noise.py" extract "$raw"/sweep-*.json >"$out/lab-cells.csv"
echo "wrote $out/lab-cells.csv ($(($(wc -l <"$out/lab-cells.csv") - 1)) readings)"
