#!/bin/bash
# `gdrbench sweep --dry-run --json` for fixed inputs (tests/testdata/dry_run/
# cases.txt) compared with the plans captured before the sweep request became
# one typed v1.SweepSpec (issue 27): the same flags give the same plan, its
# fingerprint (which hashes every SweepParams field) and its estimate.
#   dry_run_golden_test.sh BIN_DIR SOURCE_DIR            # compare
#   dry_run_golden_test.sh BIN_DIR SOURCE_DIR --capture  # write the goldens
set -u
bin=$1 src=$2 capture=${3:-}
data=$src/tests/testdata/dry_run
fails=0 cases=0
while read -r name args; do
  case "$name" in ''|'#'*) continue ;; esac
  args=${args//SRC/$src}
  args=${args//DATA/$data}
  # shellcheck disable=SC2086  # the case's words are the arguments
  # The plan is stdout; stderr may carry a warning line (the docs' example
  # inventories name /etc/gdrbench/ca.pem, which a dry run reads and warns of).
  out=$("$bin/gdrbench" sweep --dry-run --json $args 2>"${TMPDIR:-/tmp}/dry_run_golden.$$.err")
  rc=$?
  err=$(cat "${TMPDIR:-/tmp}/dry_run_golden.$$.err"); rm -f "${TMPDIR:-/tmp}/dry_run_golden.$$.err"
  if [ "$rc" != 0 ]; then
    echo "FAIL: $name: exit $rc: $err"
    fails=$((fails + 1))
    continue
  fi
  cases=$((cases + 1))
  if [ "$capture" = --capture ]; then
    printf '%s\n' "$out" > "$data/$name.json"
  elif ! diff -u "$data/$name.json" <(printf '%s\n' "$out"); then
    echo "FAIL: $name: the plan differs from $data/$name.json"
    fails=$((fails + 1))
  else
    echo "ok: $name"
  fi
done < "$data/cases.txt"
[ "$cases" -gt 0 ] || { echo "FAIL: no case ran"; exit 1; }
exit $((fails > 0))
