#!/bin/sh
# docs/fallbacks.md must hold `commbench --fallbacks`' table, byte for byte.
#   fallbacks_doc.sh COMMBENCH DOC
set -eu
commbench=$1 doc=$2
table=$(sed -n '/commbench --fallbacks: begin -->/,/commbench --fallbacks: end -->/p' "$doc" | sed '1d;$d')
[ -n "$table" ] || { echo "fallbacks_doc.sh: no table between the markers in $doc"; exit 1; }
out=$("$commbench" --fallbacks)
if [ "$out" != "$table" ]; then
  printf '%s\n' "$out" > /tmp/fallbacks.$$
  printf '%s\n' "$table" | diff /tmp/fallbacks.$$ - || true
  rm -f /tmp/fallbacks.$$
  echo "fallbacks_doc.sh: FAIL: $doc differs from commbench --fallbacks (regenerate the table)"
  exit 1
fi
echo "fallbacks_doc.sh: PASS"
