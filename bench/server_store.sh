#!/usr/bin/env bash
# gdrbench-server's store on both backends in one run: SQLite (a file here)
# and PostgreSQL 15 (started for the bench in a temporary folder, Unix socket
# only, as the postgres user when run as root). Prints each backend's figures
# (JSON from gdrbench-server-bench) and the PostgreSQL / SQLite ratios.
#   bench/server_store.sh [--nodes 1024] [--rails 8] [--trend-runs 365] [--trend-nodes 16]
# BEFORE=/path/to/an/older/gdrbench-server-bench: that build runs too, before
# this one on each backend (its own database), and the after/before ratios
# of the ingest figures are printed: a change measured in one session.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${BUILD_DIR:-$here/../build}/bin/gdrbench-server-bench
[[ -x $bin ]] || { echo "server_store.sh: build first ($bin missing)" >&2; exit 2; }
work=$(mktemp -d /tmp/gdrbench-store-bench.XXXXXX)
chmod 755 "$work"
pgbin=/usr/lib/postgresql/15/bin
as=()
if [[ $(id -u) -eq 0 ]]; then chown postgres "$work"; as=(runuser -u postgres --); fi
cleanup() {
  "${as[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"${as[@]}" "$pgbin/initdb" -D "$work/pg" -A trust -U postgres -E UTF8 >"$work/initdb.log"
"${as[@]}" "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w -o "-k $work -c listen_addresses=''" start >/dev/null
"${as[@]}" "$pgbin/createdb" -h "$work" -U postgres bench

echo "== $(date -u +%FT%TZ) on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
if [[ -n ${BEFORE:-} ]]; then
  [[ -x $BEFORE ]] || { echo "server_store.sh: BEFORE=$BEFORE is not an executable" >&2; exit 2; }
  "${as[@]}" "$pgbin/createdb" -h "$work" -U postgres before
  echo "== SQLite, before ($BEFORE)" >&2
  "$BEFORE" --db "$work/before.db" "$@" | tee "$work/sqlite-before.json"
fi
echo "== SQLite" >&2
"$bin" --db "$work/bench.db" "$@" | tee "$work/sqlite.json"
if [[ -n ${BEFORE:-} ]]; then
  echo "== PostgreSQL 15, before ($BEFORE)" >&2
  "$BEFORE" --db "postgresql:///before?host=$work&user=postgres" "$@" | tee "$work/postgres-before.json"
fi
echo "== PostgreSQL 15" >&2
"$bin" --db "postgresql:///bench?host=$work&user=postgres" "$@" | tee "$work/postgres.json"
du -sh "$work/bench.db" "$work/pg" 2>/dev/null | sed 's/^/size: /' || true
/usr/bin/python3 - "$work/sqlite.json" "$work/postgres.json" <<'PY'
import json, sys
s, p = (json.load(open(f)) for f in sys.argv[1:3])
print(f"{'figure':34} {'SQLite':>12} {'PostgreSQL':>12} {'PG/SQLite':>10}")
for k in ("ingest_s", "ingest_header_s", "ingest_cells_s", "ingest_pairs_s", "ingest_finish_s",
          "ingest_cells_per_s", "max_rss_mb", "link_trend_ms", "link_trend_sized_ms",
          "node_trend_ms", "list_runs_ms", "list_runs_cluster_ms", "big_run_node_as_src_cells_ms",
          "big_run_node_as_dst_cells_ms"):
    if k not in s or k not in p: continue
    print(f"{k:34} {s[k]:>12.3f} {p[k]:>12.3f} {p[k] / s[k] if s[k] else 0:>10.2f}")
print(f"run: {s['nodes']} nodes x {s['rails']} rails = {s['cells']} cells, {s['pairs']} pairs "
      f"({s['pair_bytes'] / 1e6:.0f} MB of pair results); trend over {s['link_trend_points']} runs")
PY
if [[ -n ${BEFORE:-} ]]; then
  /usr/bin/python3 - "$work" <<'PY'
import json, os, sys
w = sys.argv[1]
print(f"{'after / before':34} {'SQLite':>12} {'PostgreSQL':>12}")
for k in ("ingest_s", "ingest_header_s", "ingest_cells_s", "ingest_pairs_s", "ingest_finish_s",
          "link_trend_ms", "node_trend_ms", "list_runs_ms", "big_run_node_as_src_cells_ms",
          "big_run_node_as_dst_cells_ms"):
    row = []
    for b in ("sqlite", "postgres"):
        new, old = (json.load(open(os.path.join(w, f"{b}{x}.json"))) for x in ("", "-before"))
        row.append(new[k] / old[k] if old.get(k) else 0)
    print(f"{k:34} {row[0]:>12.2f} {row[1]:>12.2f}")
PY
fi
