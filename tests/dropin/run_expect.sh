#!/bin/sh
# run_expect.sh [--expect REGEX]... -- COMMAND...
# Runs COMMAND and passes only when it exits 0 and its output (stdout and stderr) matches
# every REGEX (grep -E). CTest's PASS_REGULAR_EXPRESSION takes one pattern and ignores the
# exit code; the drop-in app tests need both "validation: PASS" and the library's log.
set -u
patterns=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --expect) patterns="$patterns
$2"; shift 2 ;;
    *) echo "run_expect.sh: unknown option '$1' (usage: --expect REGEX ... -- COMMAND)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || { echo "run_expect.sh: no command after --" >&2; exit 2; }
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then
  echo "run_expect.sh: command exited with $rc" >&2
  exit 1
fi
status=0
printf '%s\n' "$patterns" | while IFS= read -r p; do
  [ -z "$p" ] && continue
  printf '%s\n' "$out" | grep -Eq -- "$p" || { echo "run_expect.sh: output lacks /$p/" >&2; exit 1; }
done || status=1
exit $status
