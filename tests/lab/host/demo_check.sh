#!/usr/bin/env bash
# lab.demo: `make demo`'s path, checked from the host (issue 33). Runs deploy/demo exactly as
# `make demo` does on a build (stdin /dev/null, the build's bin/, its own lab boot), then:
# 1. its exit status is 0, and it served the dashboard and ended it at once (stdin /dev/null);
# 2. both sweeps are in its store, and the shaped link (node2 <-> node3, as deploy/demo shapes
#    it) is the only regression against the baseline (each link's history, one run, is too
#    short to judge by and says so);
# 3. no process it started outlives it (each run in a session of its own: nothing left in it);
# 4. `deploy/demo --dashboard` again: with stdin closed it ends at once with 0; with stdin held
#    open (a terminal waiting for Enter) it serves the pages until SIGINT reaches its process
#    group, as Ctrl-C on a terminal does, then exits 130 and leaves no server behind.
set -uo pipefail
repo=${GDRBENCH_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
build=${GDRBENCH_BUILD_DIR:-$repo/build}
demo=$build/demo
cd "$repo" || exit 1
work=$(mktemp -d)
holder=
cleanup() {
  [[ -n $holder ]] && kill "$holder" 2>/dev/null
  rm -rf "$work"
  return 0
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok $*"; }

# in_session OUT STDIN CMD...: runs CMD in a session of its own (so everything it starts is found
# by its session id afterwards), in the background, with stdin from the file STDIN or closed
# (STDIN "-"), its output in OUT; its session id is written to OUT.sid. A background command of
# a non-interactive shell starts with SIGINT and SIGQUIT ignored, and a shell that starts with a
# signal ignored cannot trap it: the launcher sets both back to their defaults, as a terminal's
# foreground job (`make demo` typed at a prompt) has them. (A background command also gets
# /dev/null as stdin unless it redirects stdin itself: hence the explicit redirections.)
in_session() {
  local out=$1 in=$2
  shift 2
  local launch=(python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)
os.setsid()
with open(sys.argv[1], "w") as f:
    f.write(f"{os.getsid(0)}\n")
os.execvp(sys.argv[2], sys.argv[2:])' "$out.sid")
  if [[ $in == - ]]; then
    "${launch[@]}" "$@" 0<&- >"$out" 2>&1 &
  else
    "${launch[@]}" "$@" <"$in" >"$out" 2>&1 &
  fi
  for ((i = 0; i < 50; i++)); do [[ -s $out.sid ]] && break; sleep 0.1; done
  [[ $(<"$out.sid") =~ ^[0-9]+$ ]] 2>/dev/null || fail "no session started for $*"
}
# left_in SID: the processes still in session SID, one "pid comm args" line each.
left_in() {
  [[ $1 =~ ^[0-9]+$ ]] || fail "not a session id: '$1'"
  ps -s "$1" -o pid=,args= || true
}

# --- 1. the demo as make demo runs it -------------------------------------------------------
start=$(date +%s)
in_session "$work/demo.out" /dev/null env GDRBENCH_BUILD_DIR="$build" deploy/demo
wait $!
rc=$?
sid=$(<"$work/demo.out.sid")
sed 's/^/  | /' "$work/demo.out"
echo "deploy/demo exited $rc after $(($(date +%s) - start)) s"
((rc == 0)) || fail "deploy/demo </dev/null exited $rc (make demo would fail)"
left=$(left_in "$sid")
[[ -z $left ]] || fail "processes the demo started outlive it: $left"
grep -q '^== dashboard of both sweeps: http://127.0.0.1:' "$work/demo.out" ||
  fail "the demo did not serve its dashboard"
ok "deploy/demo </dev/null: exit 0, dashboard served and ended, nothing left running"

run1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$demo/out/run.json") ||
  fail "no run.json of the first sweep"
run2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$demo/out2/run.json") ||
  fail "no run.json of the second sweep"

# --- 4a. the dashboard again, stdin closed ---------------------------------------------------
in_session "$work/closed.out" - env GDRBENCH_BUILD_DIR="$build" deploy/demo --dashboard
wait $!
rc=$?
((rc == 0)) || { cat "$work/closed.out"; fail "deploy/demo --dashboard with stdin closed exited $rc"; }
left=$(left_in "$(<"$work/closed.out.sid")")
[[ -z $left ]] || fail "deploy/demo --dashboard (stdin closed) left: $left"
ok "deploy/demo --dashboard 0<&-: exit 0, nothing left running"

# --- 4b + 2. stdin held open: the pages are served until Ctrl-C -------------------------------
mkfifo "$work/stdin"
sleep 600 >"$work/stdin" &  # the writer that keeps the "terminal" open
holder=$!
in_session "$work/dash.out" "$work/stdin" env GDRBENCH_BUILD_DIR="$build" deploy/demo --dashboard
dash=$!
url=
for ((i = 0; i < 150; i++)); do
  url=$(sed -n 's|^== dashboard of both sweeps: \(http://127.0.0.1:[0-9]*\)/.*|\1|p' "$work/dash.out")
  [[ -n $url ]] && break
  kill -0 "$dash" 2>/dev/null || break
  sleep 0.1
done
[[ -n $url ]] || { cat "$work/dash.out"; fail "deploy/demo --dashboard served no URL"; }
curl -fsS "$url/api/v1/runs?cluster=lab" >"$work/runs.json" || fail "GET $url/api/v1/runs failed"
curl -fsS "$url/api/v1/runs/$run2" >"$work/run2.json" || fail "GET $url/api/v1/runs/$run2 failed"
curl -fsS -o /dev/null "$url/ui/runs?cluster=lab" || fail "the dashboard page $url/ui/runs does not load"
python3 - "$work/runs.json" "$work/run2.json" "$run1" "$run2" <<'PY' || fail "the store is not what the demo should leave"
import json, sys
runs, run2 = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
want = {sys.argv[3], sys.argv[4]}
ids = {r.get("runId") for r in runs.get("runs", [])}
assert want <= ids, f"stored runs {sorted(ids)} lack {sorted(want - ids)}"
reps = {r["reference"]: r for r in run2.get("regressions", [])}
rep = reps.get("REGRESSION_REFERENCE_BASELINE")
assert rep, f"no comparison against the baseline: {sorted(reps)}"
assert rep.get("referenceRunId") == sys.argv[3], rep
found = [(g["kind"], {g.get("src"), g.get("dst")} - {None, ""}) for g in rep.get("regressions", [])]
assert found == [("REGRESSION_KIND_LINK", {"node2", "node3"})], f"baseline: {found}"
print(f"  baseline: {rep['summary']}")
# One run of history is too little to judge by: the history comparison says so, and finds nothing.
hist = reps.get("REGRESSION_REFERENCE_HISTORY")
assert hist and not hist.get("regressions"), f"history: {hist}"
assert hist["summary"].endswith("compared with the baseline only"), hist
print(f"  history: {hist['summary']}")
PY
ok "both runs stored ($run1, $run2); the shaped link node2 <-> node3 is the only regression"

sid=$(<"$work/dash.out.sid")
kill -INT -- "-$sid" 2>/dev/null  # what Ctrl-C on the terminal sends: SIGINT to the process group
for ((i = 0; i < 100; i++)); do kill -0 "$dash" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$dash" 2>/dev/null; then
  kill -TERM -- "-$sid" 2>/dev/null
  fail "Ctrl-C did not end the dashboard within 10 s: $(left_in "$sid")"
fi
wait "$dash"
rc=$?
((rc == 130)) || { cat "$work/dash.out"; fail "Ctrl-C during the dashboard exited $rc, not 130"; }
left=$(left_in "$sid")
[[ -z $left ]] || fail "Ctrl-C during the dashboard left: $left"
ok "Ctrl-C during the dashboard: exit 130, no server left"
