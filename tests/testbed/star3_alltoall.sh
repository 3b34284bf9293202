#!/usr/bin/env bash
# CTest: a real packet network of 3 machines on one switch (scripts/testbed.sh, issue 9),
# 1 rank each, a validated all-to-all through it. Exit 77 (SKIPPED) with the reason when
# this machine cannot build network namespaces; the testbed is removed on every exit.
#   star3_alltoall.sh BUILD_DIR
set -uo pipefail
BUILD="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# Its own prefix and range, so a testbed a user has up is left alone.
TB=("$ROOT/scripts/testbed.sh" --prefix lcct --net 10.148)
skip() { echo "SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces (ip netns)"
command -v ip >/dev/null && command -v tc >/dev/null || skip "no iproute2 (ip, tc)"
probe="lcct-probe$$"
ip netns add "$probe" 2>/dev/null || skip "this machine does not allow network namespaces (ip netns add failed)"
if ! ip -n "$probe" link add lcct-b type bridge 2>/dev/null ||
   ! ip -n "$probe" link add lcct-x type veth peer name lcct-y 2>/dev/null ||
   ! tc -n "$probe" qdisc add dev lcct-x root tbf rate 10mbit burst 3028 limit 64kb 2>/dev/null; then
  ip netns del "$probe"
  skip "bridges, veth pairs or tbf qdiscs are not available in network namespaces"
fi
ip netns del "$probe"
trap '"${TB[@]}" down' EXIT
"${TB[@]}" up star3 --rate 100mbit || exit 1
out=$("${TB[@]}" run --build "$BUILD" -- commbench --op alltoall --algo linear,pairwise,ring \
      --sizes 0,1,1000,70000 --reps 1 --warmup 1 2>&1)
rc=$?
echo "$out"
# Every rank on its own machine: 3 distinct host names, and the data went over the links.
grep -q "validation: PASS" <<<"$out" || { echo "FAIL: no 'validation: PASS'"; exit 1; }
grep -Eq "links: busiest direction .* at [0-9]+% .*" <<<"$out" || { echo "FAIL: no link report"; exit 1; }
exit $rc
