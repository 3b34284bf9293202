#!/usr/bin/env bash
# commbench --synchronized-start: every rank's clock starts at one agreed simulated instant
# after the barrier, so that the barrier's own exit skew is not in an algorithm's time.
# At 256 ranks on flat512 SMPI's Open MPI barrier lets the ranks go about 2.4 ms apart, and
# butterfly's allgather of 8 B (8 rounds of about 210 us) measured from the barrier holds it:
# - with the option the call takes less than 0.8 of its time from the barrier, and still
#   at least its 8 rounds of the platform's latency (206 us at 0 B: flat512.model);
# - no rank reached the agreed instant late, the record and the header say the start;
# - at 16 ranks, where that barrier leaves them together, the two starts time alike.
# Online times its candidates from a barrier of its own (timing_barrier), for the same
# reason, and must run an algorithm within 1.05 of the best at 8 B:
# - on tree16x16 at 256 ranks with the ranks reaching each call apart (timed from
#   MPI_Barrier, it measured native and butterfly 2.4 ms slow and ran send_spread, 1.16 x);
# - on cluster64x8 at 16 ranks, 2 nodes of 8, alltoall (timed from a dissemination barrier,
#   whose rounds cross nodes for some ranks only, it measured the hierarchical alltoalls at
#   twice their time and ran ring, 1.75 x).
# (The option is refused outside a SimGrid build: tests/apps, commbench/tune
# .synchronized_start_needs_simgrid.) Run by scripts/test.sh; about a minute.
source "$(dirname "$0")/common.sh" libcomm-synchronized-start
scripts/simulate.sh -np 1 commbench --help >/dev/null 2>&1 || fail "commbench does not build or run under SimGrid"
export SIM_REBUILD=0 LIBCOMM_PLATFORM=flat512.untuned

run() {  # run NAME RANKS [--synchronized-start]: butterfly allgather of 8 B on flat512
  local name=$1 np=$2
  shift 2
  scripts/simulate.sh --platform flat512 -np "$np" commbench --op allgather --sizes 8 --reps 3 --warmup 1 \
    --simulated-payload --nodes flat --algo butterfly --skip-native "$@" --json "$TMP/$name.json" \
    >"$TMP/$name.log" 2>&1 || { cat "$TMP/$name.log"; fail "run $name"; }
}
run barrier256 256
run together256 256 --synchronized-start
run barrier16 16
run together16 16 --synchronized-start
grep -q "^synchronized start: every rank's clock starts at one agreed instant" "$TMP/together256.log" ||
  fail "the header does not say the start"
python3 - "$TMP" <<'PY' || fail "the synchronized start does not time the call alone"
import json, sys
t = {n: json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("barrier256", "together256", "barrier16", "together16")}
us = {n: t[n]["results"][0]["median_s"] * 1e6 for n in t}
print(us)
assert us["together256"] < 0.8 * us["barrier256"], "256 ranks: the barrier's skew is still in the time"
assert us["together256"] >= 8 * 206, "256 ranks: less than butterfly's 8 rounds of latency"
assert abs(us["together16"] / us["barrier16"] - 1) < 0.01, "16 ranks: the two starts differ"
assert t["together256"]["synchronized_start"] == {"late_starts": 0}, t["together256"].get("synchronized_start")
assert "synchronized_start" not in t["barrier256"]
PY

online_within() {  # online_within NAME OP ALGOS simulate.sh-and-commbench-args...
  local name=$1 op=$2 algos=$3
  shift 3
  scripts/simulate.sh "$@" --op "$op" --sizes 8 --reps 3 --warmup 1 --simulated-payload --algo "$algos,auto:online" \
    --json "$TMP/$name.json" >"$TMP/$name.log" 2>&1 || { cat "$TMP/$name.log"; fail "run $name"; }
  python3 - "$TMP/$name.json" <<'PY' || fail "$name: online did not run an algorithm within 1.05 of the best"
import json, sys
rows = {r["algo"]: r for r in json.load(open(sys.argv[1]))["results"]}
best = min(r["median_s"] for a, r in rows.items() if not a.startswith("auto"))
online = rows["auto:online"]
print(sys.argv[1], online["ran"], online["median_s"] / best)
assert online["median_s"] <= 1.05 * best, (online["ran"], online["median_s"] / best)
PY
}
LIBCOMM_PLATFORM=tree16x16.untuned online_within tree256 allgather native,butterfly,send_spread --platform tree16x16 \
  -np 256 --hostfile inputs/platforms/tree16x16.hosts commbench --synchronized-start --arrival-skew 1,50 --nodes flat
LIBCOMM_PLATFORM=cluster64x8.untuned online_within cluster16 alltoall native,ring,send_aggregate,recv_distribute,leader \
  --platform cluster64x8 -np 16 --ppn 8 commbench --synchronized-start --cross-traffic 1,8 --nodes ppn=8

((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
echo "synchronized_start: all checks passed"
