#!/bin/sh
# The algorithms conformance.c forces are every name `commbench --list` prints, per
# operation: a new algorithm in libcomm's registry fails here until the program forces it.
#   algorithm_names.sh COMMBENCH CONFORMANCE
set -eu
commbench=$1 conformance=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# commbench: "--op NAME: ..." then one "  name  description" line per algorithm.
"$commbench" --list | awk '
  /^--op / { op = $2; sub(/:$/, "", op); next }
  /^  [a-z_]+ / && op != "" { names[op] = names[op] " " $1 }
  END { for (op in names) print op ":" names[op] }' | sort > "$tmp/commbench"
"$conformance" --list | sort > "$tmp/conformance"
if ! diff -u "$tmp/commbench" "$tmp/conformance"; then
  echo "algorithm_names.sh: FAIL: conformance.c's algorithm lists differ from commbench --list (- commbench, + conformance)"
  exit 1
fi
echo "algorithm_names.sh: PASS ($(wc -l < "$tmp/commbench") operations)"
