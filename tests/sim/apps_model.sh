#!/usr/bin/env bash
# The mini-apps under SimGrid with their cost models (scripts/reproduce/apps.sh's runs, in
# small): fft3d's cutoff sphere through the shared-window schemes on 2 nodes of 4 cores,
# the cold-copy rate reaching recv_distribute's distribution and not send_aggregate's
# aggregation, matvec's flop model charging exactly the nominal flops, nbody's systolic
# ring, and commbench's two intra-node transports. Run by scripts/test.sh; seconds once
# built (builds fft3d, commbench, matvec and nbody in build-sim/ or SIM_BUILD_DIR first).
source "$(dirname "$0")/common.sh" libcomm-apps-model
CL=(--platform cluster64x8 --ppn 4 -np 8 --cfg smpi/allgather:ring)
for t in fft3d commbench matvec nbody; do  # (builds once, then never again below)
  scripts/simulate.sh -np 1 "$t" --help >/dev/null 2>&1 || { fail "$t does not build or run under SimGrid"; }
done
export SIM_REBUILD=0
# fwd_of LOG ALGO: the forward ms fft3d printed for ALGO
fwd_of() { awk -v a="$2" '$1 == "slab" && $3 == a {print $5}' "$1"; }

echo "== fft3d --sphere through the shared-window schemes"
scripts/simulate.sh "${CL[@]}" fft3d --n 16 --decomp slab --sphere 0.5 --model-fft 2 --model-copy 1 --reps 1 \
  --algo send_aggregate,recv_distribute,leader >"$TMP/sphere.log" 2>&1 || { cat "$TMP/sphere.log"; fail "sphere run"; }
grep -q "cutoff sphere" "$TMP/sphere.log" || fail "the sphere's transpose is not described"
grep -q "^validation: PASS" "$TMP/sphere.log" || { cat "$TMP/sphere.log"; fail "sphere: validation did not pass"; }

echo "== cold copies: recv_distribute pays them, send_aggregate does not"
scripts/simulate.sh "${CL[@]}" fft3d --n 16 --decomp slab --sphere 0.5 --model-fft 2 --model-copy 1 \
  --model-copy-cold 0.1 --reps 1 --algo send_aggregate,recv_distribute >"$TMP/cold.log" 2>&1 ||
  { cat "$TMP/cold.log"; fail "cold run"; }
sa=$(fwd_of "$TMP/sphere.log" send_aggregate) rd=$(fwd_of "$TMP/sphere.log" recv_distribute)
sa_c=$(fwd_of "$TMP/cold.log" send_aggregate) rd_c=$(fwd_of "$TMP/cold.log" recv_distribute)
echo "forward ms: SA $sa -> $sa_c, RD $rd -> $rd_c"
awk -v a="$sa" -v b="$sa_c" 'BEGIN {exit !(a == b)}' || fail "send_aggregate's time changed with the cold rate"
awk -v a="$rd" -v b="$rd_c" 'BEGIN {exit !(b > a)}' || fail "recv_distribute's cold copies were not charged"

echo "== matvec --model-flops charges 2 rows cols flops per product"
python3 scripts/reproduce/hypercube_platform.py 2 "$TMP/cube2.xml" --hostfile "$TMP/cube2.hosts" >/dev/null
CUBE=(--platform "$TMP/cube2.xml" --hostfile "$TMP/cube2.hosts" --cfg smpi/allgather:ring --cfg smpi/test:0)
scripts/simulate.sh "${CUBE[@]}" matvec --model-flops 0.5 --n 256 --op matvec --layout rows,cols --algo d_cycles,send_spread \
  --reps 1 --json "$TMP/matvec.json" >"$TMP/matvec.log" 2>&1 || { cat "$TMP/matvec.log"; fail "matvec run"; }
grep -q "^validation: PASS" "$TMP/matvec.log" || fail "matvec: validation did not pass"
# 256 x 256 over 4 nodes: 64 x 256 per node, 32768 flops at 0.5 GFlop/s = 65.536 us (SMPI adds
# 10 ns per MPI_Wtime call).
python3 - "$TMP/matvec.json" <<'PY' || fail "matvec's compute time is not the modelled flops"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["layout"] == "rows"]
assert rows, "no rows-layout result"
for r in rows:
    assert abs(r["compute_s"] - 65.536e-6) < 5e-8, f"{r['algo']}: compute {r['compute_s']} s, want 65.536 us"
PY

echo "== nbody: allgather and the systolic ring under the flop model"
scripts/simulate.sh "${CUBE[@]}" nbody --model-flops 0.5 --n 256 --steps 1 --algo d_cycles,systolic --reps 1 \
  >"$TMP/nbody.log" 2>&1 || { cat "$TMP/nbody.log"; fail "nbody run"; }
grep -q "^validation: PASS" "$TMP/nbody.log" || fail "nbody: validation did not pass"

echo "== commbench: the schemes through the shared window and through messages"
for intra in shared messages; do
  scripts/simulate.sh "${CL[@]}" commbench --sizes 1,416 --reps 1 --warmup 1 --intra "$intra" \
    --algo leader,send_aggregate,recv_distribute >"$TMP/intra_$intra.log" 2>&1 || fail "commbench --intra $intra"
  grep -q "^validation: PASS" "$TMP/intra_$intra.log" || fail "commbench --intra $intra: validation did not pass"
done

if ((failures)); then
  echo "apps_model.sh: $failures failure(s)"
  exit 1
fi
echo "apps_model.sh: PASS"
