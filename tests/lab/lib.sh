# shellcheck shell=bash
# Helpers for lab tests (tests/lab/*_test.sh), sourced inside the lab guest:
#   source "$(dirname "$0")/lib.sh"
# Provides node lookups over LAB_NODES / LAB_NODE_IPS / LAB_NODE_DEVS / LAB_NODE_NETDEVS,
# interface byte counters, a bounded wait for a TCP listener, and lab_write_bw, which runs a
# perftest ib_write_bw server and client between two nodes with every step bounded.
# Process starts cost ~0.5 s each in the emulated guest: the helpers poll with bash builtins.
# Every helper that can fail prints one "FAIL: ..." line and returns 1 (or exits via lab_fail).

set -uo pipefail

# The system's interpreters first: the guest inherits the caller's PATH, and a version manager's
# shim ahead of /usr/bin (pyenv's python3 is a bash script that runs pyenv first) cost 15.2 s a
# python3 start in the guest against 1.6 s for /usr/bin/python3 (measured 2026-12-05, 4 nodes,
# loaded host), dozens of times per test. /usr/bin/python3 is also the interpreter whose
# packages deploy/install-deps installs.
PATH=/usr/bin:/bin:$PATH

LAB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The binaries of the build that runs the tests (ctest passes GDRBENCH_BUILD_DIR).
GDRBENCH_BIN=${GDRBENCH_BUILD_DIR:-$LAB_REPO/build}/bin
export GDRBENCH_BIN

lab_fail() { echo "FAIL: $*" >&2; exit 1; }
lab_log() { echo "[$(cut -d' ' -f1 /proc/uptime)s] $*"; }

[[ -n "${LAB_NODES:-}" ]] ||
  lab_fail "LAB_NODES is not set: run this inside the lab (deploy/lab/lab run -- $0)"
read -ra LAB_NODE_LIST <<<"$LAB_NODES"
read -ra LAB_IP_LIST <<<"$LAB_NODE_IPS"
read -ra LAB_DEV_LIST <<<"$LAB_NODE_DEVS"
read -ra LAB_NETDEV_LIST <<<"$LAB_NODE_NETDEVS"

# lab_index NODE: prints NODE's position (0-based) in LAB_NODES.
lab_index() {
  local i
  for i in "${!LAB_NODE_LIST[@]}"; do
    [[ "${LAB_NODE_LIST[$i]}" == "$1" ]] && { echo "$i"; return 0; }
  done
  lab_fail "no node '$1' in LAB_NODES ($LAB_NODES)"
}
lab_ip() { local i; i=$(lab_index "$1") && echo "${LAB_IP_LIST[$i]}"; }
lab_dev() { local i; i=$(lab_index "$1") && echo "${LAB_DEV_LIST[$i]}"; }
lab_netdev() { local i; i=$(lab_index "$1") && echo "${LAB_NETDEV_LIST[$i]}"; }

# Rails (lab run --rails R): LAB_NODE_RAIL_{IPS,DEVS,NETDEVS} hold, per node, its rails'
# values separated by commas. lab_rail_ip / lab_rail_dev / lab_rail_netdev NODE RAIL.
read -ra LAB_RAIL_IP_LIST <<<"${LAB_NODE_RAIL_IPS:-$LAB_NODE_IPS}"
read -ra LAB_RAIL_DEV_LIST <<<"${LAB_NODE_RAIL_DEVS:-$LAB_NODE_DEVS}"
read -ra LAB_RAIL_NETDEV_LIST <<<"${LAB_NODE_RAIL_NETDEVS:-$LAB_NODE_NETDEVS}"
_lab_rail_pick() {  # _lab_rail_pick "a,b,c" RAIL
  local -a v
  IFS=, read -ra v <<<"$1"
  [[ -n "${v[$2]:-}" ]] || lab_fail "no rail $2 (LAB_RAILS=${LAB_RAILS:-1})"
  echo "${v[$2]}"
}
lab_rail_ip() { local i; i=$(lab_index "$1") && _lab_rail_pick "${LAB_RAIL_IP_LIST[$i]}" "$2"; }
lab_rail_dev() { local i; i=$(lab_index "$1") && _lab_rail_pick "${LAB_RAIL_DEV_LIST[$i]}" "$2"; }
lab_rail_netdev() {
  local i; i=$(lab_index "$1") && _lab_rail_pick "${LAB_RAIL_NETDEV_LIST[$i]}" "$2"
}

# lab_bytes NETDEV rx|tx: the interface's byte counter.
lab_bytes() { local v; read -r v <"/sys/class/net/$1/statistics/${2}_bytes" && echo "$v"; }

# lab_wait_tcp_listen PORT SECONDS [PID]: waits until something listens on TCP PORT; gives up
# early when process PID (the server that should listen) has exited.
lab_wait_tcp_listen() {
  local port_hex deadline pid=${3:-}
  port_hex=$(printf ':%04X' "$1")
  deadline=$((SECONDS + $2))
  while ((SECONDS <= deadline)); do
    if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
      echo "FAIL: the process that should listen on TCP port $1 exited" >&2
      return 1
    fi
    while read -r _ local_addr _ state _; do
      [[ "$local_addr" == *"$port_hex" && "$state" == 0A ]] && return 0
    done </proc/net/tcp
    sleep 0.2
  done
  echo "FAIL: nothing listens on TCP port $1 after $2 s" >&2
  return 1
}

