#!/bin/bash
# docs/ kept true: each example inventory plans with `gdrbench sweep
# --dry-run`; every key the parser accepts (it lists them when it meets an
# unknown one) has a row in docs/inventory.md; a missing inventory file is a
# usage error (exit 2), like a malformed one.
#   docs_test.sh BIN_DIR SOURCE_DIR
set -u
bin=$1 src=$2
gdrbench=$bin/gdrbench
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for inv in "$src"/docs/examples/*.yaml; do
  if ! out=$("$gdrbench" sweep --inventory "$inv" --dry-run 2>&1); then
    fail "$(basename "$inv"): gdrbench sweep --dry-run: $out"
  elif ! grep -q "tests" <<<"$out"; then
    fail "$(basename "$inv"): no plan printed: $out"
  else
    echo "ok: $(basename "$inv"): $(head -1 <<<"$out")"
  fi
done

# The accepted keys at each level, from the parser's own error message.
keys_at() {  # YAML with one unknown key 'zz' at the level
  printf '%s' "$1" > "$work/inv.yaml"
  "$gdrbench" sweep --inventory "$work/inv.yaml" --dry-run 2>&1 |
    sed -n 's/.*unknown key (allowed: \(.*\))$/\1/p' | tr -d ' ' | tr ',' '\n'
}
levels=(
  $'zz: 1\nnodes:\n  - name: a\n'
  $'tls:\n  zz: 1\nnodes:\n  - name: a\n'
  $'rails:\n  - {nic: m, zz: 1}\nnodes:\n  - name: a\n'
  $'nodes:\n  - name: a\n    zz: 1\n'
  $'expect:\n  zz: 1\nnodes:\n  - name: a\n'
)
total=0
for level in "${levels[@]}"; do
  keys=$(keys_at "$level")
  [ -n "$keys" ] || fail "no 'allowed:' list for: $level"
  for k in $keys; do
    total=$((total + 1))
    grep -q "^| \`$k\` |" "$src/docs/inventory.md" || fail "inventory key '$k' has no row in docs/inventory.md"
  done
done
echo "ok: $total inventory keys, each documented"

"$gdrbench" sweep --inventory "$work/missing.yaml" --dry-run 2>"$work/err"
rc=$?
[ "$rc" = 2 ] || fail "missing inventory file: exit $rc, want 2 ($(cat "$work/err"))"
grep -q "missing.yaml" "$work/err" || fail "missing inventory file: the error does not name it: $(cat "$work/err")"
printf 'nodes:\n  - node01\n' > "$work/bad.yaml"
"$gdrbench" sweep --inventory "$work/bad.yaml" --dry-run 2>"$work/err"
rc=$?
[ "$rc" = 2 ] || fail "malformed inventory: exit $rc, want 2"
[ "$(wc -l < "$work/err")" = 1 ] || fail "malformed inventory: not one line: $(cat "$work/err")"

[ "$fails" = 0 ] && echo "docs_test: all ok"
exit $((fails > 0))
