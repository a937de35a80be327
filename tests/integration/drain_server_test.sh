#!/usr/bin/env bash
# `gdrbench drain --server` against a real gdrbench-server on loopback (SQLite, plaintext):
# the lab's Slurm run (tests/testdata/runs/slurm-lab-node4.json, its blame confirmed) is stored with
# `gdrbench runs upload`, then read back by the drain (header view, --run-id latest) and by
# id. Its node4 blame only read low and the server has seen it once (streak 1): the drain
# says "not yet" and drains nothing (--min-streak 1 acts on it at once). The same run stored
# again under a new id, a day later, is the second in a row: now the drain prints exactly what
# `drain --run FILE --dry-run` prints for the file (which carries no streaks). The
# server path passes the same --max-fraction guard (exit 3, no verdict written, --check
# unknown), and `gdrbench resume --server` resumes a node gdrbench drained only from a run
# that tested it and passed it (tests/testdata/runs/lab-demo-4node.json, a passing lab run),
# with a stand-in sinfo printing the node states as Slurm 22.05's `sinfo -h -N -o` does.
# Usage: drain_server_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
bin=${1:?}/bin src=${2:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
pid=""
trap '[[ -n "$pid" ]] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
# The run as today's sweep records it: node4's cells were retested and read low again, so its
# blame is "confirmed by a retest" (the fixture predates Blame.confirmed; a blame seen once is
# never drained where the server counts streaks, drain.h).
run=$work/slurm-lab-node4.json
python3 - "$src/tests/testdata/runs/slurm-lab-node4.json" >"$run" <<'PY' || fail "cannot write the confirmed run"
import json, sys
r = json.load(open(sys.argv[1]))
for b in r["blame"]:
    b["confirmed"] = True
print(json.dumps(r))
PY
"$bin/gdrbench-server" --insecure --db "$work/s.db" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
  --grpc-port-file "$work/port" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
[[ -s "$work/port" ]] || { cat "$work/server.log"; fail "gdrbench-server did not start"; }
srv=127.0.0.1:$(<"$work/port")
"$bin/gdrbench" runs upload --server "$srv" --insecure --cluster lab "$run" || fail "runs upload"
want=$("$bin/gdrbench" drain --run "$run" --dry-run) || fail "drain --run"
echo "from the file:   $want"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$run")
got=$("$bin/gdrbench" drain --server "$srv" --insecure --cluster lab --dry-run) || fail "drain --server"
echo "from the server, first run: $got"
[[ "$got" == "not yet: node node4 seen in 1 run in a row (--min-streak 2)"$'\n'"run $id: no node to drain" ]] ||
  fail "the first run drained: '$got'"
got=$("$bin/gdrbench" drain --server "$srv" --insecure --cluster lab --dry-run --min-streak 1) || fail "drain --min-streak 1"
[[ "$got" == "$want" ]] || fail "drain --server --min-streak 1 differs from drain --run: '$got'"
"$bin/gdrbench" drain --server "$srv" --insecure --run-id "$id" --check node4 >/dev/null || fail "node4 would be drained after one run"
# The same run the next night: node4's blame persists (streak 2).
id2=$id-next
python3 - "$run" "$id2" >"$work/next.json" <<'PY' || fail "cannot write the second run"
import json, sys
r = json.load(open(sys.argv[1]))
r["run_id"] = sys.argv[2]
for k in ("started_at", "finished_at"):
    if k in r:
        r[k] = "2026-12-02" + r[k][10:]
print(json.dumps(r))
PY
"$bin/gdrbench" runs upload --server "$srv" --insecure --cluster lab "$work/next.json" >/dev/null || fail "runs upload (next)"
got=$("$bin/gdrbench" drain --server "$srv" --insecure --cluster lab --dry-run) || fail "drain --server (next)"
echo "from the server, second run: $got"
[[ "$got" == "${want//"(run $id)"/"(run $id2)"}" ]] || fail "drain --server differs from drain --run"
id=$id2
got=$("$bin/gdrbench" drain --server "$srv" --insecure --run-id "$id" --check node4)
[[ $? == 1 && "$got" == "gdrbench: node: "* ]] || fail "drain --server --run-id $id --check node4: '$got'"
"$bin/gdrbench" drain --server "$srv" --insecure --run-id "$id" --check node1 || fail "node1 would be drained"
"$bin/gdrbench" drain --server "$srv" --insecure --cluster nowhere --dry-run 2>"$work/err"
rc=$?
if ((rc != 4)) || ! grep -q "no run on $srv for cluster nowhere" "$work/err"; then
  fail "no run (exit $rc): $(cat "$work/err")"
fi
# The guard on the server path: 1 of 4 nodes is over 0.2.
"$bin/gdrbench" drain --server "$srv" --insecure --cluster lab --max-fraction 0.2 --verdicts "$work/v" \
  >"$work/out" 2>&1
rc=$?
((rc == 3)) && grep -q "would drain 1 of its 4 nodes" "$work/out" || fail "refused run (exit $rc): $(cat "$work/out")"
[[ ! -e "$work/v" ]] || fail "a refused run wrote verdicts"
"$bin/gdrbench" drain --server "$srv" --insecure --cluster lab --max-fraction 0.2 --check node4 >/dev/null 2>&1
rc=$?
((rc == 3)) || fail "--check on a refused run: exit $rc, expected 3 (unknown)"
"$bin/gdrbench" drain --server "$srv" --insecure --cluster lab --dry-run --verdicts "$work/v" >/dev/null ||
  fail "drain --verdicts from the server"
grep -qx "verdict drain" "$work/v/node4" && grep -qx "verdict pass" "$work/v/node1" ||
  fail "verdict files: $(cat "$work/v/node4" "$work/v/node1")"
# resume: node4 drained by gdrbench, node2 by an operator.
cat >"$work/sinfo" <<'SINFO'
#!/bin/sh
printf '%s\n' 'node1|idle|none' 'node2|drained|bad DIMM' 'node3|idle|none' \
  'node4|drained|gdrbench: node: 6 of its 6 cells (run x)'
SINFO
chmod +x "$work/sinfo"
got=$("$bin/gdrbench" resume --server "$srv" --insecure --cluster lab --dry-run --sinfo "$work/sinfo") ||
  fail "resume from the failing run"
echo "resume, failing run: $got"
[[ "$got" == "kept node4 drained: run "*" says drain: gdrbench: node: "* ]] || fail "resume kept: '$got'"
"$bin/gdrbench" runs upload --server "$srv" --insecure --cluster lab2 \
  "$src/tests/testdata/runs/lab-demo-4node.json" >/dev/null || fail "runs upload lab-demo-4node.json"
got=$("$bin/gdrbench" resume --server "$srv" --insecure --cluster lab2 --dry-run --sinfo "$work/sinfo") ||
  fail "resume from the passing run"
echo "resume, passing run: $got"
[[ "$got" == "scontrol update NodeName=node4 State=RESUME" ]] || fail "resume: '$got'"
out=$("$bin/gdrbench" drain --dry-run 2>&1)
[[ $? == 2 ]] || fail "drain without --run or --server: '$out'"
echo "1 passed, 0 failed"
