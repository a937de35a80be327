#!/bin/bash
# The fuzzers: build (tests/fuzz/CMakeLists.txt, clang-14, libFuzzer, ASan,
# UBSan; ccache) and run each for SECONDS over its corpus: the seeds here
# (from the project's real test data: the H200 captures, the inventory test,
# Slurm's documented hostlists), the hostile captures, and every input that
# once crashed (regressions/, run first, each must pass).
#   tests/fuzz/run.sh OUT_DIR SECONDS [FUZZER...]    (make fuzz: 300 s each)
# Exit status: non-zero when a build fails or any fuzzer finds a crash; the
# crashing input is left in OUT_DIR/crashes/ (copy it to regressions/).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
out=$1
secs=$2
shift 2
fuzzers=("$@")
[[ ${#fuzzers[@]} -gt 0 ]] || fuzzers=(hostlist inventory capture requests journal server pair_chunk)
mkdir -p "$out"
out=$(cd "$out" && pwd)
export CCACHE_BASEDIR=$src CCACHE_NOHASHDIR=1
if [[ ! -f "$out/build/build.ninja" ]]; then
  CXX=clang++-14 cmake -S "$here" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$out/build" -j "$(nproc)" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }

# Seeds that are made, not stored: the hostile captures (Python's tarfile).
mkdir -p "$out/seeds/capture"
python3 "$src/tests/unit/agent/preflight/hostile_captures.py" "$out/seeds/capture"
cp "$src"/tests/testdata/gpu-h200/*.tar.gz "$out/seeds/capture/"
# A journal written by an older gdrbench (format 1), and real run.json files
# (the server's JSON upload).
mkdir -p "$out/seeds/journal" "$out/seeds/server" "$out/seeds/pair_chunk"
cp "$src"/tests/testdata/journal/*.bin "$out/seeds/journal/"
cp "$src"/tests/testdata/runs/*.json "$src"/tests/testdata/journal/*.run.json "$out/seeds/server/"
cp "$src"/tests/testdata/runs/*.json "$out/seeds/pair_chunk/"

status=0
for f in "${fuzzers[@]}"; do
  bin=$out/build/fuzz_$f
  corpus=$out/corpus/$f
  mkdir -p "$corpus" "$out/crashes/$f" "$out/seeds/$f"
  seeds=("$here/seeds/$f")
  [[ -d "$out/seeds/$f" ]] && seeds+=("$out/seeds/$f")
  [[ -d "$here/seeds/$f" ]] || seeds=("$out/seeds/$f")
  # Regressions: each past crash input once.
  if compgen -G "$here/regressions/$f/*" >/dev/null; then
    "$bin" -runs=0 "$here/regressions/$f"/* >"$out/$f-regressions.log" 2>&1 ||
      { echo "fuzz $f: a regression input crashes again:"; tail -20 "$out/$f-regressions.log"; status=1; }
  fi
  TMPDIR=$out "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/crashes/$f/" "$corpus" "${seeds[@]}" >"$out/$f.log" 2>&1 || {
    echo "fuzz $f: FOUND A CRASH (input in $out/crashes/$f/):"
    grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$out/$f.log" | head -10
    status=1
  }
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$f.log" | tail -1)
  echo "fuzz $f: ${execs:-?} executions in ${secs} s, corpus $(find "$corpus" -type f | wc -l) inputs"
done
exit $status
