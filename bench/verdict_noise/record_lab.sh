#!/usr/bin/env bash
# Inside the 4-node lab (run by bench/verdict_noise/record.sh, not a test): M unshaped
# all-pairs sweeps over one agent per node, each sweep's run.json written to OUT/sweep-K.json.
# The sweeps are the lab tests' (tests/lab/sweep_lib.sh SW_FLAGS: fleet-relative verdicts, no
# retries) at the default sweep sizes 64 KiB and 1 MiB, 50 iterations (a 1 MiB test moves 52 MB,
# seconds at the lab's 0.05-0.4 Gb/s; 150 x 1 MiB overran the estimated RunWriteSweep deadline on
# a loaded host), each test's deadline 120 s, the QP ACK timeout 2^18 (as datapath_lib.sh's
# dp_pair: at the default 2^14 a loaded guest's rxe failed a 1 MiB test with "remote invalid
# request", status 9), and no outlier retest (--retest-low 0): every cell is a first reading,
# the noise the verdict rules face. A cell that still fails is kept as a failed cell in the
# run (the extract reads OK cells only) and counted in OUT/sweeps.txt.
# Usage: deploy/lab/lab run --nodes 4 --timeout S -- bench/verdict_noise/record_lab.sh OUT M
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tests/lab/lib.sh"
source "$here/../../tests/lab/datapath_lib.sh"
source "$here/../../tests/lab/sweep_lib.sh"

out=${1:?usage: record_lab.sh OUT M}
m=${2:?usage: record_lab.sh OUT M}
mkdir -p "$out" || lab_fail "cannot create $out"
sw_start_agents node1 node2 node3 node4
for i in "${!SW_FLAGS[@]}"; do
  [[ ${SW_FLAGS[i]} == --sizes ]] && SW_FLAGS[i + 1]=64K,1M
  [[ ${SW_FLAGS[i]} == --iterations ]] && SW_FLAGS[i + 1]=50
done
SW_FLAGS+=(--sweep-timeout 120 --qp-timeout 18)
for ((k = 1; k <= m; k++)); do
  lab_log "sweep $k of $m"
  sw_sweep "$DP_DIR/sweep-$k" --retest-low 0
  rc=$?
  grep -v '"event":"progress"' "$DP_DIR/sweep-$k.stderr" | tail -n 3 | sed 's/^/  stderr: /'
  # 0: every cell passed; 1: some cell read low (fleet-relative): a reading all the same.
  ((rc == 0 || rc == 1)) || { dp_agent_logs node1 node2 node3 node4; lab_fail "sweep $k exit $rc"; }
  [[ -s "$DP_DIR/sweep-$k/run.json" ]] || lab_fail "sweep $k wrote no run.json"
  full=$(sw_check "$DP_DIR/sweep-$k/run.json" full 4 2>&1 | tail -n 1)
  echo "  $full"
  cp "$DP_DIR/sweep-$k/run.json" "$out/sweep-$k.json" || lab_fail "cannot copy sweep $k"
  echo "$k $(date -u +%FT%TZ) rc=$rc $full" >>"$out/sweeps.txt"
done
echo "PASS"
