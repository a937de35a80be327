#!/usr/bin/env bash
# Checks deploy/lab/lab's contract from the host (ctest: lab.runner, label lab):
#  1. A lab killed with SIGKILL (while its guest boots) leaves no qemu behind.
#  2. The next run works and removes the killed run's directory. In it, COMMAND's exit code,
#     stdout and stderr come back separately; the lab's own lines are on stderr, prefixed
#     "lab: "; the working directory, the host environment and the LAB_* variables reach the
#     guest; the checkout and --share folders are writable; `shape` is on PATH; all with
#     standard input closed (as in CI).
#  3. --timeout bounds a COMMAND that never ends: exit 124, one line, no qemu left.
#  4. Bad usage and a missing package give exit 125 and one line, without booting.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../../.." && pwd -P)
lab=$repo/deploy/lab/lab
work=$(mktemp -d "${TMPDIR:-/tmp}/lab-runner-check.XXXXXX")
marker=$repo/.lab-runner-check.$$
cleanup() { rm -rf "$work" "$marker"; }
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok $*"; }
# qemu processes started by labs whose run directories live under $1.
lab_qemus() { pgrep -f "qemu-system-x86_64 .*$1" || true; }

# --- 1. SIGKILL: no qemu left -----------------------------------------------------------
mkdir -p "$work/tmp3"
: >"$work/err"
TMPDIR=$work/tmp3 "$lab" run --nodes 1 --timeout 120 -- sleep 600 </dev/null >/dev/null 2>"$work/err" &
pid=$!
# Killed while the guest boots: qemu's parent-death signal does not depend on the guest.
for ((i = 0; i < 300; i++)); do
  [[ -n "$(lab_qemus "$work/tmp3")" ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
[[ -n "$(lab_qemus "$work/tmp3")" ]] || { cat "$work/err" >&2; fail "no qemu found for the running lab"; }
sleep 2
kill -KILL "$pid"
wait "$pid" 2>/dev/null
for ((i = 0; i < 50; i++)); do
  [[ -z "$(lab_qemus "$work/tmp3")" ]] && break
  sleep 0.1
done
[[ -z "$(lab_qemus "$work/tmp3")" ]] || fail "qemu still running 5 s after its lab was SIGKILLed"
ok "SIGKILLed lab: its qemu is gone"

# --- 2. the next run: output, exit code, environment; the killed run's directory goes
mkdir -p "$work/share"
cd "$repo/tests/lab" || fail "cannot cd"
TMPDIR=$work/tmp3 LAB_CHECK_TOKEN='a b$c' "$lab" run --nodes 2 --timeout 120 --share "$work/share" -- \
  bash -c 'echo "out: $PWD"
           echo "token: $LAB_CHECK_TOKEN"
           echo "nodes: $LAB_NODES | $LAB_NODE_IPS | $LAB_NODE_DEVS | $LAB_NODE_NETDEVS"
           echo "shape: $(command -v shape)"
           echo written >"$1/from-guest" && touch "$2"
           echo "err-line" >&2
           exit 7' _ "$work/share" "$marker" \
  0<&- >"$work/out" 2>"$work/err"
rc=$?
cd "$repo" || fail "cannot cd"
((rc == 7)) || { cat "$work/err" >&2; fail "exit code $rc, expected COMMAND's 7"; }
expect_out="out: $repo/tests/lab
token: a b\$c
nodes: node1 node2 | 10.0.0.1 10.0.0.2 | rxe1 rxe2 | veth1 veth2
shape: /run/lab/bin/shape"
[[ "$(<"$work/out")" == "$expect_out" ]] ||
  fail "stdout differs from COMMAND's: got [$(<"$work/out")] expected [$expect_out]"
grep -qx 'err-line' "$work/err" || fail "COMMAND's stderr line missing from stderr"
bad=$(grep -v -x -e 'err-line' -e 'lab: .*' "$work/err") &&
  fail "stderr has lines that are neither COMMAND's nor 'lab: ...': $bad"
grep -q '^lab: 2 node(s) ready in' "$work/err" || fail "no ready line on stderr"
[[ "$(cat "$work/share/from-guest" 2>/dev/null)" == written ]] || fail "--share dir not writable"
[[ -e "$marker" ]] || fail "the checkout is not writable from the guest"
ok "exit code, stdout/stderr, cwd, env, LAB_* variables, writable shares, closed stdin"
grep '^lab: 2 node(s) ready' "$work/err"
left=$(find "$work/tmp3" -maxdepth 1 -name 'gdrbench-lab.*')
[[ -z "$left" ]] || fail "run directories left behind: $left"
ok "the run after the killed run removed both run directories"

# --- 3. --timeout ----------------------------------------------------------------------------
mkdir -p "$work/tmp2"
start=$SECONDS
TMPDIR=$work/tmp2 "$lab" run --nodes 1 --timeout 25 -- sleep 600 </dev/null >"$work/out" 2>"$work/err"
rc=$?
took=$((SECONDS - start))
((rc == 124)) || { cat "$work/err" >&2; fail "--timeout 25 on 'sleep 600' gave exit $rc, expected 124"; }
((took <= 40)) || fail "--timeout 25 took $took s"
grep -q '^lab: .*timed out' "$work/err" || fail "no 'timed out' line: $(<"$work/err")"
[[ -z "$(lab_qemus "$work/tmp2")" ]] || fail "qemu left running after --timeout"
ok "--timeout 25: exit 124 after $took s, no qemu left: $(grep 'timed out' "$work/err")"

# --- 4. errors without a boot ------------------------------------------------------------
expect_one_line() {  # expect_one_line WHAT PATTERN CMD...
  local what=$1 pattern=$2 rc
  shift 2
  "$@" </dev/null >"$work/out" 2>"$work/err"
  rc=$?
  ((rc == 125)) || fail "$what: exit $rc, expected 125"
  [[ "$(wc -l <"$work/err")" -eq 1 ]] || fail "$what: expected one line, got: $(<"$work/err")"
  grep -q -- "$pattern" "$work/err" || fail "$what: line does not name '$pattern': $(<"$work/err")"
  ok "$what: $(<"$work/err")"
}
expect_one_line "--nodes 0" "--nodes" "$lab" run --nodes 0 -- true
expect_one_line "no COMMAND" "no COMMAND" "$lab" run --nodes 2
expect_one_line "unknown option" "--bogus" "$lab" run --bogus -- true
expect_one_line "--fabric 3 leaves for 2 nodes" "--fabric 3:1" "$lab" run --nodes 2 --fabric 3:1 -- true
expect_one_line "--fabric not L:S" "LEAVES:SPINES" "$lab" run --nodes 2 --fabric 2 -- true
# A PATH with every tool but qemu.
mkdir -p "$work/bin"
for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
  for f in "$d"/*; do
    [[ -x "$f" && ! -e "$work/bin/${f##*/}" ]] && ln -s "$f" "$work/bin/${f##*/}"
  done
done
rm -f "$work/bin/qemu-system-x86_64"
expect_one_line "qemu missing" "qemu-system-x86" env PATH="$work/bin" "$lab" run -- true
echo "PASS"
