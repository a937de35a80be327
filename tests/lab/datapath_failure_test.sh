#!/usr/bin/env bash
# lab: nodes=2 timeout=420
# The data path's failures: `--memory gpu:0` on a node without a GPU fails with the reason and
# never falls back to host memory; `--memory host,gpu` fails the gpu half alone; bad input gets INVALID_ARGUMENT from the agent with one
# sentence; an initiator agent killed mid-sweep (with its controller) leaves the target agent
# healthy and the orphaned target freed within its lease; the initiator's port going down ends
# its test at once with the event named, and the next test runs once the port is back; a lossy
# link (shape --loss 2) passes on bandwidth but is flagged by rxe's retransmission counters,
# which stay at zero on the same link unshaped.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/datapath_lib.sh"

dp_launch_agent node1
dp_launch_agent node2
dp_wait_agent node1
dp_wait_agent node2

lab_log "gpu:0 without a GPU"
before=$(grep -c "listening at" "$DP_DIR/node2.log")
dp_pair node2 node1 --sizes 64K --iterations 10 --memory gpu:0
rc=$?
dp_show
((rc == 1)) || lab_fail "gpu:0: exit $rc, expected 1"
grep -q "gpu:0" "$DP_DIR/pair.err" || lab_fail "gpu:0: the error does not name the memory asked for"
grep -Eqi "no NVIDIA driver|compiled out|no GPU" "$DP_DIR/pair.err" ||
  lab_fail "gpu:0: the error does not say why"
after=$(grep -c "listening at" "$DP_DIR/node2.log")
((after == before)) || lab_fail "gpu:0: the target opened a buffer anyway (host fallback?)"

lab_log "bad input is INVALID_ARGUMENT with a sentence"
dp_pair node2 node1 --sizes 64K --iterations 10 --tx-depth 20000
rc=$?
dp_show
((rc == 2)) || lab_fail "tx depth 20000: exit $rc, expected 2 (INVALID_ARGUMENT)"
# The controller refuses it before any agent is called (issue 12, item 13); the
# agent's own check of the same bound is unit-tested (datapath_validation_test).
grep -q -- "--tx-depth 20000: at most 8192" "$DP_DIR/pair.err" || lab_fail "tx depth: no clear sentence"
dp_pair node2 node1 --sizes 64K --iterations 10 --target-device rxe9
rc=$?
dp_show
((rc == 2)) || lab_fail "device rxe9: exit $rc, expected 2"
grep -q "rxe9" "$DP_DIR/pair.err" || lab_fail "device rxe9: the error does not name the device"

# The first rdma_cm connection between two lab nodes spends seconds resolving the neighbour:
# one small test first, so the lease below counts the sweep, not ARP.
lab_log "a first pair test"
dp_pair node2 node1 --sizes 64K --iterations 10 || { dp_show; lab_fail "first pair test"; }

# Issue 11 item 3: --memory host,gpu runs the test once per kind on the same pair; in the lab (no
# GPU) the gpu half fails with its reason and the host half keeps its numbers. Bare `gpu` is the
# NIC's rail GPU from GetNodeInfo, which names none here; `gpu:0` goes to the agent, which refuses
# it (no NVIDIA driver) without a host fallback.
lab_log "--memory host,gpu: the gpu half fails clearly, the host half is kept"
dp_pair node2 node1 --sizes 64K,256K --iterations 20 --memory host,gpu
rc=$?
dp_show
((rc == 1)) || lab_fail "host,gpu: exit $rc, expected 1 (the gpu half failed)"
grep -q "memory gpu -> gpu (next kind, same pair)" "$DP_DIR/pair.out" || lab_fail "host,gpu: no gpu half in the output"
grep -Eq "^   host: [0-9.]+ Gb/s at 262144 B" "$DP_DIR/pair.out" || lab_fail "host,gpu: the host half lost its numbers"
grep -Eq "^   gpu: ERROR \(gpu memory on .*: no GPU for [^ ]+ \(.*(NVIDIA driver|compiled out|no GPU).*\); give --memory gpu:<index.BDF>\)" \
  "$DP_DIR/pair.out" || lab_fail "host,gpu: the gpu half does not say why it failed"
grep -q "blame gdr: gpu memory ERROR" "$DP_DIR/pair.out" || lab_fail "host,gpu: no gdr blame"
grep -q "memory gpu: RESULT_STATUS_ERROR" "$DP_DIR/pair.err" || lab_fail "host,gpu: stderr does not name the failed kind"
dp_pair node2 node1 --sizes 64K,256K --iterations 20 --memory host,gpu:0 --json
rc=$?
((rc == 1)) || { dp_show; lab_fail "host,gpu:0: exit $rc, expected 1"; }
python3 - "$DP_DIR/pair.out" <<'PY' || { dp_show; lab_fail "host,gpu:0: the JSON halves"; }
import json, re, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "RESULT_STATUS_OK", r.get("reason")
assert r["src"]["memory"] == "host" and r["dst"]["memory_kind"] == "host", r["dst"]
sizes = [(int(s["size_bytes"]), s["bw_avg_gbps"]) for s in r["sizes"]]
assert [s for s, _ in sizes] == [65536, 262144] and all(bw > 0 for _, bw in sizes), sizes
(gpu,) = r["memory_halves"]
assert gpu["status"] == "RESULT_STATUS_ERROR" and gpu["src"]["memory"] == "gpu:0", gpu
assert re.search(r"OpenTarget on .*(no NVIDIA driver|compiled out|no GPU)", gpu["reason"]), gpu["reason"]
assert not gpu.get("sizes") and "gpu_host_ratio" not in r, r
print("  host %s Gb/s at 256 KiB; gpu:0 half: %s" % (sizes[-1][1], gpu["reason"]))
PY

