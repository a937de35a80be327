#!/usr/bin/env bash
# `gdrbench drain --server` against a real gdrbench-server on loopback (SQLite, plaintext):
# the lab's Slurm run (tests/testdata/runs/slurm-lab-node4.json) is stored with
# `gdrbench runs upload`, then read back by the drain (header view, --run-id latest) and by
# id; both must print exactly what `drain --run FILE --dry-run` prints for the file.
# Usage: drain_server_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
bin=${1:?}/bin src=${2:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
pid=""
trap '[[ -n "$pid" ]] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
run=$src/tests/testdata/runs/slurm-lab-node4.json
"$bin/gdrbench-server" --insecure --db "$work/s.db" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
  --grpc-port-file "$work/port" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
[[ -s "$work/port" ]] || { cat "$work/server.log"; fail "gdrbench-server did not start"; }
srv=127.0.0.1:$(<"$work/port")
"$bin/gdrbench" runs upload --server "$srv" --insecure --cluster lab "$run" || fail "runs upload"
want=$("$bin/gdrbench" drain --run "$run" --dry-run) || fail "drain --run"
echo "from the file:   $want"
got=$("$bin/gdrbench" drain --server "$srv" --insecure --cluster lab --dry-run) || fail "drain --server"
echo "from the server: $got"
[[ "$got" == "$want" ]] || fail "drain --server differs from drain --run"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$run")
got=$("$bin/gdrbench" drain --server "$srv" --insecure --run-id "$id" --check node4)
[[ $? == 1 && "$got" == "gdrbench: node: "* ]] || fail "drain --server --run-id $id --check node4: '$got'"
"$bin/gdrbench" drain --server "$srv" --insecure --run-id "$id" --check node1 || fail "node1 would be drained"
"$bin/gdrbench" drain --server "$srv" --insecure --cluster nowhere --dry-run 2>"$work/err"
rc=$?
if ((rc != 1)) || ! grep -q "no run on $srv for cluster nowhere" "$work/err"; then
  fail "no run (exit $rc): $(cat "$work/err")"
fi
out=$("$bin/gdrbench" drain --dry-run 2>&1)
[[ $? == 2 ]] || fail "drain without --run or --server: '$out'"
echo "1 passed, 0 failed"
