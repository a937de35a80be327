#!/usr/bin/env bash
# lab: nodes=4 timeout=840
# deploy/slurm against a real Slurm (munge, slurmctld, a slurmd per lab node): node4's link
# is shaped; `sbatch --wait -N 4 deploy/slurm/gdrbench-sweep.sbatch` starts an agent per node
# with srun, sweeps $SLURM_JOB_NODELIST over real rxe traffic, stops the agents and drains
# what the run blames: node4 ends DRAINED in sinfo with gdrbench's reason, the others idle.
# Then the NHC check reads the verdict files published beside the run. NHC itself is not
# packaged in Debian, so its `die` is a stand-in here that records the message, as NHC's own does.
# Before that, the same sweep with --max-fraction 0.2 (1 of 4 nodes is over it) must drain
# nothing by any path: the sbatch exits 3 and publishes neither the run nor a verdict, `gdrbench
# drain` exits 3, the NHC check passes every node (and a corrupt verdict file is "unknown",
# not a drain). After it, node4 is resumed only by a run that tests it and passes it: `gdrbench
# resume` on the failing run keeps it drained; node4's link is unshaped ("repaired"), agents
# are started outside Slurm (a drained node takes no job) and swept, and `gdrbench resume` on
# that run returns node4 to idle and its verdict to pass. A non-root user without Slurm rights
# gets drain's clear error.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/datapath_lib.sh"
source "$(dirname "$0")/sweep_lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
trap 'sl_stop; dp_cleanup' EXIT
here=$(cd "$(dirname "$0")" && pwd)
build=${GDRBENCH_BUILD_DIR:-$LAB_REPO/build}
out=$(mktemp -d "$build/slurm-lab.XXXXXX") || lab_fail "cannot make a folder in $build"

lab_log "starting munged, slurmctld and 4 slurmd"
sl_start node1 node2 node3 node4
sinfo
lab_log "node4's whole link shaped to 10mbit"
shape node4 --rate 10mbit || lab_fail "shape failed"

export GDRBENCH_BIN GDRBENCH_INSECURE=1 GDRBENCH_LISTEN=nodeaddr GDRBENCH_AGENT_WRAPPER=$here/slurm_agent.sh \
  GDRBENCH_PUBLISH=$SL_DIR/latest/run.json GDRBENCH_DRAIN=1 \
  GDRBENCH_SWEEP_ARGS="--sizes 64K --iterations 60 --warmup 10 --min-link-fraction 0 \
--fleet-min-drop 0.3 --progress none --retries 1 --max-concurrent 1 --force"
verdicts=$SL_DIR/latest/verdicts
NHC_DIE=""
die() { NHC_DIE="$2"; return "$1"; }
source "$LAB_REPO/deploy/slurm/gdrbench_fabric.nhc"

lab_log "over the fraction: sbatch --wait -N 4 with --max-fraction 0.2"
GDRBENCH_OUT=$out/refused GDRBENCH_DRAIN_ARGS="--max-fraction 0.2" \
  timeout 300 sbatch --wait -N 4 -o "$out/refused.out" "$LAB_REPO/deploy/slurm/gdrbench-sweep.sbatch"
rc=$?
lab_log "job 1 ended (exit $rc)"
sed 's/^/  job: /' "$out/refused.out"
((rc == 3)) || { sl_logs; lab_fail "sbatch over the fraction: exit $rc, expected 3 (refused)"; }
python3 "$here/sweep_check.py" "$out/refused/run.json" blame node node4 || exit 1
for n in node1 node2 node3 node4; do
  sl_idle "$n" || lab_fail "refused run: $n is '$(sl_state "$n")', expected idle"
done
[[ ! -e "$SL_DIR/latest/run.json" ]] || lab_fail "the refused run was published"
[[ -z "$(ls -A "$verdicts" 2>/dev/null)" ]] || lab_fail "the refused run wrote verdicts: $(ls "$verdicts")"
"$GDRBENCH_BIN/gdrbench" drain --run "$out/refused/run.json" --max-fraction 0.2 >"$out/drain.out" 2>&1
rc=$?
((rc == 3)) || lab_fail "gdrbench drain over the fraction: exit $rc: $(cat "$out/drain.out")"
echo "  gdrbench drain: $(cat "$out/drain.out")"
for n in node1 node2 node3 node4; do
  check_gdrbench_fabric "$verdicts" "$n" || lab_fail "NHC check drained $n after a refused run: $NHC_DIE"
done
mkdir -p "$verdicts" && printf 'half a file' >"$verdicts/node3"
check_gdrbench_fabric "$verdicts" node3 2>"$out/note" || lab_fail "NHC check failed node3 on a corrupt file"
echo "  nhc, corrupt file: $(cat "$out/note")"
rm -f "$verdicts/node3"
for n in node1 node2 node3 node4; do
  sl_idle "$n" || lab_fail "after the refused run: $n is '$(sl_state "$n")'"
done

lab_log "sbatch --wait -N 4 gdrbench-sweep.sbatch"
GDRBENCH_OUT=$out/run \
  timeout 300 sbatch --wait -N 4 -o "$out/job.out" "$LAB_REPO/deploy/slurm/gdrbench-sweep.sbatch"
rc=$?
sed 's/^/  job: /' "$out/job.out"
((rc == 1)) || { sl_logs; lab_fail "sbatch --wait exit $rc, expected 1 (the sweep blames node4)"; }

