#!/usr/bin/env bash
# How gdrbench's cost grows with the fleet (issue 30, item 5). For each node count N and each
# plan, with in-process fake agents (the controller's FakeCluster: zero-time tests, so what is
# measured is gdrbench's own cost):
#   controller  gdrbench-controller-bench --nodes N --rails R --mode PLAN --journal J --read-back:
#               wall (probe, plan, every test, verdicts), CPU (user+sys, the fakes included: they
#               only answer), the run's peak RSS, the journal's bytes, and the journal read back
#               as a resume reads it
#   ingest      gdrbench-server-bench --db SQLITE --mode PLAN: the run (cells and every pair
#               result) through the server's ingester; with --postgres also on PostgreSQL 15
#   dashboard   bench/dashboard_first_heatmap.mjs --heatmap-only on that SQLite store: the run
#               page's first heatmap in Debian's headless Chromium, cold (a new server) and warm
# --fleet "64 256": the real path too, at those N: bench/fleet_scale.sh (gdrbench-sim-fleet's agents
# over mTLS, each its own port and TLS connection, driven by the `gdrbench` CLI; a 3-round quick
# sweep and a ring sweep of 8 rails): rows of plans fleet-quick and fleet-ring with the CLI's wall,
# CPU and peak RSS (/usr/bin/time -v); no journal, ingest or dashboard figures there.
# Then bench/scaling_report.py writes OUT/NAME.tsv (one row per N and plan), OUT/NAME.txt (the
# table, and each figure's growth fitted per plan against the tests run: least squares of
# ln(cost) on ln(tests), cost ~ a x tests^b, with the cost per test at the largest N) and
# OUT/NAME.png (every figure against the tests, log-log, one series per plan).
#
#   bench/scaling.sh --out DIR [--name scaling] [--nodes "64 256 1024 4096"]
#                    [--plans "all-pairs ring"] [--all-pairs-max 1024] [--rails 8]
#                    [--quick-rounds 3] [--postgres] [--no-dashboard] [--fleet "64 256"]
#                    [--build DIR] [--work DIR]
# --all-pairs-max: above it all-pairs is not run (4,096 x 8 all-pairs is 134 M tests, a journal
# of about 15 GB) and its row says so; the other plans run at every N.
# Heavy at N = 1,024 all-pairs (minutes of both cores): run it under `flock /tmp/gdr-lab.lock`.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

command_line=$(printf '%q ' "bench/scaling.sh" "$@")

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -n 's/^# \{0,1\}//p'
}
die() {
  echo "scaling.sh: $*" >&2
  exit 2
}

out="" name=scaling nodes="64 256 1024 4096" plans="all-pairs ring" all_pairs_max=1024 rails=8
quick_rounds=3 postgres=0 dashboard=1 build=$repo/build work="" fleet=""
while (($#)); do
  case $1 in
    --out | --name | --nodes | --plans | --all-pairs-max | --rails | --quick-rounds | --build | --work | --fleet)
      (($# >= 2)) || die "$1 needs a value (--help)"
      case $1 in
        --out) out=$2 ;;
        --name) name=$2 ;;
        --nodes) nodes=$2 ;;
        --plans) plans=$2 ;;
        --all-pairs-max) all_pairs_max=$2 ;;
        --rails) rails=$2 ;;
        --quick-rounds) quick_rounds=$2 ;;
        --build) build=$2 ;;
        --work) work=$2 ;;
        --fleet) fleet=$2 ;;
      esac
      shift 2 ;;
    --postgres) postgres=1; shift ;;
    --no-dashboard) dashboard=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (--help)" ;;
  esac
