#!/usr/bin/env bash
# The main job: installs what is missing, builds, runs every program of the suite at its
# default sizes on a default number of ranks (each validates its result), and ends with
# one summary table. Results: results/*.json, results/summary.json.
#   scripts/run.sh [--np N] [--quick]
#     --np N     ranks for the timed runs (default 2, the cores of this machine)
#     --quick    smaller sizes and fewer repetitions (a smoke run)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$LIBCOMM_ROOT"
NP=2
QUICK=0
while (($#)); do
  case "$1" in
    --np) NP="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
BUILD_DIR="${BUILD_DIR:-build}"
ensure_packages "${LIBCOMM_PACKAGES[@]}"
mpi_environment
echo "== building in $BUILD_DIR (the programs this job runs; scripts/test.sh builds the rest)"
configure_and_build "$BUILD_DIR" --targets "commbench fft3d redistribute schedgen matvec nbody"
mkdir -p results
rm -f results/*.json

status=0
run() {  # run NAME NP PROGRAM ARGS...: one validated program run, JSON to results/NAME.json
  local name="$1" np="$2"
  shift 2
  echo
  echo "== $name: mpirun -np $np $*"
  if ! mpirun -np "$np" "$@" --json "results/$name.json"; then
    echo "== $name FAILED"
    status=1
  fi
}

if ((QUICK)); then
  run commbench_np$NP "$NP" "$BUILD_DIR/apps/commbench/commbench" --sizes 8,1K,64K --reps 3
else
  run commbench_np$NP "$NP" "$BUILD_DIR/apps/commbench/commbench" --min 8 --max 4MiB --reps 7
  # Odd rank count and virtual nodes: every algorithm must stay correct there too.
  run commbench_np5_ppn2 5 "$BUILD_DIR/apps/commbench/commbench" --nodes ppn=2 \
    --sizes 0,8,1K,64K --reps 3
fi

# fft3d: distributed 3-D FFT whose transposes run on libcomm's all-to-all; the default
# case validates in seconds, the larger one times the slab transform per algorithm
# against FFTW's own MPI transform.
if ((QUICK)); then
  run fft3d_np$NP "$NP" "$BUILD_DIR/apps/fft3d/fft3d" --reps 3
else
  run fft3d_np$NP "$NP" "$BUILD_DIR/apps/fft3d/fft3d"
  run fft3d_128_np$NP "$NP" "$BUILD_DIR/apps/fft3d/fft3d" --n 128 --decomp slab \
    --algo native,pairwise,ring,factor,bruck --fftw-mpi --reps 5
fi

# redistribute (issue 5): sample-sort bucket exchange and a Pattern1 redistribution with
# alltoallv algorithms of paper 001; each run validates exactly-once delivery.
if ((QUICK)); then
  run redistribute_sort_np$NP "$NP" "$BUILD_DIR/apps/redistribute/redistribute" --reps 3
else
  run redistribute_sort_np$NP "$NP" "$BUILD_DIR/apps/redistribute/redistribute" \
    --algo native,direct,two_stage,four_stage --records 200000 --reps 7
  run redistribute_pattern1_np$NP "$NP" "$BUILD_DIR/apps/redistribute/redistribute" \
    --case pattern --pattern pattern1 --algo native,direct,two_stage,four_stage --mode n2 \
    --records 20000 --reps 7
fi

# schedgen (paper 003): the schedules of the Fig. 5 topologies, serial and validated.
for topo in fig5a fig5b fig5c; do
  echo
  echo "== schedgen_$topo: schedgen inputs/topologies/$topo.topo"
  if ! "$BUILD_DIR/apps/schedgen/schedgen" "inputs/topologies/$topo.topo" --table-phases 0 \
      --json "results/schedgen_$topo.json"; then
    echo "== schedgen_$topo FAILED"
    status=1
  fi
done

# commbench --op allgather / --op reduce_scatter: all-to-all broadcast and reduction by
# Hamiltonian cycles (paper 004), every algorithm beside the MPI library's collective.
if ((QUICK)); then
  run commbench_allgather_np$NP "$NP" "$BUILD_DIR/apps/commbench/commbench" --op allgather \
    --sizes 8,1K,64K --reps 3
  run commbench_reduce_scatter_np$NP "$NP" "$BUILD_DIR/apps/commbench/commbench" \
    --op reduce_scatter --sizes 8,1K,64K --reps 3
else
  run commbench_allgather_np$NP "$NP" "$BUILD_DIR/apps/commbench/commbench" --op allgather \
    --min 8 --max 1MiB --reps 7
  run commbench_reduce_scatter_np$NP "$NP" "$BUILD_DIR/apps/commbench/commbench" \
    --op reduce_scatter --min 8 --max 1MiB --reps 7
fi

# matvec and nbody: the mini-apps of paper 004 (y = A x, x^T A, A += y x^T in every layout of
# s. 2; direct N-body with an allgather per step or the systolic ring), every algorithm.
if ((QUICK)); then
  run matvec_np$NP "$NP" "$BUILD_DIR/apps/matvec/matvec" --reps 3
  run nbody_np$NP "$NP" "$BUILD_DIR/apps/nbody/nbody" --n 500 --steps 5
else
  run matvec_np$NP "$NP" "$BUILD_DIR/apps/matvec/matvec" --n 2000 --reps 11
  run nbody_np$NP "$NP" "$BUILD_DIR/apps/nbody/nbody" --n 2000 --steps 10 --reps 3
fi

echo
python3 scripts/summarize.py results > results/summary.txt || status=1
cat results/summary.txt
exit $status
