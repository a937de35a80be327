#!/usr/bin/env bash
# Two builds of gdrbench-controller-bench (e.g. a worktree of an older commit
# and this one) at 1024 nodes x 8 rails with the sweep journal, run
# alternately in the same minutes, then each one's median and the ratio of
# the medians. A shared 2-core host changes speed by a third from minute to
# minute: only runs side by side compare.
#
#   bench/controller_ab.sh BASE_BENCH NEW_BENCH [ROUNDS=5] [-- bench args]
# Default bench args: --nodes 1024 --rails 8 --journal $TMPDIR/ab-journal.bin
set -euo pipefail
base=${1:?usage: $0 BASE_BENCH NEW_BENCH [ROUNDS] [-- bench args]}
new=${2:?usage: $0 BASE_BENCH NEW_BENCH [ROUNDS] [-- bench args]}
rounds=${3:-5}
shift $(( $# >= 3 ? 3 : $# ))
[[ "${1:-}" == "--" ]] && shift
journal=${TMPDIR:-/tmp}/ab-journal.$$.bin
args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(--nodes 1024 --rails 8 --journal "$journal")
trap 'rm -f "$journal"' EXIT

field() { grep -oE "\"$1\":[0-9.]+" | head -1 | cut -d: -f2; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); bench args: ${args[*]}"
printf '%-5s %-6s %9s %9s %9s\n' round build total_s run_s cpu_s
declare -a base_total new_total base_cpu new_cpu
for ((r = 1; r <= rounds; ++r)); do
  for which in base new; do
    bin=$base
    [[ $which == new ]] && bin=$new
    out=$("$bin" "${args[@]}")
    t=$(field total_s <<<"$out"); run=$(field run_s <<<"$out"); cpu=$(field cpu_s <<<"$out")
    printf '%-5s %-6s %9s %9s %9s\n' "$r" "$which" "$t" "$run" "$cpu"
    if [[ $which == base ]]; then base_total+=("$t"); base_cpu+=("$cpu"); else new_total+=("$t"); new_cpu+=("$cpu"); fi
  done
done
bt=$(printf '%s\n' "${base_total[@]}" | median); nt=$(printf '%s\n' "${new_total[@]}" | median)
bc=$(printf '%s\n' "${base_cpu[@]}" | median); nc=$(printf '%s\n' "${new_cpu[@]}" | median)
echo "median total_s: base $bt, new $nt, new/base $(awk -v a="$nt" -v b="$bt" 'BEGIN {printf "%.2f", a / b}')"
echo "median cpu_s:   base $bc, new $nc, new/base $(awk -v a="$nc" -v b="$bc" 'BEGIN {printf "%.2f", a / b}')"
