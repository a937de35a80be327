#!/usr/bin/env bash
# lab: nodes=2 timeout=300
# A newcomer's first sweep, from README.md's "Quick start on a real cluster" alone (issue 32):
# its ```sh blocks run as written, in order, with only what a lab cannot share with a real
# cluster changed, each change said here:
#   1 certificates: run verbatim (openssl from the host's root);
#   2 the agent's command line: run once per lab node with the README's TLS flags, with
#     /etc/gdrbench/pki/ read from step 1's directory, and '--listen 0.0.0.0:7070' replaced by
#     a loopback port and --devices (the lab's nodes share one kernel, so each agent listens
#     on its own port and owns its node's rxe device);
#   3 the inventory: written verbatim, then its example node entries replaced by the lab's
#     nodes (their loopback addresses), as the README tells an operator to write their own;
#   4 the first sweep: run as written, the sweep with the lab's sizing appended (small sizes
#     and iterations, no absolute verdict: the lab moves ~0.4 Gb/s over ports that report
#     more; tests/lab/sweep_lib.sh).
# The packages (the README's unmarked install block) are not used here: the lab runs this
# build's binaries; integration.packages_clean_root_and_image installs the .debs.
# Then what the README says of the result: exit 0, summary.md's first lines give the verdict,
# report.html, junit.xml, pairs.csv and run.json beside it; and with one agent stopped, a
# non-zero exit whose summary.md names the unreachable node in its first lines.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/datapath_lib.sh"
source "$(dirname "$0")/sweep_lib.sh"

export PATH=$GDRBENCH_BIN:$PATH
work=$DP_DIR/quickstart
mkdir -p "$work"
cd "$work" || lab_fail "no $work"

# The README's quick start section, its ```sh blocks one file each (block1.sh, ...).
python3 - "$LAB_REPO/README.md" "$work" <<'EOF' || lab_fail "cannot read the quick start from README.md"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^## Quick start on a real cluster\n(.*?)(?=^## )", text, re.S | re.M)
if not m:
    sys.exit("README.md has no '## Quick start on a real cluster' section")
blocks = re.findall(r"^```sh\n(.*?)^```", m.group(1), re.S | re.M)
if len(blocks) != 4:
    sys.exit(f"expected 4 sh blocks (certificates, agent, inventory, sweep), found {len(blocks)}")
for i, b in enumerate(blocks, 1):
    open(f"{sys.argv[2]}/block{i}.sh", "w").write(b)
EOF

lab_log "step 1: certificates (README block 1, verbatim)"
bash -euo pipefail block1.sh >certs.log 2>&1 || { cat certs.log; lab_fail "the README's certificate block failed"; }
for f in ca.pem agent.pem agent.key controller.pem controller.key; do
  [[ -s pki/$f ]] || lab_fail "the README's certificate block made no pki/$f"
done
openssl verify -CAfile pki/ca.pem pki/agent.pem pki/controller.pem || lab_fail "the certificates do not verify"

lab_log "step 2: one agent per node (README block 2)"
agent_cmd=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' block2.sh | grep '^gdrbench-agent ')
[[ $agent_cmd == *"--listen 0.0.0.0:7070"* && $agent_cmd == *"/etc/gdrbench/pki/"* ]] ||
  lab_fail "the README's agent line changed shape: '$agent_cmd' (update this test)"
agent_cmd=${agent_cmd//\/etc\/gdrbench\/pki\//$work\/pki\/}
declare -A addr
for node in "${LAB_NODE_LIST[@]}"; do
  # shellcheck disable=SC2086  # the README's words, split as a shell would
  ${agent_cmd/--listen 0.0.0.0:7070/--listen 127.0.0.1:0 --port-file $work/$node.port --devices $(lab_dev "$node")} \
    >"$work/$node.log" 2>&1 &
  DP_PIDS+=($!)
done
for node in "${LAB_NODE_LIST[@]}"; do
  for ((i = 0; i < 200; i++)); do [[ -s $work/$node.port ]] && break; sleep 0.1; done
  [[ -s $work/$node.port ]] || { cat "$work/$node.log"; lab_fail "the README's agent did not start on $node"; }
  addr[$node]=127.0.0.1:$(<"$work/$node.port")
done

lab_log "step 3: the inventory (README block 3)"
bash -euo pipefail block3.sh || lab_fail "the README's inventory block failed"
grep -q '^  - {name: gpu01, address: ' cluster.yaml || lab_fail "the README's inventory changed shape (update this test)"
grep -v '^  - {name: gpu0' cluster.yaml >cluster.lab
for node in "${LAB_NODE_LIST[@]}"; do echo "  - {name: $node, address: '${addr[$node]}'}"; done >>cluster.lab
mv cluster.lab cluster.yaml
cat cluster.yaml

lab_log "step 4: the first sweep (README block 4)"
lab_sizing=(--sizes 64K --iterations 150 --warmup 10 --min-link-fraction 0 --fleet-min-drop 0.3 --retries 0)
n=0
while read -r line; do
  line=${line%%#*}
  [[ -n ${line// /} ]] || continue
  n=$((n + 1))
  read -ra words <<<"$line"
  [[ ${words[0]} == gdrbench ]] || lab_fail "the README's sweep block runs '${words[0]}', not gdrbench (update this test)"
  extra=()
  [[ ${words[1]} == sweep && $line != *--dry-run* ]] && extra=("${lab_sizing[@]}")
  echo "\$ ${words[*]} ${extra[*]}"
  timeout 240 "${words[@]}" "${extra[@]}" >"step4-$n.out" 2>&1
  rc=$?
  sed 's/^/  /' "step4-$n.out" | tail -n 25
  ((rc == 0)) || lab_fail "'${words[*]}' exited $rc (README: 0 when everything passed)"
done <block4.sh
((n == 3)) || lab_fail "expected 3 commands in the README's sweep block, ran $n"

out=first-sweep
for f in summary.md report.html junit.xml pairs.csv run.json; do
  [[ -s $out/$f ]] || lab_fail "the README names $out/$f: not written"
done
head -n 3 "$out/summary.md" | grep -q '\*\*PASS\*\*' ||
  { head -n 5 "$out/summary.md"; lab_fail "summary.md's first lines do not give the verdict PASS"; }
echo "ok: the README's quick start made a passing first sweep: $(sed -n 3p "$out/summary.md")"

# The README: "when something went wrong, its cause once with the fix" in the first lines.
lab_log "one agent stopped: the same sweep again"
victim=${LAB_NODE_LIST[1]}
kill "${DP_PIDS[1]}"
wait "${DP_PIDS[1]}" 2>/dev/null
timeout 120 gdrbench sweep --inventory cluster.yaml --out second-sweep "${lab_sizing[@]}" >second.out 2>&1
rc=$?
tail -n 8 second.out | sed 's/^/  /'
((rc != 0)) || lab_fail "a sweep with $victim's agent stopped exited 0"
head -n 12 second-sweep/summary.md | grep -q "$victim" ||
  { head -n 12 second-sweep/summary.md; lab_fail "summary.md's first lines do not name $victim, whose agent is down"; }
echo "ok: with $victim's agent stopped the sweep exits $rc and summary.md's first lines name it:"
head -n 12 second-sweep/summary.md | grep "$victim" | head -n 2 | sed 's/^/  /'
