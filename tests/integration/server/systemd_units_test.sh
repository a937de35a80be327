#!/usr/bin/env bash
# deploy/systemd: the server unit, the sweep service and its timer pass `systemd-analyze verify`
# (with the binaries of this build), and the example flag files parse with the binaries' own
# --config: gdrbench-server takes server.conf.example up to the files it names, gdrbench takes
# sweep.conf.example's [sweep] section up to its inventory. Nothing of verify's output is
# filtered. The server and the sweep each own their state directory (no shared
# StateDirectory: systemd would re-own it at every start of the other), the sweep's output
# lives in its own, and only the sweep service counts exit 1 (a cell failed) as a success: the
# CLI's "could not run" is 4 (controller/cli/exit_codes.h, docs/systemd.md), which must still
# fire OnFailure=.
set -euo pipefail
src=$1 bin=$2 work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for u in gdrbench-server.service gdrbench-sweep.service; do
  sed "s#@GDRBENCH_BINDIR@#$bin#" "$src/deploy/systemd/$u.in" >"$work/$u"
done
cp "$src/deploy/systemd/gdrbench-sweep.timer" "$work/"
if command -v systemd-analyze >/dev/null; then
  out=$(systemd-analyze verify --man=no "$work"/*.service "$work"/*.timer 2>&1) ||
    { echo "FAIL: systemd-analyze verify: $out"; exit 1; }
  [[ -z $out ]] || { echo "FAIL: systemd-analyze verify: $out"; exit 1; }
fi
sd() { sed -n "s/^StateDirectory=//p" "$work/$1"; }
[[ "$(sd gdrbench-server.service)" == gdrbench && "$(sd gdrbench-sweep.service)" == gdrbench-sweep ]] ||
  { echo "FAIL: state directories: server '$(sd gdrbench-server.service)', sweep '$(sd gdrbench-sweep.service)'"; exit 1; }
grep -qx 'out = /var/lib/gdrbench-sweep/latest' "$src/deploy/systemd/sweep.conf.example" ||
  { echo "FAIL: sweep.conf.example's out is not in the sweep's own state directory"; exit 1; }
for unit in "$work"/*.service; do
  want=""
  [[ $(basename "$unit") == gdrbench-sweep.service ]] && want="1"
  got=$(sed -n 's/^SuccessExitStatus=//p' "$unit")
  [[ "$got" == "$want" ]] || { echo "FAIL: $(basename "$unit"): SuccessExitStatus='$got', expected '$want'"; exit 1; }
done
# server.conf.example: every key is a flag (the error is about a missing file, not a flag).
out=$("$bin/gdrbench-server" --config "$src/deploy/systemd/server.conf.example" 2>&1 || true)
[[ $out == *"tokens"* || $out == *"No such file"* || $out == *"does not exist"* || $out == *"cannot"* ]] ||
  { echo "FAIL: server.conf.example: $out"; exit 1; }
[[ $out != *"not"*"option"* && $out != *"argument"*"not"* ]] || { echo "FAIL: server.conf.example: $out"; exit 1; }
rc=0
out=$("$bin/gdrbench" --config "$src/deploy/systemd/sweep.conf.example" sweep 2>&1) || rc=$?
[[ $out == *"/etc/gdrbench/inventory.yaml"* ]] || { echo "FAIL: sweep.conf.example (exit $rc): $out"; exit 1; }
echo "1 passed, 0 failed"