lab_log "initiator agent and controller killed mid-sweep; lease 8 s"
seen=$(grep -c "established from" "$DP_DIR/node2.log")
# gdrbench itself in the background (not under timeout(1)): the kill must reach it.
"$GDRBENCH_BIN/gdrbench" pair --insecure --target "${DP_ADDR[node2]}" \
  --initiator "${DP_ADDR[node1]}" --sizes 64K,128K,256K,512K --duration 4 --lease 8 \
  >"$DP_DIR/killed.out" 2>&1 &
cli=$!
for ((i = 0; i < 300; i++)); do
  (($(grep -c "established from" "$DP_DIR/node2.log") > seen)) && break
  sleep 0.1
done
(($(grep -c "established from" "$DP_DIR/node2.log") > seen)) ||
  { cat "$DP_DIR/killed.out"; lab_fail "the sweep never connected"; }
sleep 1
kill -9 "$cli" "${DP_PID[node1]}"
wait "$cli" 2>/dev/null
wait "${DP_PID[node1]}" 2>/dev/null
killed_at=$SECONDS
for ((i = 0; i < 200; i++)); do
  grep -q "lease of 8 s expired" "$DP_DIR/node2.log" && break
  sleep 0.1
done
grep -q "lease of 8 s expired" "$DP_DIR/node2.log" || { cat "$DP_DIR/killed.out"; dp_agent_logs node2; lab_fail "the orphaned target was not freed within its lease"; }
freed_after=$((SECONDS - killed_at))
echo "  target freed ${freed_after} s after the kill (lease 8 s, counted from the connection)"
((freed_after <= 10)) || lab_fail "freed ${freed_after} s after the kill: later than its lease"
kill -0 "${DP_PID[node2]}" || lab_fail "the target agent died"

lab_log "the target agent still serves a new initiator"
dp_start_agent node1
dp_pair node2 node1 --sizes 64K --iterations 20 --verify || { dp_show; dp_agent_logs node1 node2; lab_fail "pair after the kill"; }
dp_show

# Issue 11: the initiator's port goes down mid-sweep (deploy/lab/shape --down: its veth loses
# carrier, rxe raises IB_EVENT_PORT_ERR): the test ends at once with the event named, not after
# the QP's retries (--qp-timeout 18 x 7 retries, ~7.5 s), and the next test runs once it is up.
lab_log "the initiator's port goes down mid-sweep"
seen=$(grep -c "established from" "$DP_DIR/node2.log")
"$GDRBENCH_BIN/gdrbench" pair --insecure --target "${DP_ADDR[node2]}" --initiator "${DP_ADDR[node1]}" \
  --sizes 64K,256K --duration 10 --qp-timeout 18 >"$DP_DIR/down.out" 2>&1 &
cli=$!
for ((i = 0; i < 300; i++)); do
  (($(grep -c "established from" "$DP_DIR/node2.log") > seen)) && break
  sleep 0.1
done
sleep 1
down_at=$(date +%s.%N)
shape node1 --down || lab_fail "shape --down failed"
wait "$cli"
rc=$?
end=$(date +%s.%N)
sed 's/^/  /' "$DP_DIR/down.out"
((rc != 0)) || lab_fail "the pair passed with the initiator's port down"
grep -q "went down (IBV_EVENT_PORT_ERR)" "$DP_DIR/down.out" ||
  { dp_agent_logs node1; lab_fail "the failure does not name the port event"; }
# From the event as the agent logged it (the kernel's linkwatch may hold a carrier change for up
# to a second after `ip link set down`; that part is the kernel's, not ours) to the agent's
# answer (its "sweep ... RESULT_STATUS_FAILED" line): within a second. The controller's exit
# after it runs in the emulated guest too (a busy host slows it to a second or more): bounded
# at 3 s, both printed.
at_of() { date -d "$(awk '{print $1}' <<<"$1")" +%s.%N; }  # a log line's time, epoch seconds
event_line=$(grep -m1 "IBV_EVENT_PORT_ERR on port 1" "$DP_DIR/node1.log") ||
  { dp_agent_logs node1; lab_fail "the agent logged no IBV_EVENT_PORT_ERR"; }
answer_line=$(sed -n '/IBV_EVENT_PORT_ERR on port 1/,$p' "$DP_DIR/node1.log" | grep -m1 "RESULT_STATUS_FAILED") ||
  { dp_agent_logs node1; lab_fail "no failed sweep after the port event in the agent's log"; }
