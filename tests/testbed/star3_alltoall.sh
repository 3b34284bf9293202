#!/usr/bin/env bash
# CTest: a real packet network of 3 machines on one switch (scripts/testbed.sh, issue 9),
# 1 rank each: every rank runs on its own machine (rank i's host name is machine i's,
# lcct-n<i>, three distinct names), a validated all-to-all goes through the emulated links
# (the link report names a busiest direction). Exit 77 (ctest: SKIP_RETURN_CODE, reported as
# skipped, not passed) with the reason when this machine cannot build network namespaces
# (not root, or not allowed); the testbed is removed on every exit.
#   star3_alltoall.sh BUILD_DIR
set -uo pipefail
BUILD="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# Its own prefix and range, so a testbed a user has up is left alone.
TB=("$ROOT/scripts/testbed.sh" --prefix lcct --net 10.148)
skip() { echo "SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces (ip netns)"
# iproute2 is one of the packages scripts/test.sh installs (scripts/lib.sh): without it the
# test fails, it is not skipped (a skip is for what this machine does not allow).
command -v ip >/dev/null && command -v tc >/dev/null ||
  { echo "FAIL: no ip or tc: install iproute2 (scripts/test.sh does)"; exit 1; }
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
# Where each rank runs: "rank R on HOST", one line per rank.
where=$("${TB[@]}" run --build "$BUILD" -- /bin/sh -c 'echo "rank $OMPI_COMM_WORLD_RANK on $(hostname)"' 2>&1) ||
  { echo "$where"; echo "FAIL: the host-name run failed"; exit 1; }
echo "$where"
for r in 0 1 2; do
  grep -qx "rank $r on lcct-n$r" <<<"$where" || { echo "FAIL: rank $r is not on machine lcct-n$r"; exit 1; }
done
hosts=$(sed -n 's/^rank [0-9]* on //p' <<<"$where" | sort -u | wc -l)
[[ "$hosts" -eq 3 ]] || { echo "FAIL: the 3 ranks ran on $hosts distinct host(s), want 3"; exit 1; }
out=$("${TB[@]}" run --build "$BUILD" -- commbench --op alltoall --algo linear,pairwise,ring \
      --sizes 0,1,1000,70000 --reps 1 --warmup 1 2>&1)
rc=$?
echo "$out"
# The exchange validated, and its data went over the links.
((rc == 0)) || { echo "FAIL: commbench exited with $rc"; exit 1; }
grep -q "^validation: PASS" <<<"$out" || { echo "FAIL: no 'validation: PASS'"; exit 1; }
grep -Eq "links: busiest direction .* at [0-9]+% .*" <<<"$out" || { echo "FAIL: no link report"; exit 1; }
echo "star3_alltoall.sh: PASS (3 ranks on 3 machines lcct-n0..2, validated all-to-all over the links)"
