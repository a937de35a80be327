#!/usr/bin/env bash
# gdrbench vs perftest on the same two lab nodes: for each size, perftest's ib_write_bw (A)
# and `gdrbench pair` (B) with the same size, QPs and iterations and perftest's defaults
# (tx depth 128, CQ moderation 100, post list 1, the port's MTU, GID index 1 = the RoCE v2
# GID rdma_cm picks), alternating A B A B, then the ratio of the means.
#
#   bench/datapath_vs_perftest.sh [--sizes 64K,256K,1M] [--rounds 4] [--bytes-per-run 64M]
#                                  [--qps 1] [--min-ratio 0.98] [--qp-timeout 18]
#                                  [--cm rdma_cm|oob] [--metric bw|msgrate|lat]
# --cm: gdrbench's connection mode (perftest without -R exchanges QPs over its own TCP socket
# and moves them to RTR/RTS itself: out of band, as gdrbench's oob).
# --metric bw: BW average, ratio gdrbench/perftest; msgrate: MsgRate [Mpps] (small sizes),
# gdrbench/perftest; lat: ib_write_lat vs `gdrbench pair --test write_lat`, t_typical [usec],
# ratio perftest/gdrbench (lower latency is better, so >= 1.0 means gdrbench is no slower).
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

sizes=64K,256K,1M rounds=4 run_bytes=$((64 << 20)) qps=1 min_ratio=0.98 qp_timeout=18 cm=rdma_cm metric=bw
while (($#)); do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bytes-per-run) run_bytes=$(numfmt --from=iec "$2"); shift 2 ;;
    --qps) qps=$2; shift 2 ;;
    --min-ratio) min_ratio=$2; shift 2 ;;
    --qp-timeout) qp_timeout=$2; shift 2 ;;
    --cm) cm=$2; shift 2 ;;
    --metric) metric=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes L] [--rounds N] [--bytes-per-run B] [--qps N] [--min-ratio R] [--qp-timeout N] [--cm rdma_cm|oob] [--metric bw|msgrate|lat]" >&2
       exit 2 ;;
  esac
done

case $metric in bw | msgrate | lat) ;; *) echo "--metric: bw, msgrate or lat, not '$metric'" >&2; exit 2 ;; esac
case $cm in rdma_cm | oob) ;; *) echo "--cm: rdma_cm or oob, not '$cm'" >&2; exit 2 ;; esac

source "$REPO/tests/lab/lib.sh"
source "$REPO/tests/lab/datapath_lib.sh"
dp_start_agent node1
dp_start_agent node2

to_bytes() { numfmt --from=iec "${1%B}"; }
# perftest's -n and gdrbench's --iterations count per QP.
# Latency: a fixed count of exchanges per size (ib_write_lat's default is 1000).
iters_for() {
  [[ $metric == lat ]] && { echo 1000; return; }
  [[ $metric == msgrate ]] && { echo 10000; return; }  # small messages: a count, not bytes
  local n=$(($1 > 0 ? run_bytes / $1 / qps : 100)); ((n < 100)) && n=100; echo $((n / 100 * 100))
}
# The figure compared, from perftest's result line (LAB_LINE) and gdrbench's JSON.
perftest_value() {
  case $metric in
    bw) awk -v m="$LAB_BW" 'BEGIN{printf "%.4f", m * 1048576 * 8 / 1e9}' ;;  # MiB/s -> Gb/s
    msgrate) awk '{printf "%.6f", $5}' <<<"$LAB_LINE" ;;                    # MsgRate[Mpps]
    lat) awk '{printf "%.3f", $5}' <<<"$LAB_LINE" ;;                        # t_typical[usec]
  esac
}
gdrbench_value() {
  python3 -c 'import json,sys
s = json.load(open(sys.argv[1]))["sizes"][0]
m = sys.argv[2]
print("%.3f" % s["latency"]["t_typical_us"] if m == "lat" else ("%.4f" % s["bw_avg_gbps"] if m == "bw" else "%.6f" % s["msg_rate_mpps"]))' \
    "$DP_DIR/pair.out" "$metric"
}

