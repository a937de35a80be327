#!/bin/bash
# The agent's unit: the limits it needs (issue 12), checked by systemd's own
# parser (systemd-analyze verify) and by the values systemd reads from it.
set -euo pipefail
unit=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -f "$unit" ]] || fail "no $unit"
# RDMA registration pins memory; 1,100 connections exhausted the default
# 1024 files (the agent keeps kReservedFds free below this, common/limits.h).
grep -qx 'LimitMEMLOCK=infinity' "$unit" || fail "LimitMEMLOCK is not infinity"
nofile=$(sed -n 's/^LimitNOFILE=//p' "$unit")
[[ "$nofile" =~ ^[0-9]+$ ]] || fail "no numeric LimitNOFILE (got '$nofile')"
(( nofile >= 65536 )) || fail "LimitNOFILE=$nofile is below 65536"
# The drain bound (kDrainDeadlineMs, 5 s) fits in the stop timeout.
stop=$(sed -n 's/^TimeoutStopSec=//p' "$unit")
[[ "$stop" =~ ^[0-9]+$ ]] && (( stop >= 10 && stop <= 30 )) || fail "TimeoutStopSec '$stop' not 10..30"
if command -v systemd-analyze >/dev/null; then
  # verify wants the ExecStart binary; a copy pointing at /bin/true.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  sed 's|^ExecStart=[^ ]*|ExecStart=/bin/true|' "$unit" >"$tmp/gdrbench-agent.service"
  out=$(systemd-analyze verify "$tmp/gdrbench-agent.service" 2>&1 | grep -v 'rdma-load-modules\|nvidia-persistenced\|Failed to put bus name\|Failed to connect to bus' || true)
  [[ -z "$out" ]] || fail "systemd-analyze verify: $out"
fi
echo "ok: LimitMEMLOCK=infinity LimitNOFILE=$nofile TimeoutStopSec=$stop"
