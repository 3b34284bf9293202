#!/usr/bin/env bash
# Issue 40: a simulation that does not repeat one call's network on the next.
# commbench --cross-traffic SEED,PAIRS: pairs of hosts that run no rank exchange messages
# for ever over the platform's own links (the other jobs of a shared cluster). On tree16x16
# (16 ranks, one per leaf, uplinks oversubscribed 4:1) the traffic crosses the ranks' uplinks:
# - the repetitions of one call differ, where without traffic they are equal;
# - traffic only slows the call (no repetition faster than without it);
# - the same seed repeats the run exactly, another seed gives other timings;
# - the record keeps the traffic's parameters;
# - a platform with too few hosts without a rank is refused with the reason, on every
#   rank alike (the run ends instead of hanging).
# commbench --arrival-skew SEED,US (the variability of a platform whose every host runs a
# rank): each rank reaches every call after its own seeded wait of uniform [0, 2 US] us:
# - the repetitions differ, one seed repeats the run exactly, another gives other timings;
# - the record keeps the skew's parameters;
# - under --host-speed (SMPI charges the computation itself) it is refused with the reason.
# Run by scripts/test.sh; under a minute once commbench is built in build-sim/.
source "$(dirname "$0")/common.sh" libcomm-cross-traffic
scripts/simulate.sh -np 1 commbench --help >/dev/null 2>&1 || fail "commbench does not build or run under SimGrid"
export SIM_REBUILD=0 LIBCOMM_PLATFORM=tree16x16.untuned

run() {  # run NAME [--cross-traffic ...]: alltoall pairwise 64 KiB, 16 ranks, 3 repetitions
  local name=$1
  shift
  scripts/simulate.sh --platform tree16x16 --hostfile inputs/platforms/tree16x16.hosts -np 16 commbench \
    --sizes 64K --reps 3 --warmup 1 --algo pairwise --skip-native "$@" --json "$TMP/$name.json" >"$TMP/$name.log" 2>&1 ||
    { cat "$TMP/$name.log"; fail "run $name"; }
}
run none
run a --cross-traffic 1,8
run b --cross-traffic 1,8
run c --cross-traffic 2,8
grep -q "^cross traffic: 8 pairs of hosts without a rank (seed 1)" "$TMP/a.log" || fail "the header does not say the traffic"
python3 - "$TMP" <<'PY' || fail "the cross traffic is not seeded, not repeatable or not there"
import json, sys
t = {n: json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("none", "a", "b", "c")}
times = {n: t[n]["results"][0]["times_s"] for n in t}
for n in times:
    print(n, times[n])
spread = lambda v: max(v) / min(v) - 1  # (a simulation's repeats differ in the last digits at most)
assert spread(times["none"]) < 1e-9, "without traffic the repetitions differ"
assert spread(times["a"]) > 1e-4, "with traffic the repetitions are (nearly) equal"
assert min(times["a"]) >= times["none"][0] * (1 - 1e-9), "the traffic made a call faster"
assert times["a"] == times["b"], "one seed, two different runs"
assert times["a"] != times["c"], "two seeds, the same run"
assert t["a"]["cross_traffic"] == {"seed": 1, "pairs": 8, "mean_bytes": 65536.0, "gap_us": 1000.0}, t["a"].get("cross_traffic")
assert "cross_traffic" not in t["none"]
PY
run skew_a --arrival-skew 1,50
run skew_b --arrival-skew 1,50
run skew_c --arrival-skew 2,50
grep -q "^arrival skew: each rank starts every call after uniform \[0, 100\] us (seed 1" "$TMP/skew_a.log" ||
  fail "the header does not say the arrival skew"
python3 - "$TMP" <<'PY' || fail "the arrival skew is not seeded, not repeatable or not there"
import json, sys
t = {n: json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("none", "skew_a", "skew_b", "skew_c")}
times = {n: t[n]["results"][0]["times_s"] for n in t}
for n in times:
    print(n, times[n])
assert max(times["skew_a"]) / min(times["skew_a"]) - 1 > 1e-4, "with arrival skew the repetitions are (nearly) equal"
assert times["skew_a"] == times["skew_b"], "one seed, two different runs"
assert times["skew_a"] != times["skew_c"], "two seeds, the same run"
assert t["skew_a"]["arrival_skew"] == {"seed": 1, "mean_us": 50.0}, t["skew_a"].get("arrival_skew")
assert "arrival_skew" not in t["none"]
PY
rc=0
scripts/simulate.sh --host-speed 1Gf -np 2 commbench --sizes 8 --reps 1 --algo pairwise --skip-native \
  --arrival-skew 1,50 >"$TMP/speed.log" 2>&1 || rc=$?
[[ $rc != 0 ]] && grep -q -- "--arrival-skew: SMPI already charges the measured computation" "$TMP/speed.log" ||
  fail "--arrival-skew under --host-speed: exit $rc, not refused with the reason"
rc=0
timeout 300 scripts/simulate.sh -np 63 commbench --sizes 8 --reps 1 --algo pairwise --skip-native --cross-traffic 1,1 \
  >"$TMP/full.log" 2>&1 || rc=$?
[[ $rc != 0 && $rc != 124 ]] && grep -q "1 pairs need 2 hosts that run no rank; the platform has 1" "$TMP/full.log" ||
  fail "63 ranks on flat64's 64 hosts with 1 pair: exit $rc, not refused with the reason"

((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
echo "cross_traffic: all checks passed"
