#!/usr/bin/env bash
# The CLI's exit codes (controller/cli/exit_codes.h, docs/systemd.md) from the real binary:
# 0 passed, 1 a result failed, 2 bad usage, 3 refused by a guard, 4 could not run or finish.
# gdrbench-sweep.service counts 1 as success (SuccessExitStatus=1) and fires OnFailure= on the
# rest, so 1 must never stand for "could not run". The runs are the lab's (tests/testdata/runs:
# node4 blamed in slurm-lab-node4.json, every cell passed in lab-demo-4node.json).
# The sweep's own 1 (a cell failed, over real agents) is integration.server_api's.
# Usage: cli_exit_codes_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
bin=${1:?}/bin src=${2:?}
runs=$src/tests/testdata/runs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
# expect CODE WHAT COMMAND...: runs COMMAND, checks its exit code and that a
# non-zero exit other than 1 says why in one line on stderr.
expect() {
  local want=$1 what=$2
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if ((rc != want)); then
    echo "FAIL: $what: exit $rc, expected $want: $(head -c 400 "$work/err")" >&2
    failed=$((failed + 1))
    return
  fi
  if ((want >= 2)) && [[ $(grep -c '^gdrbench: ' "$work/err") != 1 ]]; then
    echo "FAIL: $what: exit $rc without one 'gdrbench: ' line on stderr: $(cat "$work/err")" >&2
    failed=$((failed + 1))
    return
  fi
  echo "ok $want: $what"
}

# A port nothing listens on: bind one, note it, close it.
closed_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

expect 0 "drain --check of a node the run passed" \
  "$bin/gdrbench" drain --run "$runs/slurm-lab-node4.json" --check node1
expect 1 "drain --check of the node the run blames" \
  "$bin/gdrbench" drain --run "$runs/slurm-lab-node4.json" --check node4
expect 2 "sweep with an inventory that is not there" \
  "$bin/gdrbench" sweep --inventory "$work/missing.yaml" --out "$work/out-dir"
# Nothing listens at either node's address: no test could run. The reports are still written.
cat >"$work/inventory.yaml" <<INV
nodes:
  - name: a
    address: 127.0.0.1:$closed_port
  - name: b
    address: 127.0.0.2:$closed_port
INV
expect 2 "sweep with an unknown mode" \
  "$bin/gdrbench" sweep --inventory "$work/inventory.yaml" --mode nosuchmode --out "$work/out-dir"
expect 4 "sweep where no agent answers" \
  "$bin/gdrbench" sweep --inventory "$work/inventory.yaml" --insecure --progress none --out "$work/none"
if ! grep -q "could not run: none of the 2 agents answered (a: agent unreachable" "$work/err" ||
  [[ ! -s "$work/none/run.json" ]]; then
  echo "FAIL: the sweep where no agent answers: no reason or no run.json: $(cat "$work/err")" >&2
  failed=$((failed + 1))
fi
expect 3 "drain of a run over --max-fraction" \
  "$bin/gdrbench" drain --run "$runs/slurm-lab-node4.json" --max-fraction 0.2 --dry-run
expect 4 "runs list against a server that is not there" \
  "$bin/gdrbench" runs list --server "127.0.0.1:$closed_port" --server-insecure --timeout-ms 2000
expect 4 "runs upload to a server that is not there" \
  "$bin/gdrbench" runs upload "$runs/lab-demo-4node.json" --server "127.0.0.1:$closed_port" --server-insecure \
  --timeout-ms 2000
expect 4 "node-info of an agent that is not there" \
  "$bin/gdrbench" node-info --agent "127.0.0.1:$closed_port" --insecure
# The unit's contract: 1 is success for systemd, everything else a failure.
unit=$src/deploy/systemd/gdrbench-sweep.service.in
if [[ $(grep -c '^SuccessExitStatus=1$' "$unit") != 1 ]]; then
  echo "FAIL: $unit does not declare SuccessExitStatus=1 (exactly that)" >&2
  failed=$((failed + 1))
fi
echo "$((11 - failed)) passed, $failed failed"
((failed == 0))