# lab_write_bw SERVER CLIENT [ib_write_bw args]: RC RDMA WRITE from CLIENT's rxe device to
# SERVER's (GID index 1, the RoCE v2 IPv4 GID). Sets LAB_BW to the client's "BW average"
# in MB/s. LAB_RAIL=R (default 0) picks both nodes' devices and address on rail R; LAB_BW_PORT
# the TCP port (default 18515). With -R (rdma_cm) the client retries while the server's
# listener is not up yet (rdma_cm rejects a connect without a listener). Server and client are
# each bounded by LAB_BW_TIMEOUT seconds (default 60). Returns 1 with one FAIL line and both
# outputs on failure. LAB_PERFTEST=ib_write_lat runs that tool instead (same flags and
# exchange); LAB_LINE is the result line either way (its columns: the tool's header).
lab_write_bw() {
  # perftest times with the TSC at a CPU MHz it measures first; when the emulated guest is
  # starved (a busy host) that calibration fails ("Correlation coefficient r^2: ... < 0.9") and
  # it reports 0.00 MB/s with exit 0. That is perftest failing to measure, not the link: run the
  # pair again, at most twice, and say so.
  local attempt
  for ((attempt = 1; attempt <= 3; attempt++)); do
    LAB_BW_CALIBRATION_FAILED=0
    lab_write_bw_once "$@" && return 0
    ((LAB_BW_CALIBRATION_FAILED)) || return 1
    echo "  perftest's CPU MHz calibration failed (attempt $attempt of 3): running the pair again" >&2
  done
  return 1
}

lab_write_bw_once() {
  local server=$1 client=$2
  shift 2
  local sdev cdev sip port=${LAB_BW_PORT:-18515} limit=${LAB_BW_TIMEOUT:-60} tool=${LAB_PERFTEST:-ib_write_bw}
  local rail=${LAB_RAIL:-0}
  sdev=$(lab_rail_dev "$server" "$rail") && cdev=$(lab_rail_dev "$client" "$rail") &&
    sip=$(lab_rail_ip "$server" "$rail") || return 1
  local rdma_cm=0 a
  for a in "$@"; do [[ "$a" == -R ]] && rdma_cm=1; done
  local sout cout
  sout=$(mktemp) cout=$(mktemp)
  timeout "$limit" "$tool" -d "$sdev" -x 1 -p "$port" -F "$@" >"$sout" 2>&1 &
  local spid=$! crc=1 attempt
  if ((rdma_cm)); then
    for ((attempt = 1; attempt <= 20; attempt++)); do
      timeout "$limit" "$tool" -d "$cdev" -x 1 -p "$port" -F "$@" "$sip" >"$cout" 2>&1
      crc=$?
      ((crc == 0)) && break
      kill -0 "$spid" 2>/dev/null || break
      sleep 0.5
    done
  elif lab_wait_tcp_listen "$port" 30 "$spid"; then
    timeout "$limit" "$tool" -d "$cdev" -x 1 -p "$port" -F "$@" "$sip" >"$cout" 2>&1
    crc=$?
  fi
  ((crc == 0)) || kill "$spid" 2>/dev/null
  wait "$spid"
  local src=$?
  # The result line: "#bytes #iterations BW-peak BW-average MsgRate" (ib_write_lat's:
  # "#bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%"), whole in LAB_LINE.
  LAB_LINE=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 && $3 ~ /^[0-9.]+$/ {line = $0} END {print line}' "$cout")
  LAB_BW=$(awk '{print $4}' <<<"$LAB_LINE")
  if ((crc != 0 || src != 0)) || [[ -z "$LAB_BW" ]]; then
    echo "FAIL: $tool $client -> $server ($*): client exit $crc, server exit $src" >&2
    sed 's/^/  client: /' "$cout" | tail -n 8 >&2
    sed 's/^/  server: /' "$sout" | tail -n 8 >&2
    rm -f "$sout" "$cout"
    return 1
  fi
  # perftest derives time from the TSC and the CPU MHz it reads; under emulation a bad reading
  # gives absurd numbers with exit 0. A result this low is an error, not a measurement.
  if ! lab_ge "$LAB_BW" 0.01; then
    grep -q 'Correlation coefficient r^2' "$cout" && LAB_BW_CALIBRATION_FAILED=1
    echo "FAIL: $tool $client -> $server ($*) reported $LAB_BW (column 4: MB/s, or t_max)" >&2
    sed 's/^/  client: /' "$cout" >&2
    rm -f "$sout" "$cout"
    return 1
  fi
  rm -f "$sout" "$cout"
  return 0
}

# lab_ge A B: A >= B for decimal numbers.
lab_ge() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a >= b)}'; }
