#!/usr/bin/env bash
# deploy/kubernetes validated offline: yamllint; every kustomization (base, cert-manager,
# monitoring, acceptance, overlays/*) rendered by kustomize (kubectl's built-in kustomize
# v5: there is no Debian 12 package of kubectl, kustomize or helm; kubectl here is the one
# this machine image ships) and each rendered object, plus the acceptance Job and the
# PostgreSQL Secret example, checked against the API schemas (kubernetes-models, generated
# from the Kubernetes project's OpenAPI spec, with cert-manager's and the Prometheus
# Operator's CRD models; installed with its lock file by deploy/install-deps); a mutated copy
# that must fail the schema (a gRPC probe port given as a name); the namespace overlay must
# leave no name of the default namespace; and the security settings asserted over the
# rendered objects (kubernetes_security_check.py).
# Usage: kubernetes_manifests_test.sh SOURCE_DIR WORK_DIR
set -uo pipefail
src=${1:?} work=${2:?}
k=$src/deploy/kubernetes
v=$k/validate
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -d "$v/node_modules/kubernetes-models" && -d "$v/node_modules/@kubernetes-models/prometheus-operator" ]] ||
  fail "the schema models are not installed: run deploy/install-deps"
command -v kubectl >/dev/null || fail "kubectl (its built-in kustomize renders the kustomizations) is not installed"
mkdir -p "$work"
mapfile -t yamls < <(find "$k" -name node_modules -prune -o \( -name '*.yaml' -print \) | sort)
echo "yamllint:"
yamllint -s -c "$k/.yamllint" "${yamls[@]}" "$src/deploy/prometheus/gdrbench.rules.yml" &&
  echo "  ok: $((${#yamls[@]} + 1)) files" || fail "yamllint"

echo "render (kubectl kustomize, $(kubectl version --client 2>/dev/null | grep -i kustomize)):"
rendered=()
for d in base cert-manager monitoring acceptance $(cd "$k" && echo overlays/*); do
  name=${d//\//-}
  kubectl kustomize "$k/$d" >"$work/$name.yaml" 2>"$work/$name.err" || fail "kustomize $d: $(cat "$work/$name.err")"
  echo "  $d: $(grep -c '^kind:' "$work/$name.yaml") objects"
  rendered+=("$work/$name.yaml")
done
echo "schemas:"
node "$v/validate.mjs" "${rendered[@]}" "$k/acceptance/job.yaml" "$k/base/postgres-secret.example.yaml" \
  --out "$work/rendered.json" >"$work/valid.log" || { cat "$work/valid.log"; fail "schema validation"; }
tail -n 1 "$work/valid.log" | sed 's/^/  /'
neg=$work/mutated.yaml
sed '0,/            port: 7071/s//            port: health/' "$work/base.yaml" >"$neg"
cmp -s "$neg" "$work/base.yaml" && fail "the mutation did not apply"
node "$v/validate.mjs" "$neg" --expect-invalid >/dev/null 2>"$work/mutated.err" ||
  fail "a gRPC probe port given as a name passed the schema"
echo "  mutated copy refused: $(grep -m1 invalid "$work/mutated.err")"

echo "namespace from kustomize:"
left=$(grep -n 'gdrbench\.svc\|namespace: gdrbench$\|name: gdrbench$' "$work/overlays-namespace.yaml")
[[ -z "$left" ]] || fail "overlays/namespace still names the default namespace: $left"
grep -q 'dnsNames:' "$work/overlays-namespace.yaml" &&
  grep -q -- '- gdrbench-agent.fabric-health.svc' "$work/overlays-namespace.yaml" ||
  fail "the certificates do not follow the overlay's namespace"
echo "  ok: overlays/namespace names only fabric-health"

echo "security settings:"
python3 "$src/tests/integration/kubernetes_security_check.py" "$work/rendered.json" || fail "security settings"
echo "1 passed, 0 failed"