event_at=$(at_of "$event_line") || lab_fail "cannot read the time of '$event_line'"
answer_at=$(at_of "$answer_line") || lab_fail "cannot read the time of '$answer_line'"
read -r to_answer to_exit after_down < <(awk -v e="$event_at" -v a="$answer_at" -v d="$down_at" -v b="$end" \
  'BEGIN{printf "%.2f %.2f %.2f\n", a - e, b - e, b - d}')
echo "  the agent answered ${to_answer} s after the port event; the pair exited ${to_exit} s after it" \
  "(${after_down} s after shape --down), exit $rc"
lab_ge 1.0 "$to_answer" ||
  { dp_agent_logs node1 node2; lab_fail "the agent answered ${to_answer} s after the port event, not within a second"; }
lab_ge 3.0 "$to_exit" ||
  { dp_agent_logs node1 node2; lab_fail "the pair exited ${to_exit} s after the port event"; }
kill -0 "${DP_PID[node1]}" || lab_fail "the initiator agent died"
shape node1 --up || lab_fail "shape --up failed"
dp_pair node2 node1 --sizes 64K --iterations 20 --verify || { dp_show; dp_agent_logs node1 node2; lab_fail "pair after the port came back"; }
dp_show

# Issue 11 item 4: both ports' counters around every test. The same tiny test on the link as it
# is, then with 2 % of its packets dropped both ways (shape --loss 2, netem on both veths): the
# lossy run passes but carries non-zero rxe retransmission counters (rcvd_seq_err,
# out_of_seq_request, duplicate_request, completer_retry_err: rxe_hw_counters.c) and the link
# flag; the clean run has none. 4 KiB messages (one packet each at the RoCE MTU of 4096) and a
# 1 s ACK timeout: a loss is seen by the next packet's sequence (a NAK) or, for the last one, by
# the timeout.
lab_log "link counters: the link clean, then with 2 % loss"
counters_check() {  # counters_check FILE clean|lossy
  python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); want = sys.argv[2]
retrans = {}
for side in ("src_counters", "dst_counters"):
    pc = r.get(side)
    if not pc or pc.get("absent"):
        sys.exit(f"FAIL: no {side} in the result: {pc}")
    for c in pc.get("changes", []):
        if c.get("kind") == "COUNTER_KIND_RETRANSMIT":
            retrans[pc["device"] + " " + c["name"]] = int(c.get("delta", 0))
    print(f"  {side}: {pc['device']} compared {pc.get('compared', 0)}, packets {pc.get('packets', 0)},",
          ", ".join(f"{c['name']} +{c.get('delta', 0)}" for c in pc.get("changes", [])) or "no change")
flag = r.get("link_flag", "")
print(f"  status {r.get('status')}; link flag: {flag or '(none)'}")
if r.get("status") != "RESULT_STATUS_OK":
    sys.exit(f"FAIL: {want}: the test did not pass: {r.get('reason')}")
if want == "clean" and (flag or any(retrans.values())):
    sys.exit(f"FAIL: the clean link retransmitted: {retrans} {flag}")
if want == "lossy" and not (flag and sum(retrans.values()) > 0):
    sys.exit(f"FAIL: 2 % loss left no retransmission counted or no flag: {retrans} {flag!r}")
PY
}
# The clean pair waits 17 s for an ACK (--qp-timeout 22), not dp_pair's 1.07 s: a guest
# stalled that long by a loaded host (CI runs this beside fuzz.short's clang build) makes
# rxe resend what was already received, which the counters rightly show as retransmission
# on a link that lost nothing. Seen in a CI run and reproduced under two host busy loops
# (1 of 8 runs: completer_retry_err +1 on the initiator, duplicate_request +6 and
# out_of_seq_request +1 on the target, while veth and softnet counted no drop); 0 of 12 at
# 2^22. The lossy pair keeps 1.07 s: its losses are what it must see.
dp_pair node2 node1 --sizes 4K --iterations 300 --json --qp-timeout 22 || { dp_show; lab_fail "the clean pair failed"; }
cp "$DP_DIR/pair.out" "$DP_DIR/clean.json"
counters_check "$DP_DIR/clean.json" clean || lab_fail "link counters on the clean link"
shape node1 --loss 2 || lab_fail "shape --loss failed"
dp_pair node2 node1 --sizes 4K --iterations 300 --json
rc=$?
shape node1 --clear || lab_fail "shape --clear failed"
((rc == 0)) || { dp_show; dp_agent_logs node1 node2; lab_fail "the lossy pair failed (exit $rc)"; }
counters_check "$DP_DIR/pair.out" lossy || lab_fail "link counters on the lossy link"
dp_pair node2 node1 --sizes 4K --iterations 300 || { dp_show; lab_fail "the text pair failed"; }
grep -q "counters client" "$DP_DIR/pair.out" || { dp_show; lab_fail "the text result shows no counters"; }
echo "PASS"
