#!/usr/bin/env bash
# fft3d under SimGrid on paper 002's 64 x 8 InfiniPath cluster (inputs/platforms/
# cluster64x8.xml, 8 ranks per node): the all-to-all algorithm of the transposes of a
# CPMD-like 3-D FFT (paper 002, s. 6.2), flat against hierarchical. Discussion in
# docs/results/fft3d_sim.md.
#   scripts/reproduce/fft3d.sh [--quick] [--only slab|pencil] [--np N] [--slab-np N]
#                              [--n N] [--algo LIST] [--reps N] [--host-speed F] [--out DIR]
#     --quick        64 ranks (8 nodes), 1 repetition, native/auto/leader: a smoke run
#     --np N         ranks of the pencil case (default 512 = 64 x 8; a multiple of 8)
#     --slab-np N    ranks of the slab case (default 128 = 16 x 8, paper 002 Fig. 13(a);
#                    it must divide N, the grid's x-planes)
#     --n N          grid N^3 (default 128); the slab's blocks are (N/P)^2 N 16 bytes
#     --only CASE    run one case (the other's JSON in --out is kept for the report), so
#                    that the two cases can run as two processes at once
#     --algo LIST    algorithms besides native (default auto,leader,send_aggregate,
#                    recv_distribute,bruck,pairwise)
#     --reps N       timed repetitions after the validated warm-up (default 1: with the
#                    cost model the simulation is deterministic)
#     --model-fft G  local FFT work charged at G GFlop/s of 5 n log2 n (default 2, taken
#                    for a 2008 Clovertown core; fft3d --model-fft)
#     --model-copy B pack/unpack and the all-to-alls' block copies charged at B GB/s
#                    (default 1, one core's share of a Clovertown node; fft3d --model-copy)
#     --host-speed F measure the computation on this machine instead of the model, passed
#                    to simulate.sh (e.g. 4Gf); repetitions then spread 2-3x under load
#     --out DIR      JSON records and logs (default results/fft3d_sim)
# Both cases are N^3 c2c with FFTW_ESTIMATE plans, validated in every run (serial FFTW
# check up to 64^3, plane waves beyond).
# Writes docs/results/fft3d_sim_tables.md and docs/results/fft3d_sim.png.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
source "$ROOT/scripts/lib.sh"
QUICK=0
ONLY=all
NP=512
SLAB_NP=128
REPS=1
N=128
SPEED=""
MODEL_FFT=2
MODEL_COPY=1
OUT="$ROOT/results/fft3d_sim"
ALGOS=auto,leader,send_aggregate,recv_distribute,bruck,pairwise
while (($#)); do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --np) NP="$2"; shift 2 ;;
    --slab-np) SLAB_NP="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --n) N="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --algo) ALGOS="$2"; shift 2 ;;
    --host-speed) SPEED="$2"; shift 2 ;;
    --model-fft) MODEL_FFT="$2"; shift 2 ;;
    --model-copy) MODEL_COPY="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fft3d.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for v in NP SLAB_NP REPS N; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "fft3d.sh: --${v,,} must be a positive integer, got '${!v}'" >&2; exit 2; }
done
[[ "$ONLY" =~ ^(all|slab|pencil)$ ]] || { echo "fft3d.sh: --only must be slab or pencil, got '$ONLY'" >&2; exit 2; }
((NP % 8 == 0 && NP <= 512)) || { echo "fft3d.sh: --np must be a multiple of 8 up to 512, got $NP" >&2; exit 2; }
((N % SLAB_NP == 0)) ||
  { echo "fft3d.sh: --slab-np must divide $N (the x-planes of the grid), got $SLAB_NP" >&2; exit 2; }
if ((QUICK)); then
  NP=64 SLAB_NP=64 REPS=1 ALGOS=auto,leader
fi
# (The plot needs matplotlib; without it the report says so and writes the tables: the
# other reproduction scripts do the same, and none installs it.)
mkdir -p "$OUT"
SIM="$ROOT/scripts/simulate.sh"
"$SIM" -np 1 fft3d --n 8 --reps 1 --algo native >/dev/null  # builds build-sim once
export SIM_REBUILD=0

# Computation: the deterministic cost model, or SMPI's measurement with --host-speed.
if [[ -n "$SPEED" ]]; then
  COMPUTE=(--host-speed "$SPEED") MODEL=()
else
  COMPUTE=() MODEL=(--model-fft "$MODEL_FFT" --model-copy "$MODEL_COPY")
fi

# case NAME NP ARGS...: one fft3d run on NP ranks of the 64 x 8 platform; wall time logged.
status=0
case_run() {
  local name="$1" np="$2"
  shift 2
  echo "== $name: $np ranks of 64 x 8, fft3d $*"
  rm -f "$OUT/fft3d_$name.json"
  local t0=$SECONDS
  # smpi/allgather:ring: SimGrid 3.32's default MPI_Allgather posts 2(P-1) requests and
  # its wait loop costs the simulator O(P^2) per rank, 10+ CPU minutes per call at 512
  # ranks. fft3d only calls it while it sets up (libcomm::Comm, argument checks), never
  # in a timed transform, so the timed rows do not change.
  if ! "$SIM" --platform cluster64x8 --ppn 8 -np "$np" --cfg smpi/allgather:ring \
      "${COMPUTE[@]}" fft3d "${MODEL[@]}" \
      --n "$N" --reps "$REPS" --algo "$ALGOS" "$@" --json "$OUT/fft3d_$name.json" \
      >"$OUT/$name.log" 2>&1; then
    echo "== $name FAILED (log: $OUT/$name.log)"
    status=1
  fi
  grep -E "^(slab|pencil|validation)" "$OUT/$name.log" || tail -5 "$OUT/$name.log"
  echo "== $name: $((SECONDS - t0)) s wall"
}
# Slab: one all-to-all over every rank, 2 KiB blocks at 128 ranks (CPMD's plane-wise
# distribution). Pencil: two all-to-alls in row and column sub-communicators.
[[ $ONLY == pencil ]] || case_run slab_n${N}_np$SLAB_NP "$SLAB_NP" --decomp slab
[[ $ONLY == slab ]] || case_run pencil_n${N}_np$NP "$NP" --decomp pencil

PY="$(plot_python)"
# The records are kept beside the page (docs/results/fft3d_sim/, with the cells of the page
# before native ran under Open MPI's decision), which the pages test regenerates from them.
RECORDS="$ROOT/docs/results/fft3d_sim"
mkdir -p "$RECORDS"
cp "$OUT"/fft3d_*.json "$RECORDS/"
"$PY" "$ROOT/scripts/reproduce/fft3d_report.py" "$RECORDS" "$ROOT/docs/results/fft3d_sim_tables.md" \
  --png "$ROOT/docs/results/fft3d_sim.png" || status=1
exit $status
