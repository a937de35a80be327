#!/bin/bash
# deploy/kubernetes/base/agent/tls-reloader.sh: a Secret volume's ..data swap (as the kubelet does on a
# cert-manager renewal) makes it send SIGHUP to the process of that name, once per change;
# no change, no signal. The "agent" is a copy of bash under a name unique to this test run
# (never a real agent of this machine) that counts HUPs.
set -uo pipefail
src=${1:?source dir}
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/tls/..2026_01_01" "$work/tls/..2026_03_17"
ln -s ..2026_01_01 "$work/tls/..data"
name=rlt-$$
cp /bin/bash "$work/$name"
# It waits with the read builtin on a pipe of its own, never forking: a forked child carries the
# name until it execs (sleep), and the reloader, which signals every process of the name, once
# caught one ("SIGHUP sent to 2 ... process(es)").
"$work/$name" -c "trap 'echo hup >>$work/hups' HUP; exec {fd}<> <(:); while :; do read -r -t 0.05 -u \$fd; done" &
pids+=($!)
/bin/bash "$src/deploy/kubernetes/base/agent/tls-reloader.sh" "$work/tls" "$name" 0.2 >"$work/log" 2>&1 &
pids+=($!)
sleep 1
[[ ! -s "$work/hups" ]] || fail "a signal without a change"
ln -sfn ..2026_03_17 "$work/tls/..data.tmp" && mv -T "$work/tls/..data.tmp" "$work/tls/..data"
for _ in $(seq 1 40); do [[ -s "$work/hups" ]] && break; sleep 0.1; done
sleep 0.6
n=$(wc -l <"$work/hups" 2>/dev/null || echo 0)
cat "$work/log"
[[ "$n" == 1 ]] || fail "expected one SIGHUP after one renewal, got $n"
grep -q "SIGHUP sent to 1 $name" "$work/log" || fail "no log line for the signal"
echo "1 passed, 0 failed"
