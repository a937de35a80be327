#!/usr/bin/env bash
# gdrbench vs perftest on the same two lab nodes: for each size, perftest's ib_write_bw (A)
# and `gdrbench pair` (B) with the same size, QPs and iterations and perftest's defaults
# (tx depth 128, CQ moderation 100, post list 1, the port's MTU, GID index 1 = the RoCE v2
# GID rdma_cm picks), alternating A B A B, then the ratio of the mean BW averages.
#
#   bench/datapath_vs_perftest.sh [--sizes 64K,256K,1M] [--rounds 4] [--bytes-per-run 64M]
#                                  [--qps 1] [--min-ratio 0.98] [--qp-timeout 18]
# Both tools get the same QP ACK timeout (perftest -u, gdrbench --qp-timeout; default 18 here,
# as in the lab tests: see tests/lab/datapath_lib.sh).
# Outside the lab it boots one (deploy/lab/lab run --nodes 2) and runs itself inside.
# Exit 0 when every size >= 64 KiB has ratio >= --min-ratio; prints the table either way.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)

if [[ -z "${LAB_NODES:-}" ]]; then
  exec "$REPO/deploy/lab/lab" run --nodes 2 --timeout "${BENCH_TIMEOUT:-1500}" -- "$0" "$@"
fi

sizes=64K,256K,1M rounds=4 run_bytes=$((64 << 20)) qps=1 min_ratio=0.98 qp_timeout=18
while (($#)); do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bytes-per-run) run_bytes=$(numfmt --from=iec "$2"); shift 2 ;;
    --qps) qps=$2; shift 2 ;;
    --min-ratio) min_ratio=$2; shift 2 ;;
    --qp-timeout) qp_timeout=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes L] [--rounds N] [--bytes-per-run B] [--qps N] [--min-ratio R] [--qp-timeout N]" >&2
       exit 2 ;;
  esac
done

source "$REPO/tests/lab/lib.sh"
source "$REPO/tests/lab/datapath_lib.sh"
dp_start_agent node1
dp_start_agent node2

to_bytes() { numfmt --from=iec "${1%B}"; }
# perftest's -n and gdrbench's --iterations count per QP.
iters_for() { local n=$(($1 > 0 ? run_bytes / $1 / qps : 100)); ((n < 100)) && n=100; echo $((n / 100 * 100)); }

declare -A A B
IFS=, read -ra size_list <<<"$sizes"
for ((r = 1; r <= rounds; r++)); do
  for s in "${size_list[@]}"; do
    bytes=$(to_bytes "$s")
    n=$(iters_for "$bytes")
    # A: perftest (its own TCP exchange; rdma_cm -R cannot bind the source in the lab).
    # perftest prints Gb/s with two decimals (1.7 % steps at the lab's 0.3 Gb/s): read its
    # MB/s (MiB/s, two decimals) and convert to Gb/s = 10^9 bit/s.
    LAB_BW_PORT=$((18515 + r)) lab_write_bw node2 node1 -s "$bytes" -n "$n" -q "$qps" -u "$qp_timeout" || exit 1
    A[$s,$r]=$(awk -v m="$LAB_BW" 'BEGIN{printf "%.4f", m * 1048576 * 8 / 1e9}')
    # B: gdrbench, same size, iterations and QPs, perftest's defaults.
    dp_pair node2 node1 --sizes "$bytes" --iterations "$n" --qps "$qps" --qp-timeout "$qp_timeout" --json ||
      { dp_show; exit 1; }
    B[$s,$r]=$(python3 -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["sizes"][0]["bw_avg_gbps"])' "$DP_DIR/pair.out")
    lab_log "round $r, $s x $n: perftest ${A[$s,$r]} Gb/s, gdrbench ${B[$s,$r]} Gb/s"
  done
done

ok=1
printf '\n%-8s %-10s %-40s %-40s %-8s\n' size iters "perftest BW avg [Gb/s] per round" "gdrbench BW avg [Gb/s] per round" ratio
for s in "${size_list[@]}"; do
  bytes=$(to_bytes "$s")
  a="" b=""
  for ((r = 1; r <= rounds; r++)); do a+="${A[$s,$r]} "; b+="${B[$s,$r]} "; done
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN{na=split(a,x," ");nb=split(b,y," ");sa=0;sb=0;
    for(i=1;i<=na;i++)sa+=x[i]; for(i=1;i<=nb;i++)sb+=y[i]; printf "%.3f", (sb/nb)/(sa/na)}')
  mark=""
  if ((bytes >= 65536)) && ! lab_ge "$ratio" "$min_ratio"; then ok=0; mark=" < $min_ratio"; fi
  printf '%-8s %-10s %-40s %-40s %s%s\n' "$s" "$(iters_for "$bytes")" "$a" "$b" "$ratio" "$mark"
done
((ok)) && echo "PASS: gdrbench/perftest >= $min_ratio for every size >= 64K" ||
  { echo "FAIL: gdrbench/perftest below $min_ratio"; exit 1; }