declare -A A B
IFS=, read -ra size_list <<<"$sizes"
for ((r = 1; r <= rounds; r++)); do
  for s in "${size_list[@]}"; do
    bytes=$(to_bytes "$s")
    n=$(iters_for "$bytes")
    # A: perftest (its own TCP exchange; rdma_cm -R cannot bind the source in the lab).
    # perftest prints Gb/s with two decimals (1.7 % steps at the lab's 0.3 Gb/s): read its
    # MB/s (MiB/s, two decimals) and convert to Gb/s = 10^9 bit/s.
    if [[ $metric == lat ]]; then
      LAB_PERFTEST=ib_write_lat LAB_BW_PORT=$((18515 + r)) lab_write_bw node2 node1 -s "$bytes" -n "$n" \
        -u "$qp_timeout" || exit 1
    else
      LAB_BW_PORT=$((18515 + r)) lab_write_bw node2 node1 -s "$bytes" -n "$n" -q "$qps" -u "$qp_timeout" || exit 1
    fi
    A[$s,$r]=$(perftest_value)
    # B: gdrbench, same size, iterations and QPs, perftest's defaults.
    test_flags=()
    [[ $metric == lat ]] && test_flags=(--test write_lat)
    dp_pair node2 node1 --cm "$cm" "${test_flags[@]}" --sizes "$bytes" --iterations "$n" --qps "$qps" \
      --qp-timeout "$qp_timeout" --json || { dp_show; exit 1; }
    B[$s,$r]=$(gdrbench_value)
    lab_log "round $r, $s x $n ($metric, gdrbench --cm $cm): perftest ${A[$s,$r]}, gdrbench ${B[$s,$r]}"
  done
done

ok=1
case $metric in
  bw) what="BW avg [Gb/s]" ratio_is="gdrbench/perftest" gate=65536 ;;
  msgrate) what="MsgRate [Mpps]" ratio_is="gdrbench/perftest" gate=0 ;;
  lat) what="t_typical [usec]" ratio_is="perftest/gdrbench" gate=0 ;;
esac
echo
echo "metric $metric ($what), gdrbench --cm $cm, ratio $ratio_is, $rounds rounds"
printf '%-8s %-10s %-40s %-40s %-8s %s\n' size iters "perftest $what per round" "gdrbench $what per round" ratio \
  "per-round ratio mean [95% CI]"
for s in "${size_list[@]}"; do
  bytes=$(to_bytes "$s")
  a="" b=""
  for ((r = 1; r <= rounds; r++)); do a+="${A[$s,$r]} "; b+="${B[$s,$r]} "; done
  ratio=$(awk -v a="$a" -v b="$b" -v inv="$([[ $metric == lat ]] && echo 1 || echo 0)" 'BEGIN{
    na=split(a,x," ");nb=split(b,y," ");sa=0;sb=0;
    for(i=1;i<=na;i++)sa+=x[i]; for(i=1;i<=nb;i++)sb+=y[i];
    r=(sb/nb)/(sa/na); if (inv) r=1/r; printf "%.3f", r}')
  # The rounds are pairs (A then B, back to back): the spread of the per-round
  # ratios says whether a difference is the tools' or the emulated lab's
  # (qemu TCG swings a round by tens of percent). Student t, n - 1 degrees.
  spread=$(awk -v a="$a" -v b="$b" -v inv="$([[ $metric == lat ]] && echo 1 || echo 0)" 'BEGIN{
    n=split(a,x," "); split(b,y," "); split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262", t, " ");
    s=0; for(i=1;i<=n;i++){q[i]=inv ? x[i]/y[i] : y[i]/x[i]; s+=q[i]} m=s/n;
    if (n < 2) { printf "%.3f", m; exit }
    v=0; for(i=1;i<=n;i++) v+=(q[i]-m)^2; sd=sqrt(v/(n-1)); tt=(n-1 <= 9) ? t[n-1] : 2.0;
    h=tt*sd/sqrt(n); printf "%.3f [%.3f, %.3f]", m, m-h, m+h}')
  mark=""
  if ((bytes >= gate)) && ! lab_ge "$ratio" "$min_ratio"; then ok=0; mark=" < $min_ratio"; fi
  printf '%-8s %-10s %-40s %-40s %-8s %s\n' "$s" "$(iters_for "$bytes")" "$a" "$b" "$ratio$mark" "$spread"
done
gated=$([[ $gate -gt 0 ]] && echo " for every size >= 64K" || echo " for every size")
((ok)) && echo "PASS: $ratio_is >= $min_ratio$gated" ||
  { echo "FAIL: $ratio_is below $min_ratio"; exit 1; }
