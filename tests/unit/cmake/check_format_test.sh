#!/bin/bash
# cmake/check-format on a scratch repository with the tree's .clang-format:
# only the lines a commit changes are checked, against the right base.
#   tests/unit/cmake/check_format_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
check=$src/cmake/check-format
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/repo
mkdir -p "$repo/cmake"
cp "$src/.clang-format" "$repo/"
cp "$check" "$repo/cmake/"
cd "$repo"
git init -q -b main .
git config user.email t@example.invalid
git config user.name test
run() { # prints the exit status; output in $tmp/out
  set +e
  env -u GDRBENCH_FORMAT_BASE "$@" >"$tmp/out" 2>&1
  echo $?
  set -e
}

# A first commit has no parent: skipped (77) with the reason, not passed.
# Its file is long and unformatted; later commits leave those lines alone.
{
  echo 'int   old_unformatted( int a,int b ) { return a+b; }'
  echo 'namespace gdrbench {}'
} >old.cc
git add -A && git commit -qm first
[[ $(run cmake/check-format) == 77 ]] || fail "first commit: want 77, got: $(cat "$tmp/out")"
grep -q 'no parent commit' "$tmp/out" || fail "first commit: no reason: $(cat "$tmp/out")"

# A formatted change on main is checked against HEAD~1 and passes, though
# the untouched line above it is not formatted.
printf 'int added(int a, int b) { return a * b; }\n' >>old.cc
git commit -qam formatted
[[ $(run cmake/check-format) == 0 ]] || fail "formatted change: $(cat "$tmp/out")"
grep -q 'HEAD~1' "$tmp/out" || fail "formatted change: base not HEAD~1: $(cat "$tmp/out")"

# An unformatted change fails, with the diff of that line only.
git tag formatted
printf 'int  badly (int a){return a;}\n' >new.cc
git add new.cc && git commit -qm unformatted
[[ $(run cmake/check-format) == 1 ]] || fail "unformatted change: want 1: $(cat "$tmp/out")"
grep -q '^+int badly(int a) { return a; }$' "$tmp/out" || fail "no diff of the bad line: $(cat "$tmp/out")"
grep -q 'old_unformatted' "$tmp/out" && fail "untouched lines were checked: $(cat "$tmp/out")"

# A moved file is not a changed one: only the line edited in the move is checked.
git reset -q --hard formatted
mkdir sub && git mv old.cc sub/old.cc
sed -i 's/^namespace gdrbench {}$/namespace gdrbench {  }/' sub/old.cc
git commit -qam "moved, one line edited"
[[ $(run cmake/check-format) == 1 ]] || fail "moved file: the edited line passed: $(cat "$tmp/out")"
grep -q '^+namespace gdrbench {}$' "$tmp/out" || fail "moved file: no diff of the edited line: $(cat "$tmp/out")"
grep -q 'old_unformatted' "$tmp/out" && fail "moved file: its unchanged lines were checked: $(cat "$tmp/out")"
git reset -q --hard HEAD~1
git mv old.cc moved.cc && git commit -qm "moved only"
[[ $(run cmake/check-format) == 0 ]] || fail "a pure move was checked: $(cat "$tmp/out")"

# A non-C++ file is not checked.
git reset -q --hard formatted
printf 'const   x=1;\n' >app.js
git add app.js && git commit -qm js
[[ $(run cmake/check-format) == 0 ]] || fail "a .js file was checked: $(cat "$tmp/out")"

# On a branch: every commit since the merge base with main, not only the last.
git checkout -q -b topic
printf 'int  badly (int a){return a;}\n' >topic.cc
git add topic.cc && git commit -qm "topic: unformatted"
printf 'int fine(int a) { return a; }\n' >fine.cc
git add fine.cc && git commit -qm "topic: formatted"
[[ $(run cmake/check-format) == 1 ]] || fail "branch: an earlier commit's bad line passed: $(cat "$tmp/out")"
grep -q 'the merge base with main' "$tmp/out" || fail "branch: base not the merge base: $(cat "$tmp/out")"

# make format's mode fixes those lines in the working tree, then the check passes once committed.
[[ $(run cmake/check-format --fix) == 0 ]] || fail "--fix: $(cat "$tmp/out")"
grep -qx 'int badly(int a) { return a; }' topic.cc || fail "--fix did not format topic.cc: $(cat topic.cc)"
grep -q '^int   old_unformatted( int a,int b )' old.cc || fail "--fix touched lines outside the branch"
git commit -qam "topic: formatted by make format"
[[ $(run cmake/check-format) == 0 ]] || fail "after --fix: $(cat "$tmp/out")"

# An explicit base that is not a commit is an error, not a pass.
set +e
GDRBENCH_FORMAT_BASE=no-such-ref cmake/check-format >"$tmp/out" 2>&1
rc=$?
set -e
[[ $rc == 1 ]] || fail "bad GDRBENCH_FORMAT_BASE: want 1, got $rc: $(cat "$tmp/out")"

# Not a git checkout: skipped with the reason.
mkdir "$tmp/plain" && cp .clang-format "$tmp/plain/"
[[ $(run cmake/check-format "$tmp/plain") == 77 ]] || fail "not a checkout: $(cat "$tmp/out")"
grep -q 'not a git checkout' "$tmp/out" || fail "not a checkout: no reason: $(cat "$tmp/out")"
echo "PASS: check-format checks the changed C++ lines against the merge base or HEAD~1"
