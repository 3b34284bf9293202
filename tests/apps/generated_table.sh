#!/bin/sh
# A document must hold a table commbench prints, byte for byte, between the markers
# "<!-- commbench OPTION: begin -->" and "<!-- commbench OPTION: end -->":
# docs/fallbacks.md holds --fallbacks, README.md --config-table.
#   generated_table.sh COMMBENCH OPTION DOC
set -eu
commbench=$1 option=$2 doc=$3
table=$(sed -n "/commbench $option: begin -->/,/commbench $option: end -->/p" "$doc" | sed '1d;$d')
[ -n "$table" ] || { echo "generated_table.sh: no table between the $option markers in $doc"; exit 1; }
out=$("$commbench" "$option")
if [ "$out" != "$table" ]; then
  printf '%s\n' "$out" > /tmp/generated_table.$$
  printf '%s\n' "$table" | diff /tmp/generated_table.$$ - || true
  rm -f /tmp/generated_table.$$
  echo "generated_table.sh: FAIL: $doc differs from commbench $option (regenerate the table)"
  exit 1
fi
echo "generated_table.sh: PASS"
