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
# report.html, junit.xml, pairs.csv and run.json beside it, their counts agreeing; and with nodes
# left out for three causes (DNS, refused, TLS), exit 1 and each cause said once in every output.
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

python3 "$LAB_REPO/tests/integration/report_counts_test.py" --sweep-out "$GDRBENCH_BIN" "$LAB_REPO" "$work/counts" \
  "$out" step4-3.out 1 || lab_fail "the passing sweep's outputs do not agree"

# The README: "when something went wrong, its cause once with the fix" in the first lines. One
# sweep, four nodes left out for three causes beside the two that answer: two names that do not
# resolve (.invalid, RFC 2606: never a DNS name), an address where nothing listens (port 1 on
# loopback) and an agent whose certificate another CA signed (the README's certificate block
# again, in another folder). Each cause once, counted and named, in every output; its nodes'
# tests "not run"; the counts agreeing (tests/integration/report_counts_test.py --sweep-out).
lab_log "a sweep with nodes left out for three causes"
mkdir -p other
(cd other && bash -euo pipefail ../block1.sh >certs.log 2>&1) || { cat other/certs.log; lab_fail "a second CA"; }
other_cmd=${agent_cmd//$work\/pki\//$work\/other\/pki\/}
# shellcheck disable=SC2086  # the README's words, split as a shell would
${other_cmd/--listen 0.0.0.0:7070/--listen 127.0.0.1:0 --port-file $work/other.port --devices $(lab_dev "${LAB_NODE_LIST[0]}")} \
  >"$work/other.log" 2>&1 &
DP_PIDS+=($!)
for ((i = 0; i < 200; i++)); do [[ -s $work/other.port ]] && break; sleep 0.1; done
[[ -s $work/other.port ]] || { cat "$work/other.log"; lab_fail "the agent of the other CA did not start"; }
cp cluster.yaml failing.yaml
{
  echo "  - {name: gpu-dns-a, address: 'gpu-dns-a.invalid:7070'}"
  echo "  - {name: gpu-dns-b, address: 'gpu-dns-b.invalid:7070'}"
  echo "  - {name: gpu-refused, address: '127.0.0.1:1'}"
  echo "  - {name: gpu-other-ca, address: '127.0.0.1:$(<"$work/other.port")'}"
} >>failing.yaml
timeout 120 gdrbench sweep --inventory failing.yaml --out second-sweep "${lab_sizing[@]}" >second.out 2>&1
rc=$?
tail -n 12 second.out | sed 's/^/  /'
((rc == 1)) || lab_fail "a sweep with nodes left out exited $rc, not 1"
python3 "$LAB_REPO/tests/integration/report_counts_test.py" --sweep-out "$GDRBENCH_BIN" "$LAB_REPO" "$work/counts" \
  second-sweep second.out 0 "the name does not resolve (DNS)=gpu-dns-a,gpu-dns-b" \
  "nothing listens at the address (connection refused)=gpu-refused" "TLS failed=gpu-other-ca" ||
  lab_fail "the one-cause lines or the counts of the failed sweep"
echo "ok: the failed sweep says each cause once; summary.md's first lines:"
head -n 12 second-sweep/summary.md | sed 's/^/  /'
