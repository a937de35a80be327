#!/usr/bin/env bash
# deploy/kubernetes validated offline: yamllint, then every object against the Kubernetes
# API schemas (kubernetes-models, generated from the Kubernetes project's OpenAPI spec;
# installed with its lock file by deploy/install-deps), a mutated copy that must fail the
# schema (a gRPC probe port given as a name, which the API's GRPCAction does not allow), and
# the security settings asserted over the rendered objects (kubernetes_security_check.py).
# Usage: kubernetes_manifests_test.sh SOURCE_DIR WORK_DIR
set -uo pipefail
src=${1:?} work=${2:?}
k=$src/deploy/kubernetes
v=$k/validate
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ -d "$v/node_modules/kubernetes-models" ]] || fail "kubernetes-models not installed: run deploy/install-deps"
mkdir -p "$work"
echo "yamllint:"
yamllint -s -c "$k/.yamllint" "$k"/*.yaml "$k"/cert-manager/*.yaml && echo "  ok: $(ls "$k"/*.yaml "$k"/cert-manager/*.yaml | wc -l) files" || fail "yamllint"
echo "schemas:"
node "$v/validate.mjs" "$k" --out "$work/rendered.json" || fail "schema validation of $k"
node "$v/validate.mjs" "$k/cert-manager" --out "$work/cert-manager.json" || fail "schema validation of $k/cert-manager"
neg=$work/mutated
rm -rf "$neg" && mkdir -p "$neg" && cp "$k"/*.yaml "$neg/"
sed -i '0,/              port: 7071/s//              port: health/' "$neg/agent-daemonset.yaml"
node "$v/validate.mjs" "$neg" --expect-invalid >/dev/null 2>"$work/mutated.err" ||
  fail "a gRPC probe port given as a name passed the schema"
echo "  mutated copy refused: $(grep -m1 invalid "$work/mutated.err")"
echo "security settings:"
python3 "$src/tests/integration/kubernetes_security_check.py" "$work/rendered.json" "$work/cert-manager.json" ||
  fail "security settings"
echo "1 passed, 0 failed"
