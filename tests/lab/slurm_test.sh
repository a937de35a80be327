#!/usr/bin/env bash
# lab: nodes=4 timeout=420
# deploy/slurm against a real Slurm (munge, slurmctld, a slurmd per lab node): node4's link
# is shaped; `sbatch --wait -N 4 deploy/slurm/gdrbench-sweep.sbatch` starts an agent per node
# with srun, sweeps $SLURM_JOB_NODELIST over real rxe traffic, stops the agents and drains
# what the run blames: node4 ends DRAINED in sinfo with gdrbench's reason, the others idle.
# Then the NHC check file reads the published run. NHC itself is not packaged in Debian, so
# its `die` is a stand-in here that records the message, as NHC's own does.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
trap sl_stop EXIT
here=$(cd "$(dirname "$0")" && pwd)
build=${GDRBENCH_BUILD_DIR:-$LAB_REPO/build}
out=$(mktemp -d "$build/slurm-lab.XXXXXX") || lab_fail "cannot make a folder in $build"

lab_log "starting munged, slurmctld and 4 slurmd"
sl_start node1 node2 node3 node4
sinfo
lab_log "node4's whole link shaped to 10mbit"
shape node4 --rate 10mbit || lab_fail "shape failed"

lab_log "sbatch --wait -N 4 gdrbench-sweep.sbatch"
GDRBENCH_BIN=$GDRBENCH_BIN GDRBENCH_INSECURE=1 GDRBENCH_LISTEN=nodeaddr \
  GDRBENCH_AGENT_WRAPPER=$here/slurm_agent.sh GDRBENCH_OUT=$out/run \
  GDRBENCH_PUBLISH=$SL_DIR/latest/run.json GDRBENCH_DRAIN=1 \
  GDRBENCH_SWEEP_ARGS="--sizes 64K --iterations 60 --warmup 10 --min-link-fraction 0 \
--fleet-min-drop 0.3 --progress none --retries 1 --max-concurrent 1 --force" \
  timeout 300 sbatch --wait -N 4 -o "$out/job.out" "$LAB_REPO/deploy/slurm/gdrbench-sweep.sbatch"
rc=$?
sed 's/^/  job: /' "$out/job.out"
((rc == 1)) || { sl_logs; lab_fail "sbatch --wait exit $rc, expected 1 (the sweep blames node4)"; }

python3 "$here/sweep_check.py" "$out/run/run.json" full 4 || exit 1
python3 "$here/sweep_check.py" "$out/run/run.json" blame node node4 || exit 1
grep -q '^drained node4: gdrbench: node: ' "$out/job.out" || lab_fail "the job did not drain node4"

for n in node1 node2 node3 node4; do echo "  sinfo $n: $(sl_state "$n")"; done
st=$(sl_state node4)
[[ "$st" == drained\|gdrbench:\ node:* ]] || lab_fail "node4 is '$st', expected drained with gdrbench's reason"
for n in node1 node2 node3; do
  [[ "$(sl_state "$n")" == idle\|* ]] || lab_fail "$n is '$(sl_state "$n")', expected idle"
done

# The agents were stopped with SIGTERM at the end of the job.
pgrep -x gdrbench-agent >/dev/null && lab_fail "gdrbench-agent still running after the job"
for n in node1 node2 node3 node4; do
  grep -q 'shutting down' "$out/run/agent-$n.log" || lab_fail "$n's agent was not stopped by SIGTERM"
done

# The drain command alone, on the published run: --dry-run prints what it would type.
dry=$("$GDRBENCH_BIN/gdrbench" drain --run "$SL_DIR/latest/run.json" --dry-run) || lab_fail "drain --dry-run failed"
echo "  dry-run: $dry"
[[ "$dry" == "scontrol update NodeName=node4 State=DRAIN 'Reason=gdrbench: node: "* ]] ||
  lab_fail "drain --dry-run printed '$dry'"

# The NHC check over the same run: node4 fails with the reason, node1 passes.
NHC_DIE=""
die() { NHC_DIE="$2"; return "$1"; }
GDRBENCH_NHC_BIN=$GDRBENCH_BIN/gdrbench
source "$LAB_REPO/deploy/slurm/gdrbench_fabric.nhc"
check_gdrbench_fabric "$SL_DIR/latest/run.json" node4 && lab_fail "NHC check passed node4"
echo "  nhc node4: $NHC_DIE"
[[ "$NHC_DIE" == "gdrbench: node: "* ]] || lab_fail "NHC check's message: '$NHC_DIE'"
NHC_DIE=""
check_gdrbench_fabric "$SL_DIR/latest/run.json" node1 || lab_fail "NHC check failed node1: $NHC_DIE"
cp "$out/run/run.json" "$build/slurm-lab-run.json"
rm -rf "$out"
echo "PASS"
