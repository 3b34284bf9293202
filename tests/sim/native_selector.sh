#!/usr/bin/env bash
# Native under scripts/simulate.sh --native-selector (issue 40): by default SMPI runs Open
# MPI's decision rules (smpi/coll-selector:ompi), so at 16 ranks on flat64 its allgather of
# 8 B is recursive doubling, the simulated time of libcomm's butterfly to the last digit
# (the simulation repeats exactly); SMPI's own default (posting every message at once) is
# --native-selector smpi, and differs. Every record names the selector that ran. An
# alltoallv whose counts are all zero runs direct under the model policy in every mode,
# also in the modes whose site had agreed at an earlier mode's call (under 1 us: SMPI charges
# 10 ns per clock read; native takes over 100 us there). The model prices what Open MPI's
# tables run (alltoall, reduce_scatter), and a record's alltoallv predictions are of the
# pattern's messages, not of every message at M_max. Run by scripts/test.sh;
# seconds once commbench is built in build-sim/ (or SIM_BUILD_DIR).
source "$(dirname "$0")/common.sh" libcomm-native-selector
scripts/simulate.sh -np 1 commbench --help >/dev/null 2>&1 || fail "commbench does not build or run under SimGrid"
export SIM_REBUILD=0 LIBCOMM_PLATFORM=flat64.untuned
# median_of JSON ALGO BYTES: the median seconds of ALGO's row at BYTES
median_of() {
  python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(next(r["median_s"] for r in j["results"] if r["algo"] == sys.argv[2] and r["block_bytes"] == int(sys.argv[3])))' "$@"
}
field_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], "(none)"))' "$@"; }

echo "== allgather, 16 ranks on flat64, 8 B: native under each selector against butterfly"
for sel in default ompi smpi; do
  opt=()
  [[ $sel == default ]] || opt=(--native-selector "$sel")
  if ! scripts/simulate.sh "${opt[@]}" -np 16 commbench --op allgather --sizes 8 --reps 3 --algo native,butterfly \
    --json "$TMP/$sel.json" >"$TMP/$sel.log" 2>&1; then
    cat "$TMP/$sel.log"
    fail "allgather run ($sel)"
    continue
  fi
  n=$(median_of "$TMP/$sel.json" native 8) b=$(median_of "$TMP/$sel.json" butterfly 8)
  echo "$sel: native $n s, butterfly $b s, record: $(field_of "$TMP/$sel.json" native_selector)"
  want=$sel
  [[ $sel == default ]] && want=ompi
  [[ $(field_of "$TMP/$sel.json" native_selector) == "$want" ]] || fail "$sel: the record does not name $want"
  grep -q "^note: native is SMPI's allgather as the $want selector decides" "$TMP/$sel.log" ||
    fail "$sel: the table's notes do not name the $want selector"
  if [[ $want == ompi ]]; then
    [[ "$n" == "$b" ]] || fail "$sel: native ($n s) is not butterfly's time ($b s): not recursive doubling"
  else
    [[ "$n" != "$b" ]] || fail "smpi: native took butterfly's time: the selector was not SMPI's own"
  fi
done

echo "== the selector's name is checked, and given one way only"
rc=0
scripts/simulate.sh --native-selector lam -np 2 commbench --sizes 8 >"$TMP/bad.log" 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q "must be ompi, mpich, mvapich2 or smpi" "$TMP/bad.log" || fail "an unknown selector: exit $rc"
rc=0
scripts/simulate.sh --cfg smpi/coll-selector:mpich -np 2 commbench --sizes 8 >"$TMP/cfg.log" 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q "give the selector as --native-selector" "$TMP/cfg.log" || fail "--cfg smpi/coll-selector: exit $rc"

echo "== Open MPI's pairwise alltoallv at a P that is not a power of two runs (SMPI's ring, named)"
# Open MPI picks pairwise at P = 3; SimGrid's XOR pair would abort there, simulate.sh runs ring.
if scripts/simulate.sh -np 3 commbench --op alltoallv --sizes 8 --reps 1 --algo native \
  --json "$TMP/av3.json" >"$TMP/av3.log" 2>&1; then
  [[ $(field_of "$TMP/av3.json" native_forced) == ring ]] || fail "P = 3 alltoallv: the record does not name ring"
else
  cat "$TMP/av3.log"
  fail "P = 3 alltoallv under Open MPI's decision did not run"
fi
rc=0  # a user's own choice is kept: SimGrid's pair still aborts at P = 3
scripts/simulate.sh -np 3 --cfg smpi/alltoallv:pair commbench --op alltoallv --sizes 8 --reps 1 --algo native \
  >"$TMP/pair3.log" 2>&1 || rc=$?
[[ $rc != 0 ]] && grep -q "power of two" "$TMP/pair3.log" || fail "--cfg smpi/alltoallv:pair was not kept (exit $rc)"

