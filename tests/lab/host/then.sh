#!/usr/bin/env bash
# then.sh AFTER -- COMMAND...: runs COMMAND (a lab run); when it passed, runs AFTER on the host
# (tests/lab/CMakeLists.txt: a lab script's `host=` header). Exit code: COMMAND's when it
# failed, else AFTER's.
after=$1
shift
[[ ${1:-} == -- ]] || { echo "usage: then.sh AFTER -- COMMAND..." >&2; exit 2; }
shift
"$@"
rc=$?
((rc == 0)) || exit $rc
echo "== on the host: $after" >&2
exec "$after"
