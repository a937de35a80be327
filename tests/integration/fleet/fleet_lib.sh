# Shell helpers of the simulated fleet (sourced by tests/integration/fleet/fleet_scale_test.sh
# and bench/fleet_scale.sh): certificates, a fleet started and stopped, a command measured.
# Needs BIN (build/bin) and TESTS_BIN (build/tests) set by the caller.

FLEET_TREE=${FLEET_TREE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../testdata/preflight/dgx-h100" && pwd)}
FLEET_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# fleet_make_pki DIR: a CA, a server certificate for 127.0.0.1/localhost and a client
# certificate, all P-256 (as tests/integration/process_util.cc makes them).
fleet_make_pki() {
  local d=$1
  (
    set -e
    cd "$d"
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.cnf
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
      -subj "/CN=gdrbench fleet test ca" -keyout ca.key -out ca.pem 2>/dev/null
    for who in server client; do
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$who" \
        -keyout "$who.key" -out "$who.csr" 2>/dev/null
      ext=()
      [[ $who == server ]] && ext=(-extfile san.cnf)
      openssl x509 -req -in "$who.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "${ext[@]}" \
        -out "$who.pem" 2>/dev/null
    done
  )
}

# The CLI's mTLS flags for the PKI in DIR.
fleet_tls_flags() { echo "--tls-ca $1/ca.pem --tls-cert $1/client.pem --tls-key $1/client.key"; }

# fleet_start N WORK [gdrbench-sim-fleet flags...]: starts N members over mTLS (PKI in
# WORK/pki), waits until the inventory WORK/fleet.yaml exists. Sets FLEET_PID and
# FLEET_START_S (seconds until every member served). Returns 1 when the fleet did not start.
fleet_start() {
  local n=$1 work=$2
  shift 2
  rm -f "$work/fleet.yaml"
  local t0 pki=$work/pki
  t0=$(date +%s.%N)
  "$TESTS_BIN/gdrbench-sim-fleet" --members "$n" --fs-root "$FLEET_TREE" --tls-cert "$pki/server.pem" \
    --tls-key "$pki/server.key" --tls-client-ca "$pki/ca.pem" --inventory-out "$work/fleet.yaml" "$@" \
    2>"$work/fleet.log" &
  FLEET_PID=$!
  while [[ ! -s $work/fleet.yaml ]]; do
    if ! kill -0 "$FLEET_PID" 2>/dev/null; then
      echo "the fleet did not start:" >&2
      tail -5 "$work/fleet.log" >&2
      return 1
    fi
    sleep 0.1
  done
  FLEET_START_S=$(echo "$(date +%s.%N) - $t0" | bc)
}

fleet_stop() {
  [[ -n ${FLEET_PID:-} ]] || return 0
  kill -TERM "$FLEET_PID" 2>/dev/null
  wait "$FLEET_PID" 2>/dev/null
  FLEET_PID=
}

# fleet_measure NAME WORK -- COMMAND...: runs COMMAND under /usr/bin/time -v, sampling it
# (proc_sample.py). Leaves WORK/NAME.{out,err,time,sample}; sets M_WALL, M_CPU (user+sys s),
# M_RSS_MB, M_THREADS, M_FDS, M_SOCKETS, M_RC.
fleet_measure() {
  local name=$1 work=$2
  shift 3  # NAME WORK --
  local t0 tpid pid=""
  t0=$(date +%s.%N)
  /usr/bin/time -v -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" &
  tpid=$!
  for _ in $(seq 200); do
    pid=$(pgrep -P "$tpid" | head -1)
    [[ -n $pid ]] && break
    sleep 0.005
  done
  [[ -n $pid ]] && python3 "$FLEET_LIB_DIR/proc_sample.py" "$pid" >"$work/$name.sample" &
  local spid=$!
  wait "$tpid"
  M_RC=$?
  M_WALL=$(echo "$(date +%s.%N) - $t0" | bc)
  wait "$spid" 2>/dev/null
  local user sys
  user=$(awk -F': ' '/User time/ {print $2}' "$work/$name.time")
  sys=$(awk -F': ' '/System time/ {print $2}' "$work/$name.time")
  M_CPU=$(echo "$user + $sys" | bc)
  M_RSS_MB=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$work/$name.time")
  M_THREADS=$(grep -o 'threads=[0-9]*' "$work/$name.sample" | cut -d= -f2)
  M_FDS=$(grep -o ' fds=[0-9]*' "$work/$name.sample" | cut -d= -f2)
  M_SOCKETS=$(grep -o 'sockets=[0-9]*' "$work/$name.sample" | cut -d= -f2)
}