echo "== the model prices what Open MPI's table runs"
# alltoall, 16 ranks, 4 KiB blocks: the table's linear exchange, priced as libcomm's linear
# (the 1.x-era rule the model followed before said the ring).
if scripts/simulate.sh -np 16 commbench --op alltoall --sizes 4K --reps 1 --warmup 0 --simulated-payload \
  --algo native,linear,ring_sendrecv --json "$TMP/price_a2a.json" >"$TMP/price_a2a.log" 2>&1; then
  python3 - "$TMP/price_a2a.json" <<'PY' || fail "alltoall at 16 ranks: the model's native is not the linear exchange"
import json, sys
rows = {r["algo"]: r["auto_model_s"] for r in json.load(open(sys.argv[1]))["results"]}
print("predicted:", rows)
assert abs(rows["native"] - rows["linear"]) <= 1e-9 * rows["linear"] and rows["native"] != rows["ring_sendrecv"]
PY
else
  cat "$TMP/price_a2a.log"
  fail "alltoall at 16 ranks: run"
fi
# reduce_scatter, 64 ranks of cluster64x8 (8 per node), 4 KiB blocks: the table's butterfly
# took 544 us; the old rule's recursive halving was predicted at 2499 us.
if LIBCOMM_PLATFORM=cluster64x8.untuned LIBCOMM_MODEL=inputs/tuning/cluster64x8.model \
  scripts/simulate.sh --platform cluster64x8 -np 64 --ppn 8 commbench --op reduce_scatter --sizes 4K --reps 1 \
  --warmup 0 --simulated-payload --model-copy 1 --nodes ppn=8 --algo native \
  --json "$TMP/price_rs.json" >"$TMP/price_rs.log" 2>&1; then
  python3 - "$TMP/price_rs.json" <<'PY' || fail "reduce_scatter at 64 ranks: the model's native is not within 1.5x of its time"
import json, sys
r = next(r for r in json.load(open(sys.argv[1]))["results"] if r["algo"] == "native")
ratio = r["auto_model_s"] / r["median_s"]
print(f"reduce_scatter 64 ranks 4 KiB: native predicted {r['auto_model_s'] * 1e6:.0f} us, took {r['median_s'] * 1e6:.0f} us")
assert 1 / 1.5 <= ratio <= 1.5, ratio
PY
else
  cat "$TMP/price_rs.log"
  fail "reduce_scatter at 64 ranks: run"
fi
# alltoallv, 16 ranks, pattern1 up to 1 MiB: the record's predictions are of the pattern's
# messages (mean 64 KiB here), not of every message at M_max (16x the bytes: 16x the time).
if scripts/simulate.sh -np 16 commbench --op alltoallv --modes b --elem 8 --sizes 1M --reps 1 --warmup 0 \
  --simulated-payload --algo direct --json "$TMP/price_av.json" >"$TMP/price_av.log" 2>&1; then
  python3 - "$TMP/price_av.json" <<'PY' || fail "alltoallv: the record's prediction is not of the pattern's messages"
import json, sys
r = next(r for r in json.load(open(sys.argv[1]))["results"] if r["algo"] == "direct/b")
ratio = r["auto_model_s"] / r["median_s"]
print(f"alltoallv 16 ranks, M_max 1 MiB (mean {r['auto_model_mean_bytes']:.0f} B): direct predicted "
      f"{r['auto_model_s'] * 1e6:.0f} us, took {r['median_s'] * 1e6:.0f} us")
assert r["auto_model_mean_bytes"] < r["block_bytes"] and 1 / 3 <= ratio <= 3, ratio
PY
else
  cat "$TMP/price_av.log"
  fail "alltoallv at 16 ranks: run"
fi
echo "== an all-empty alltoallv costs nothing under the model, in every mode"
if scripts/simulate.sh -np 16 commbench --op alltoallv --sizes 8 --reps 3 --algo native,auto:model \
  --json "$TMP/empty.json" >"$TMP/empty.log" 2>&1; then
  python3 - "$TMP/empty.json" <<'PY' || fail "the all-empty alltoallv did not run direct at no cost under the model"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["algo"].startswith("auto")]
assert len(rows) == 3, [r["algo"] for r in rows]  # modes b, n1, n2
for r in rows:
    print(r["algo"], r["ran"], r["median_s"], r["warmup_calls"])
    assert r["ran"] == "direct" and r["median_s"] < 1e-6 and r["warmup_calls"] <= 1, r
native = [r for r in json.load(open(sys.argv[1]))["results"] if r["algo"] == "native"]
assert native and native[0]["median_s"] > 0  # (what the model avoids: native costs time here)
PY
else
  cat "$TMP/empty.log"
  fail "all-empty alltoallv run"
fi

if ((failures)); then
  echo "native_selector.sh: $failures failure(s)"
  exit 1
fi
echo "native_selector.sh: PASS"
