# Helpers for the data path lab tests (tests/lab/datapath_*_test.sh), sourced after lib.sh:
# agents per node and `gdrbench pair` between them. Every wait is bounded.
DP_DIR=$(mktemp -d)
DP_PIDS=()

dp_cleanup() {
  local pid
  for pid in "${DP_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${DP_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
}
trap dp_cleanup EXIT

# dp_start_agent NODE [DEVICES]: starts an agent owning NODE's rxe device (or DEVICES, comma-
# separated: e.g. every rail's); sets DP_ADDR[NODE] and DP_PID[NODE]; its log is $DP_DIR/NODE.log.
# dp_launch_agent and dp_wait_agent are its two halves: launch several, then wait for each, and
# the agents start side by side (each start costs seconds in the emulated guest).
declare -A DP_ADDR DP_PID
dp_start_agent() { dp_launch_agent "$@" && dp_wait_agent "$1"; }

dp_launch_agent() {
  local node=$1 dev=${2:-}
  [[ -n "$dev" ]] || dev=$(lab_dev "$node") || return 1
  rm -f "$DP_DIR/$node.port"
  "$GDRBENCH_BIN/gdrbench-agent" --insecure --listen 127.0.0.1:0 --devices "$dev" \
    --port-file "$DP_DIR/$node.port" --log-level ${DP_LOG_LEVEL:-info} >"$DP_DIR/$node.log" 2>&1 &
  DP_PID[$node]=$!
  DP_PIDS+=($!)
}

# dp_wait_agent NODE: waits (20 s at most) for NODE's launched agent to write its port.
dp_wait_agent() {
  local node=$1 i
  for ((i = 0; i < 200; i++)); do
    [[ -s "$DP_DIR/$node.port" ]] && break
    kill -0 "${DP_PID[$node]}" 2>/dev/null || break
    sleep 0.1
  done
  [[ -s "$DP_DIR/$node.port" ]] || {
    sed 's/^/  agent: /' "$DP_DIR/$node.log" >&2
    lab_fail "agent on $node did not start"
  }
  DP_ADDR[$node]=127.0.0.1:$(<"$DP_DIR/$node.port")
}

# dp_pair SERVER CLIENT [gdrbench pair flags]: runs one pair test; its stdout goes to
# $DP_DIR/pair.out, stderr to $DP_DIR/pair.err; returns gdrbench's exit code.
# The QP ACK timeout is DP_QP_TIMEOUT (default 18: 4.096 us x 2^18 = 1.07 s) unless the flags
# give --qp-timeout: the guest's two vCPUs carry every node's rxe work, ACKs of a loaded lab
# take longer than perftest's 67 ms (2^14), and rxe (kernel 6.1) answers the go-back-N
# retransmissions that follow with "remote invalid request" NAKs (status 9): measured 5 of 5
# runs of 4 QPs x 1 MiB x 30 failing at 2^14 and 5 of 5 passing at 2^18 on one boot, load ~10.
dp_pair() {
  local server=$1 client=$2 a timeout_flag=(--qp-timeout "${DP_QP_TIMEOUT:-18}")
  shift 2
  for a in "$@"; do [[ "$a" == --qp-timeout* ]] && timeout_flag=(); done
  timeout "${DP_PAIR_TIMEOUT:-200}" "$GDRBENCH_BIN/gdrbench" pair --insecure \
    --target "${DP_ADDR[$server]}" --initiator "${DP_ADDR[$client]}" "${timeout_flag[@]}" "$@" \
    >"$DP_DIR/pair.out" 2>"$DP_DIR/pair.err"
}

dp_show() {
  sed 's/^/  /' "$DP_DIR/pair.out"
  sed 's/^/  stderr: /' "$DP_DIR/pair.err"
}

dp_agent_logs() {
  local n
  for n in "$@"; do sed "s/^/  $n: /" "$DP_DIR/$n.log" | tail -n 15 >&2; done
}