done
[[ -n $out ]] || die "--out DIR is required (where NAME.txt, NAME.tsv and NAME.png go)"
[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die "--name '$name': letters, digits, '.', '_' and '-' only"
for v in "$rails" "$quick_rounds" "$all_pairs_max"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a positive whole number"
done
read -ra node_list <<<"$nodes"
read -ra plan_list <<<"$plans"
((${#node_list[@]} >= 1)) || die "--nodes: give at least one node count"
((${#plan_list[@]} >= 1)) || die "--plans: give at least one plan"
for n in "${node_list[@]}"; do
  if ! [[ $n =~ ^[1-9][0-9]*$ ]] || ((n < 2 || n > 4096)); then die "--nodes: '$n' is not a node count in 2..4096"; fi
done
for p in "${plan_list[@]}"; do
  [[ $p == all-pairs || $p == quick || $p == ring ]] || die "--plans: '$p' is not all-pairs, quick or ring"
done
read -ra fleet_list <<<"$fleet"
for n in "${fleet_list[@]}"; do
  if ! [[ $n =~ ^[1-9][0-9]*$ ]] || ((n < 2 || n > 4096)); then die "--fleet: '$n' is not a node count in 2..4096"; fi
done
bin=$build/bin
need=("$bin/gdrbench-controller-bench" "$bin/gdrbench-server-bench")
((dashboard)) && need+=("$bin/gdrbench-server")
((${#fleet_list[@]})) && need+=("$bin/gdrbench" "$build/tests/gdrbench-sim-fleet")
for f in "${need[@]}"; do
  [[ -x $f ]] || die "build first: $f is missing (cmake --build build --target $(basename "$f"))"
done
if ((dashboard)); then
  command -v node >/dev/null || die "node is missing (deploy/install-deps), or pass --no-dashboard"
  [[ -d $repo/tests/browser/node_modules/playwright-core ]] ||
    die "tests/browser/node_modules/playwright-core is missing (cd tests/browser && npm ci), or pass --no-dashboard"
fi
/usr/bin/python3 -c 'import numpy, matplotlib' 2>/dev/null ||
  die "Debian's python3-numpy and python3-matplotlib are needed for the fit and the plot (deploy/install-deps)"
mkdir -p "$out"

keep_work=1
if [[ -z $work ]]; then
  work=$(mktemp -d /tmp/gdrbench-scaling.XXXXXX)
  keep_work=0
fi
mkdir -p "$work"
chmod 755 "$work"
pgbin=/usr/lib/postgresql/15/bin
as=()
cleanup() {
  if ((postgres)); then "${as[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1 || true; fi
  if ((keep_work)); then rm -rf "$work/pg"; else rm -rf "$work"; fi
}
trap cleanup EXIT
if ((postgres)); then
  [[ -x $pgbin/initdb ]] || die "--postgres: PostgreSQL 15 is missing ($pgbin)"
  if [[ $(id -u) -eq 0 ]]; then chown postgres "$work"; as=(runuser -u postgres --); fi
  "${as[@]}" "$pgbin/initdb" -D "$work/pg" -A trust -U postgres -E UTF8 >"$work/initdb.log"
  "${as[@]}" "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w -o "-k $work -c listen_addresses=''" start >/dev/null
fi

# jget FILE KEY: a field (KEY a.b for nested) of the one JSON object a bench printed; "-" when
# the file or the field is not there (the step failed or was not run).
jget() {
  /usr/bin/python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    d = None
for k in sys.argv[2].split("."):
    d = d.get(k) if isinstance(d, dict) else None
print("-" if d is None or d == "" else d)' "$1" "$2"
}
# step NAME OUT CMD...: CMD's stdout to OUT.json, stderr to OUT.err. A failure (a run that does not
# fit, say) costs that step's figures, not the table: the row's note says which step failed and
# its last line, and OUT.json goes.
step() {
  local what=$1 o=$2 rc=0
  shift 2
  "$@" >"$o.json" 2>"$o.err" || rc=$?
  ((rc == 0)) && return 0
  rm -f "$o.json"
  local last
  last=$(grep -v '^\s*$' "$o.err" | tail -1 | tr '\t' ' ' | cut -c1-160)
  echo "scaling: $what failed at $n x $rails $p (exit $rc): $last" >&2
  note+="${note:+; }$what failed (exit $rc: $last)"
  failures=$((failures + 1))
  return 1
}
log() { echo "scaling: $(date -u +%T) $*" >&2; }
emit() { # one row of the table, its fields tab-separated
  local IFS=$'\t'
  echo "$*" >>"$tsv"
}

tsv=$work/$name.tsv
cols=(nodes plan rails tests rounds ctl_wall_s ctl_cpu_s ctl_rss_mb journal_bytes read_back_s ingest_sqlite_s
      ingest_postgres_s heatmap_cold_ms heatmap_warm_ms load_1m note)
failures=0
: >"$tsv"
emit "${cols[@]}"
started=$(date -u +%FT%TZ)
# The browser read from disk once, so that the first row's heatmap does not pay for it alone.
if ((dashboard)); then /usr/bin/chromium --headless --no-sandbox --dump-dom about:blank >/dev/null 2>&1 || true; fi
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

for p in "${plan_list[@]}"; do
  for n in "${node_list[@]}"; do
    row="$work/$p-$n"
    load=$(cut -d' ' -f1 /proc/loadavg)
    if [[ $p == all-pairs ]] && ((n > all_pairs_max)); then
      log "$n x $rails $p: not run (above --all-pairs-max $all_pairs_max)"
      emit "$n" "$p" "$rails" "$((n * (n - 1) * rails))" - - - - - - - - - - "$load" \
        "not run: all-pairs above --all-pairs-max $all_pairs_max"
      continue
    fi
    mode=(--mode "$p")
    [[ $p == quick ]] && mode+=(--quick-rounds "$quick_rounds")
    note=""
    log "$n x $rails $p: controller (load $load)"
    step controller "$row.ctl" "$bin/gdrbench-controller-bench" --nodes "$n" --rails "$rails" "${mode[@]}" \
      --journal "$row.journal" --read-back || true
    rm -f "$row.journal"
    log "$n x $rails $p: ingest on SQLite"
    step "SQLite ingest" "$row.sqlite" "$bin/gdrbench-server-bench" --db "$row.db" --nodes "$n" --rails "$rails" \
      "${mode[@]}" --trend-runs 2 --trend-nodes 2 || true
    if ((postgres)); then
      log "$n x $rails $p: ingest on PostgreSQL"
      db=b${n}_${p//-/_}
      "${as[@]}" "$pgbin/createdb" -h "$work" -U postgres "$db"
      step "PostgreSQL ingest" "$row.pg" "$bin/gdrbench-server-bench" --db "postgresql:///$db?host=$work&user=postgres" \
        --nodes "$n" --rails "$rails" "${mode[@]}" --trend-runs 2 --trend-nodes 2 || true
      "${as[@]}" "$pgbin/dropdb" -h "$work" -U postgres "$db"
    fi
    if ((dashboard)) && [[ -s $row.sqlite.json ]]; then
      log "$n x $rails $p: the dashboard's first heatmap"
      step dashboard "$row.dash" node "$here/dashboard_first_heatmap.mjs" --bin "$bin" --tests-bin "$build/tests" \
        --work "$row.dash" --db "$row.db" --run-id big-1 --heatmap-only --nodes "$n" --rails "$rails" \
        --limit-ms 1000000000 || true
    fi
    c=$row.ctl.json
    tests=$(jget "$c" tests)
    pairs=$(jget "$row.sqlite.json" pairs)
    [[ $tests == - ]] && tests=$pairs
    if [[ $tests != - && $pairs != - && $pairs != "$tests" ]]; then
      die "$n x $rails $p: the ingested run has $pairs pairs, the controller ran $tests tests"
    fi
    emit "$n" "$p" "$rails" "$tests" "$(jget "$c" rounds)" "$(jget "$c" total_s)" "$(jget "$c" cpu_s)" \
      "$(jget "$c" run_max_rss_mb)" "$(jget "$c" journal_bytes)" "$(jget "$c" read_back_s)" \
      "$(jget "$row.sqlite.json" ingest_s)" "$(jget "$row.pg.json" ingest_s)" \
      "$(jget "$row.dash.json" run_page.cold_first_heatmap_ms)" "$(jget "$row.dash.json" run_page.warm_first_heatmap_ms)" \
      "$load" "${note:--}"
    # What is left of a row is its JSON and logs: the journal and the store go (1,024 x 8
    # all-pairs: about 1 GB and 0.4 GB).
    rm -rf "$row.journal" "$row.db" "$row.db-wal" "$row.db-shm" "$row.dash"
  done
done

if ((${#fleet_list[@]})); then
  load=$(cut -d' ' -f1 /proc/loadavg)
  log "the real fleet at ${fleet_list[*]} agents: bench/fleet_scale.sh (load $load)"
  n=${fleet_list[*]} p=fleet note=""
  step "bench/fleet_scale.sh" "$work/fleet" "$here/fleet_scale.sh" --sizes "${fleet_list[*]}" --build "$build" || true
  # Its table: agents step wall_s cpu_s rss_mb threads fds sockets tests ok overhead...
  for n in "${fleet_list[@]}"; do
    for p in quick ring; do
      read -r wall cpu rss tests ok < <(awk -v n="$n" -v p="$p" '$1 == n && $2 == p {print $3, $4, $5, $9, $10}' \
        "$work/fleet.json" 2>/dev/null) || true
      if [[ -n ${wall:-} ]]; then
        row_note="real agents over mTLS, the gdrbench CLI; $ok of $tests tests OK"
        emit "$n" "fleet-$p" 8 "$tests" - "$wall" "$cpu" "$rss" - - - - - - "$load" "$row_note"
      else
        emit "$n" "fleet-$p" 8 - - - - - - - - - - - "$load" "${note:-bench/fleet_scale.sh printed no $p row}"
      fi
      wall=""
    done
  done
  cp "$work/fleet.json" "$out/$name.fleet.txt" 2>/dev/null || true
fi

cp "$tsv" "$out/$name.tsv"
{
  echo "# command: ${command_line% }"
  echo "# bench/scaling.sh $started .. $(date -u +%FT%TZ), commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "# host: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo "# nodes: $nodes; plans: $plans (all-pairs up to $all_pairs_max nodes); rails: $rails; quick rounds: $quick_rounds${fleet:+; real fleet (bench/fleet_scale.sh): $fleet agents}"
} >"$work/header.txt"
/usr/bin/python3 "$here/scaling_report.py" "$out/$name.tsv" "$out/$name" "$work/header.txt"
log "wrote $out/$name.txt, $out/$name.tsv and $out/$name.png"
if ((failures)); then
  keep_work=1
  log "$failures step(s) failed: their figures are '-' and the rows' notes say why (logs kept in $work)"
  exit 1
fi
