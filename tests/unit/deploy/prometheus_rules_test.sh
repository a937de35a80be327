#!/bin/bash
# deploy/prometheus: the rules parse (promtool check rules), their unit tests pass (promtool
# test rules: alerts that must fire and must not), every gdrbench_* series they read is one
# gdrbench-server exports (server/metrics/metrics.cc), and the PrometheusRule in
# deploy/kubernetes carries the same groups as the rules file.
set -euo pipefail
src=${1:?source dir}
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v promtool >/dev/null || fail "promtool not installed (Debian package prometheus: deploy/install-deps)"
cd "$src/deploy/prometheus"
promtool check rules gdrbench.rules.yml || fail "promtool check rules"
promtool test rules gdrbench.rules.test.yml || fail "promtool test rules"
used=$(grep -o 'gdrbench_[a-z_]*' gdrbench.rules.yml | sort -u)
for m in $used; do
  grep -q "\"$m\"" "$src/server/metrics/metrics.cc" || fail "the rules read $m, which server/metrics does not export"
done
echo "series read: $(echo "$used" | wc -l), each exported by server/metrics"
python3 - "$src/deploy/prometheus/gdrbench.rules.yml" "$src/deploy/kubernetes/monitoring/prometheusrule.yaml" <<'PY' || fail "the PrometheusRule differs from gdrbench.rules.yml"
import sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
pr = yaml.safe_load(open(sys.argv[2]))
assert pr["kind"] == "PrometheusRule", pr["kind"]
if pr["spec"] != rules:
    sys.exit("spec.groups differ: regenerate with deploy/kubernetes/monitoring/gen-prometheusrule")
print("PrometheusRule: the same", len(rules["groups"]), "groups")
PY
echo "1 passed, 0 failed"
