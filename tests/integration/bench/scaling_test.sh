#!/usr/bin/env bash
# integration.bench_scaling: bench/scaling.sh at N = 16 and 32 with 2 rails, plans all-pairs and
# ring (all-pairs capped at 16, so one row says it was not run): every measured column of
# every row run is a number, the row not run says why, every figure is fitted for ring (two
# points: an exponent) and given per test for all-pairs (one point), the PNG is a PNG, and a
# wrong argument is refused with exit 2 and its name.
#   scaling_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=${1:?usage: $0 BUILD_DIR SOURCE_DIR}
src=${2:?usage: $0 BUILD_DIR SOURCE_DIR}
work=$(mktemp -d /tmp/bench-scaling-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

err=$("$src/bench/scaling.sh" --out "$work/o" --plans "ring cover" --build "$build" 2>&1)
[[ $? -eq 2 && $err == *"'cover' is not all-pairs, quick or ring"* ]] || fail "--plans cover was not refused: $err"
err=$("$src/bench/scaling.sh" --nodes "16 32" 2>&1)
[[ $? -eq 2 && $err == *"--out DIR is required"* ]] || fail "no --out was not refused: $err"

"$src/bench/scaling.sh" --out "$work/o" --name t --nodes "16 32" --plans "all-pairs ring" --all-pairs-max 16 \
  --rails 2 --build "$build" --work "$work/w" >"$work/out.txt" 2>"$work/err.txt" || {
  cat "$work/err.txt"
  fail "bench/scaling.sh exited $?"
}
cat "$work/o/t.txt"
[[ -s $work/o/t.png && $(head -c 8 "$work/o/t.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
  fail "t.png is not a PNG"

SRC=$src /usr/bin/python3 - "$work/o/t.tsv" "$work/o/t.txt" <<'PY' || fail "the table or the fits are not as they should be"
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "bench"))
import scaling_report as sr
rows = sr.load(sys.argv[1])
text = open(sys.argv[2]).read()
bad = []
got = sorted((r["plan"], int(r["nodes"])) for r in rows)
if got != [("all-pairs", 16), ("all-pairs", 32), ("ring", 16), ("ring", 32)]:
    bad.append(f"rows {got}")
measured = [c for c in sr.COLUMNS if c not in ("plan", "ingest_postgres_s", "note")]
for r in rows:
    if r["plan"] == "all-pairs" and r["nodes"] == "32":
        if not r["note"].startswith("not run: all-pairs above --all-pairs-max 16") or r["tests"] != str(32 * 31 * 2):
            bad.append(f"the row not run: {r}")
        continue
    for c in measured:
        if sr.number(r, c) is None:
            bad.append(f"{r['plan']} N={r['nodes']}: {c} = {r[c]!r}")
    r_n = int(r["nodes"])
    want = {"all-pairs": r_n * (r_n - 1) * 2, "ring": r_n * 2}
    if int(r["tests"]) != want[r["plan"]]:
        bad.append(f"{r['plan']} N={r_n}: {r['tests']} tests, want {want[r['plan']]}")
for col, *_ in sr.FIGURES:
    if col == "ingest_postgres_s":
        continue
    for plan in ("all-pairs", "ring"):
        line = [l for l in text.splitlines() if l.split()[:2] == [col, plan]]
        if len(line) != 1:
            bad.append(f"no fit line for {col} {plan}")
            continue
        f = line[0].split()
        if plan == "ring" and not f[3].replace(".", "").replace("-", "").isdigit():
            bad.append(f"no exponent: {line[0]}")
        if "us/test" not in line[0] and "B/test" not in line[0] and "kB/test" not in line[0]:
            bad.append(f"no cost per test: {line[0]}")
if "# command: bench/scaling.sh --out" not in text:
    bad.append("the command is not on top")
print("\n".join(bad) or "ok")
sys.exit(1 if bad else 0)
PY
echo PASS
