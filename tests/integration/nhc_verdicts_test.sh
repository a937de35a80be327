#!/usr/bin/env bash
# The NHC check (deploy/slurm/gdrbench_fabric.nhc) at 1,024 nodes x 8 rails: a run header of
# that size (1,024 node names in 8 per-rail matrices, three blamed nodes, one left out) is
# generated here, `gdrbench drain --run --dry-run --verdicts DIR` writes each node's verdict
# file (timed), and the check answers for a drained node, a passing one, a node without a
# file, a corrupt file and a hung read (a FIFO nobody writes), each timed: under a second, and
# never a drain on anything but a drain verdict. The same run over --max-fraction writes no
# verdict at all. (The run's pairs are not generated: the drain reads blame, the left-out
# nodes and the matrices' node names, and the NHC check reads none of the run.)
# Usage: nhc_verdicts_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
bin=${1:?}/bin src=${2:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/run.json" <<'PY'
import json, sys
nodes = [f"gpu{i:04d}" for i in range(1024)]
run = {
    "run_id": "big-1024x8",
    "matrices": [{"rail": r, "dst_rail": r, "nodes": nodes} for r in range(8)],
    "blame": [
        {"kind": "node", "subject": "gpu0017", "reason": "14 of its 16 cells are low", "evidence_gbps": 180.5},
        {"kind": "nic", "subject": "gpu0512 rail 3", "reason": "2 of its 2 cells on this rail are low"},
        {"kind": "link", "subject": "gpu0100->gpu0101 rail 5", "reason": "low"},
    ],
    "excluded_nodes": ["gpu1023: preflight FAIL (peermem_loaded)"],
}
json.dump(run, open(sys.argv[1], "w"))
PY
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
t=$(date +%s%N)
"$bin/gdrbench" drain --run "$work/run.json" --dry-run --verdicts "$work/verdicts" >"$work/dry" ||
  fail "drain --dry-run --verdicts: $(cat "$work/dry")"
echo "drain --verdicts over 1,024 x 8: $(ms "$t") ms, $(ls "$work/verdicts" | wc -l) files, $(du -sk "$work/verdicts" | cut -f1) KiB"
[[ $(wc -l <"$work/dry") == 3 ]] || fail "expected 3 drains (node, nic, excluded): $(cat "$work/dry")"
# 1,024 nodes: 3 drain, 2 suspect (the link's ends: no file), 1,019 pass.
[[ $(ls "$work/verdicts" | wc -l) == 1022 ]] || fail "expected 1,022 verdict files"
[[ ! -e "$work/verdicts/gpu0100" ]] || fail "a suspect (link end, --what without link) got a file"

NHC_DIE=""
die() { NHC_DIE="$2"; return "$1"; }
GDRBENCH_NHC_TIMEOUT=0.5
source "$src/deploy/slurm/gdrbench_fabric.nhc"
check() {  # check NODE WANT(0|1): runs and times the check
  local t rc took
  NHC_DIE=""
  t=$(date +%s%N)
  check_gdrbench_fabric "$work/verdicts" "$1" 2>"$work/note"
  rc=$?
  took=$(ms "$t")
  echo "  nhc $1: exit $rc in $took ms${NHC_DIE:+: $NHC_DIE}$( [[ -s "$work/note" ]] && echo " (note: $(cat "$work/note"))")"
  [[ $rc == "$2" ]] || fail "check of $1 exited $rc, expected $2"
  ((took < 1000)) || fail "check of $1 took $took ms"
}
check gpu0017 1
[[ "$NHC_DIE" == "gdrbench: node: 14 of its 16 cells are low [180.5 Gb/s] (run big-1024x8)" ]] ||
  fail "NHC message '$NHC_DIE'"
check gpu0512 1
check gpu1023 1
check gpu0500 0
check gpu0100 0            # suspect: no file
check nosuchnode 0         # no file: no verdict
printf 'gdrbench-verdict 9\nverdict drain\n' >"$work/verdicts/gpu0600"
check gpu0600 0            # not a version-1 verdict file: unknown, never a drain
grep -q "unknown" "$work/note" || fail "no 'unknown' note for a corrupt file"
printf 'garbage' >"$work/verdicts/gpu0601"
check gpu0601 0
mkfifo "$work/verdicts/hungnode"
check hungnode 0            # a read that never ends: unknown after GDRBENCH_NHC_TIMEOUT
grep -q "within 0.5 s" "$work/note" || fail "no timeout note for a hung read"

# Over the fraction: the same run at --max-fraction 0.001 writes nothing and drains nothing.
"$bin/gdrbench" drain --run "$work/run.json" --max-fraction 0.001 --verdicts "$work/refused" >"$work/out" 2>&1
rc=$?
((rc == 3)) || fail "drain over --max-fraction exited $rc: $(cat "$work/out")"
[[ ! -e "$work/refused" ]] || fail "a refused run wrote verdicts"
"$bin/gdrbench" drain --run "$work/run.json" --max-fraction 0.001 --check gpu0017 >"$work/out" 2>&1
rc=$?
((rc == 3)) || fail "drain --check on a refused run exited $rc: $(cat "$work/out")"
echo "  refused: $(cat "$work/out")"
echo "1 passed, 0 failed"
