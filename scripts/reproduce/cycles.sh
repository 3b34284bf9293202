#!/usr/bin/env bash
# Reproduces Tables 6, 15 and 18 of paper 004 (all-to-all broadcast and reduction by
# Hamiltonian cycles) on a simulated binary d-cube: SimGrid platforms with d
# bidirectional links per node (scripts/reproduce/hypercube_platform.py), d = 1..DMAX,
# commbench built with SMPI. Prints the speed-up of ring and d_cycles over send_spread
# (broadcast) and reduce_spread (reduction), with and without the reordering pass, the
# data motion rate per node, and the d_cycles / ring ratio with reordering at d = DMAX;
# writes PNG plots to docs/results/.
#   scripts/reproduce/cycles.sh [--dmax D] [--sizes LIST] [--reps N] [--plots DIR]
#     --dmax D      largest cube dimension, 1..8 (default 8: 256 simulated nodes)
#     --sizes LIST  bytes per node (default 2K: 256 64-bit words, the size of Tables 6
#                   and 15)
#     --reps N      repetitions of the runs with the reordering pass (default 3, the
#                   minimum is kept: its charged CPU time varies a little); the
#                   data-motion-only runs are deterministic
#     --plots DIR   where the PNG plots go (default docs/results)
#     --jobs N      simulations run at once (default 1; each is one single-threaded
#                   smpirun, largest cube first; d = 8 takes a few minutes)
#     --bandwidth BW, --latency LAT  of every one-way cube link (default 100MBps, 1us: a
#                   256-word step is then bandwidth-bound, as on the CM-200, where the
#                   per-step overhead was 24 us against 1.5 ms of transfer, s. 6.1)
# Records: results/cycles/*.json; tables: results/cycles/tables.txt.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$LIBCOMM_ROOT"
DMAX=8
SIZES=2K
REPS=3
PLOTS=docs/results
JOBS=1
BW=100MBps
LAT=1us
while (($#)); do
  case "$1" in
    --dmax) DMAX="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --plots) PLOTS="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --bandwidth) BW="$2"; shift 2 ;;
    --latency) LAT="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cycles.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$DMAX" =~ ^[1-8]$ ]] || { echo "cycles.sh: --dmax must be 1..8, got '$DMAX'" >&2; exit 2; }
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "cycles.sh: --jobs must be a positive integer, got '$JOBS'" >&2; exit 2; }

ensure_packages "${LIBCOMM_PACKAGES[@]}" libsimgrid-dev  # (plots only where matplotlib is)
BUILD_DIR="${SIMGRID_BUILD_DIR:-build-simgrid}"
build_simgrid_target "$BUILD_DIR" commbench || exit 1

OUT=results/cycles
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.failed
# sim NAME D ARGS...: one commbench run on the 2^D-node cube, JSON to $OUT/NAME.json.
# SMPI's own computation benchmarking is off (smpi/simulate-computation:no): code between
# MPI calls takes no simulated time, except the sections libcomm charges explicitly
# (libcomm/sim.hpp: the staged variants' slot set-up and reordering pass, timed with the
# thread's CPU clock and executed on the simulated host). --reorder direct has no such
# section, so those runs are data motion only and deterministic. bw-factor = lat-factor
# = 1 everywhere: ideal cube links, not SMPI's default calibration of a TCP / InfiniBand
# network (which makes 1 KiB messages 3x slower).
# smpi/allgather:ring: commbench always times and validates against native, which for
# --op allgather is the simulator's own MPI_Allgather, and libcomm::Comm set-up calls it
# too. SimGrid 3.32's default allgather posts 2(P-1) requests per rank over multi-hop
# e-cube routes: at 256 ranks 65 k concurrent flows in one max-min system, which kept the
# d = 8 run unfinished after 112 CPU-min; with ring it takes 77 CPU-s. It changes only the
# native column, which no table below uses (the tables compare ring, d_cycles and
# send_spread / reduce_spread, all libcomm's own point-to-point code).
sim() {
  local name="$1" d="$2"
  shift 2
  local np=$((1 << d))
  echo "== $name: smpirun -np $np (binary $d-cube) commbench $*"
  local start=$SECONDS
  if ! smpirun -np "$np" -platform "$OUT/cube_d$d.xml" -hostfile "$OUT/hosts_d$d.txt" \
      --cfg=smpi/simulate-computation:no --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 \
      --cfg=smpi/display-timing:no --cfg=smpi/allgather:ring \
      --log=root.thres:error --log=smpi_config.thres:error \
      "$BUILD_DIR/apps/commbench/commbench" --sizes "$SIZES" --warmup 1 \
      "$@" --json "$OUT/$name.json" >"$OUT/$name.log" 2>&1; then
    echo "== $name FAILED (log: $OUT/$name.log)"
    tail -5 "$OUT/$name.log"
    touch "$OUT/$name.failed"
  fi
  grep -E "^validation" "$OUT/$name.log" || true
  echo "   ($((SECONDS - start)) s wall)"
}

for ((d = 1; d <= DMAX; ++d)); do
  python3 scripts/reproduce/hypercube_platform.py "$d" "$OUT/cube_d$d.xml" --hostfile "$OUT/hosts_d$d.txt" \
    --bandwidth "$BW" --latency "$LAT"
done
# spawn NAME D ARGS...: sim in the background once fewer than --jobs are running.
spawn() {
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
  sim "$@" &
}
# Largest cube first. Gray order: the single cycle is the cube's Gray-code path
# (nearest-neighbour shifts).
for ((d = DMAX; d >= 1; --d)); do
  # 1. Data motion only (the paper's "AABC" / "no index and reorder" columns), one
  #    repetition: the simulation is deterministic.
  #    d_cycles_im is not among them: its moved indices always need the reordering pass.
  spawn allgather_d${d}_direct "$d" --op allgather --order gray --reorder direct --reps 1 \
    --algo send_spread,ring,d_cycles
  #    The reduction's combines are not charged (libcomm/src/reduce_scatter/reduce_scatter.cpp
  #    says why), so these runs are data motion only too.
  spawn reduce_scatter_d${d} "$d" --op reduce_scatter --order gray --reps 1 \
    --algo reduce_spread,ring,d_cycles
  # 2. With the reordering pass (staged: receive in arrival order, then reorder locally),
  #    its CPU time charged; minimum over --reps repetitions.
  spawn allgather_d${d}_staged "$d" --op allgather --order gray --reorder staged --reps "$REPS" \
    --algo send_spread,ring,d_cycles,d_cycles_im
done
wait
status=0
compgen -G "$OUT/*.failed" >/dev/null && status=1

# The plots need matplotlib (Debian's python3-matplotlib, for the system interpreter); it is
# not installed for them: without it the tables are written and the plots are not drawn.
PY="$(matplotlib_python)"
if [[ -n "$PY" ]]; then
  "$PY" scripts/reproduce/cycles_tables.py "$OUT" "$PLOTS" | tee "$OUT/tables.txt"
else
  python3 scripts/reproduce/cycles_tables.py "$OUT" | tee "$OUT/tables.txt"
  echo "cycles.sh: no matplotlib: the tables are written, the plots in $PLOTS are not drawn" >&2
fi
exit $status
