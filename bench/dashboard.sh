#!/usr/bin/env bash
# The dashboard's run page at 1024 nodes x 8 rails (bench/dashboard_first_heatmap.mjs): stores a
# fake-cluster run with the server's ingester, serves it with gdrbench-server, and opens the run
# page in Debian's headless Chromium; prints the page's own timing of its first heatmap (JSON),
# the SVG peer in the same browser, and the load average (the host is shared). Exit 1 when the
# first heatmap took longer than --limit-ms (2000).
#   bench/dashboard.sh [--nodes 1024] [--rails 8] [--peer-nodes 256] [--keep] [--work DIR]
#   cmake --build build --target bench-dashboard     (the same, after building what it needs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
for f in bin/gdrbench-server tests/gdrbench-fake-history; do
  [[ -x $build/$f ]] || { echo "dashboard.sh: build first ($build/$f missing)" >&2; exit 2; }
done
args=("$@")
work=
for ((i = 0; i < ${#args[@]}; i++)); do [[ ${args[i]} == --work ]] && work=${args[i + 1]:-}; done
if [[ -z $work ]]; then
  work=$(mktemp -d /tmp/gdrbench-dashboard-bench.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  args+=(--work "$work")
fi
echo "== $(date -u +%FT%TZ) on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}')" >&2
node "$here/dashboard_first_heatmap.mjs" --bin "$build/bin" --tests-bin "$build/tests" "${args[@]}"
