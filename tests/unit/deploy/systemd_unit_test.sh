#!/bin/bash
# The agent's unit: the limits it needs (issue 12), checked by systemd's own
# parser (systemd-analyze verify) and by the values systemd reads from it; its
# hardening (issue 35): the capability bounding set, the device policy and the
# address families it needs, and `systemd-analyze security`'s exposure score,
# printed and held at or below 4.0 (the unit before the hardening scored 9.1
# UNSAFE with systemd 252).
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
grep -qx 'CapabilityBoundingSet=CAP_IPC_LOCK CAP_SYS_ADMIN CAP_SYSLOG' "$unit" || fail "CapabilityBoundingSet"
grep -qx 'DevicePolicy=closed' "$unit" || fail "no DevicePolicy=closed"
for d in 'char-infiniband_verbs rw' '/dev/infiniband/rdma_cm rw' 'char-nvidia\* rw'; do
  grep -qx "DeviceAllow=$d" "$unit" || fail "no DeviceAllow=$d"
done
fams=$(sed -n 's/^RestrictAddressFamilies=//p' "$unit")
for f in AF_INET AF_INET6 AF_UNIX AF_NETLINK AF_IB; do
  [[ " $fams " == *" $f "* ]] || fail "RestrictAddressFamilies lacks $f: '$fams'"
done
if command -v systemd-analyze >/dev/null; then
  # verify wants the ExecStart binary; a copy pointing at /bin/true.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  sed 's|^ExecStart=[^ ]*|ExecStart=/bin/true|' "$unit" >"$tmp/gdrbench-agent.service"
  out=$(systemd-analyze verify "$tmp/gdrbench-agent.service" 2>&1 | grep -v 'rdma-load-modules\|nvidia-persistenced\|Failed to put bus name\|Failed to connect to bus' || true)
  [[ -z "$out" ]] || fail "systemd-analyze verify: $out"
  score=$(systemd-analyze security --offline=yes "$tmp/gdrbench-agent.service" 2>&1 |
    sed -n 's/^→ Overall exposure level for gdrbench-agent.service: \([0-9.]*\) .*/\1/p')
  [[ "$score" =~ ^[0-9]+\.[0-9]$ ]] || fail "no exposure score from systemd-analyze security"
  echo "systemd-analyze security: gdrbench-agent.service exposure $score (was 9.1 before the hardening)"
  awk -v s="$score" 'BEGIN { exit !(s <= 4.0) }' || fail "exposure $score is above 4.0"
fi
echo "ok: LimitMEMLOCK=infinity LimitNOFILE=$nofile TimeoutStopSec=$stop"