lab_log "job 2 ended (exit $rc): its run, sinfo and the agents"
python3 "$here/sweep_check.py" "$out/run/run.json" full 4 || exit 1
python3 "$here/sweep_check.py" "$out/run/run.json" blame node node4 || exit 1
grep -q '^drained node4: gdrbench: node: ' "$out/job.out" || lab_fail "the job did not drain node4"

for n in node1 node2 node3 node4; do echo "  sinfo $n: $(sl_state "$n")"; done
st=$(sl_state node4)
[[ "$st" == drained\|gdrbench:\ node:* ]] || lab_fail "node4 is '$st', expected drained with gdrbench's reason"
for n in node1 node2 node3; do
  sl_idle "$n" || lab_fail "$n is '$(sl_state "$n")', expected idle"
done

# The agents were stopped with SIGTERM at the end of the job.
pgrep -x gdrbench-agent >/dev/null && lab_fail "gdrbench-agent still running after the job"
for n in node1 node2 node3 node4; do
  grep -q 'shutting down' "$out/run/agent-$n.log" || lab_fail "$n's agent was not stopped by SIGTERM"
done

lab_log "drain --dry-run and the NHC check on the published run"
# The drain command alone, on the published run: --dry-run prints what it would type.
dry=$("$GDRBENCH_BIN/gdrbench" drain --run "$SL_DIR/latest/run.json" --dry-run) || lab_fail "drain --dry-run failed"
echo "  dry-run: $dry"
[[ "$dry" == "scontrol update NodeName=node4 State=DRAIN 'Reason=gdrbench: node: "* ]] ||
  lab_fail "drain --dry-run printed '$dry'"

# The NHC check over the verdicts published beside the run: node4 fails with the reason,
# node1 passes.
check_gdrbench_fabric "$verdicts" node4 && lab_fail "NHC check passed node4"
echo "  nhc node4: $NHC_DIE"
[[ "$NHC_DIE" == "gdrbench: node: "* ]] || lab_fail "NHC check's message: '$NHC_DIE'"
NHC_DIE=""
check_gdrbench_fabric "$verdicts" node1 || lab_fail "NHC check failed node1: $NHC_DIE"

lab_log "drain as a user without Slurm rights"
# Rights: a user who is not root, not the SlurmUser and not an Administrator gets the reason.
# setpriv: util-linux, Essential in Debian.
rights=$(mktemp /tmp/rights-run.XXXXXX.json)
cp "$out/run/run.json" "$rights" && chmod 644 "$rights"
t0=$SECONDS
setpriv --reuid=65534 --regid=65534 --clear-groups "$GDRBENCH_BIN/gdrbench" drain \
  --run "$rights" >"$out/rights.out" 2>&1
rc=$?
echo "  as nobody: exit $rc in $((SECONDS - t0)) s: $(cat "$out/rights.out")"
# scontrol and sacctmgr are asked for 20 s each at most (a Slurm command that cannot read its
# configuration retries for about a minute).
((SECONDS - t0 <= 45)) || lab_fail "drain as nobody took $((SECONDS - t0)) s"
# The lab's slurm.conf has no accounting: the answer is definite (only root and the SlurmUser).
((rc == 4)) && grep -q "accounting is off" "$out/rights.out" && grep -q "only root and the SlurmUser" \
  "$out/rights.out" || lab_fail "drain as nobody"

lab_log "resume: the failing run keeps node4 drained"
got=$("$GDRBENCH_BIN/gdrbench" resume --run "$out/run/run.json") || lab_fail "resume failed: $got"
echo "  $got"
[[ "$got" == "kept node4 drained: "* ]] || lab_fail "resume on the failing run: '$got'"
[[ "$(sl_state node4)" == drained\|gdrbench:* ]] || lab_fail "node4 is '$(sl_state node4)' after resume"

lab_log "node4 repaired (unshaped); a sweep outside Slurm tests it"
shape node4 --clear || lab_fail "shape --clear failed"
sw_start_agents node1 node2 node3 node4
# The emulated links wander (a cell can read 30 % low by chance): a repaired
# node whose only mark is a link below the floor ("suspect", a cable, not the
# node) stays drained, as designed; the operator sweeps again. Up to three
# sweeps; a node or drain verdict on node4 fails at once.
for try in 1 2 3; do
  sw_sweep "$out/repaired$try" --max-concurrent 1
  rc=$?
  ((rc <= 1)) && [[ -s "$out/repaired$try/run.json" ]] ||
    lab_fail "the sweep of the repaired node: exit $rc: $(tail -n 5 "$out/repaired$try.stderr")"
  got=$("$GDRBENCH_BIN/gdrbench" resume --run "$out/repaired$try/run.json" --verdicts "$verdicts") ||
    lab_fail "resume failed: $got"
  echo "  sweep $try: $got"
  [[ "$got" == "resumed node4: passed in run "* ]] && break
  [[ "$got" == "kept node4 drained: run "*" says suspect: link "* ]] ||
    lab_fail "resume after the repair: '$got'"
done
[[ "$got" == "resumed node4: passed in run "* ]] || lab_fail "resume after the repair, 3 sweeps: '$got'"
sl_idle node4 || lab_fail "node4 is '$(sl_state node4)' after the resume"
NHC_DIE=""
check_gdrbench_fabric "$verdicts" node4 || lab_fail "NHC check still fails node4: $NHC_DIE"
cp "$out/run/run.json" "$build/slurm-lab-run.json"
rm -rf "$out"
echo "PASS"
