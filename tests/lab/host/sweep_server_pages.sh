#!/usr/bin/env bash
# After lab.sweep_server, on the host: every dashboard page on the store of the guest's
# gdrbench-server (three real sweeps: the baseline, node2<->node3 shaped, node4 shaped), in one
# Debian headless Chromium (tests/browser/lab_pages.mjs). Screenshots, checked by the script:
# $GDRBENCH_BUILD_DIR/lab/sweep_server/shots/.
build=${GDRBENCH_BUILD_DIR:-build}
dir=$build/lab/sweep_server
exec node "$(dirname "$0")/../../browser/lab_pages.mjs" --bin "$build/bin" --dir "$dir" --shots "$dir/shots"
