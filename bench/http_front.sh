#!/usr/bin/env bash
# Issue 31: gdrbench-server's HTTP front (cpp-httplib behind its own gate,
# stream and connection threads: docs/architecture.md) against libmicrohttpd
# 0.9.75, Debian 12's event-driven server library (bench/http_front/mhd_probe.c,
# set up with the same limits as far as its options go), under the same
# attack in one session (bench/http_front/attack.py, the clients of
# tests/integration/server/hostile_test.py): 300 slow connections sending a
# header byte a second, a 1 GiB chunked POST without a token, /healthz and an
# authorised POST meanwhile, 500,000 header fields, a 1 GiB Content-Length.
#   bench/http_front.sh            (needs a build: make build; libmicrohttpd-dev)
# Prints one JSON line per server; the figures are kept in bench/results.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${BUILD_DIR:-$here/../build}/bin
work=$(mktemp -d /tmp/gdrbench-http-front.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
token=bench-write-token-0123456789abcdef
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ulimit -n 4096

# shellcheck disable=SC2046  # pkg-config prints a list of flags
cc -O2 -Wall -o "$work/mhd_probe" "$here/http_front/mhd_probe.c" $(pkg-config --cflags --libs libmicrohttpd)
mport=$(free_port)
"$work/mhd_probe" "$mport" "$token" >"$work/mhd.log" 2>&1 &
pids+=($!)
mpid=$!

echo "write $token bench" >"$work/tokens"
gport=$(free_port)
"$bin/gdrbench-server" --db "$work/store.db" --insecure --no-dashboard --tokens "$work/tokens" \
  --grpc-listen 127.0.0.1:0 --http-listen "127.0.0.1:$gport" >"$work/server.log" 2>&1 &
pids+=($!)
gpid=$!
for _ in $(seq 50); do
  curl -s "http://127.0.0.1:$gport/healthz" >/dev/null && curl -s "http://127.0.0.1:$mport/healthz" >/dev/null && break
  sleep 0.2
done
echo "== $(date -u +%FT%TZ) on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gdrbench-server $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo '?'):"
python3 "$here/http_front/attack.py" "$gport" "$gpid" "$token"
echo "libmicrohttpd $(dpkg-query -W -f='${Version}' libmicrohttpd12 2>/dev/null || echo '?') (mhd_probe.c):"
python3 "$here/http_front/attack.py" "$mport" "$mpid" "$token"
