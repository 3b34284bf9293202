#!/usr/bin/env bash
# Auto against the best single algorithm (issue 8, item 1): for each machine or platform,
# `tune` measures every algorithm and writes inputs/tuning/<name>.tune; then commbench
# times every algorithm and auto side by side with that table, and auto_report.py prints
# auto / best and auto / native per size (docs/results/auto.md).
#   scripts/reproduce/auto.sh [--only real|flat64|cluster64x8|ethernet_fig5b|flat512|cluster64x8_np512|
#                                     ethernet_fig5b_packet|ethernet_fig5c_packet]...
#                             [--model-copy GBS] [--real-runs N]
# real: 2 ranks on this machine; each commbench command runs N times (default 5) and the
# report takes the median of the run medians.
# The simulated runs charge the algorithms' local copies at GBS GB/s (default 1, as fft3d
# --model-copy 1; 0 = copies cost no simulated time, as before 25 November).
# Simulated tables are tuned at every doubling from 8 B to 4 MiB (commbench's range) and
# evaluated at those sizes and at the 1.5x sizes between them (12 B, 24 B, ..., 3 MiB), which no table
# measured (the simulation is deterministic: at a tuned size auto / best is 1 by
# construction, so only the in-between sizes test the size ranges).
# 512 ranks (flat512, cluster64x8_np512) run only when named: blocks below 512 B, where
# SimGrid's own all-to-all is Bruck; from 512 B it is basic_linear, whose 1022 pending
# requests per rank stall the simulator (as linear and ring do at every size), so those
# candidates are left out and the table stops at 256 B (tune --up-to-largest). About 25 min
# (flat512) and 40 min (cluster64x8_np512) on one core.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$LIBCOMM_ROOT"
mpi_environment
ONLY=()
COPY_GBS=1
REAL_RUNS=5
while (($#)); do
  case "$1" in
    --only) ONLY+=("$2"); shift 2 ;;
    --model-copy) COPY_GBS="$2"; shift 2 ;;
    --real-runs) REAL_RUNS="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "auto.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
want() { ((${#ONLY[@]} == 0)) || named "$1"; }
named() { [[ " ${ONLY[*]} " == *" $1 "* ]]; }
OUT=results/auto
mkdir -p "$OUT" inputs/tuning
TUNE_SIZES=8,16,32,64,128,256,512,1K,2K,4K,8K,16K,32K,64K,128K,256K,512K,1M,2M,4M
SIM_SIZES=8,12,16,24,32,48,64,96,128,192,256,384,512,768,1K,1536,2K,3K,4K,6K,8K,12K,16K,24K,32K,48K,64K,96K,128K,192K,256K,384K,512K,768K,1M,1536K,2M,3M,4M

if want real; then
  cmake --build build -j2 --target tune commbench >/dev/null
  # 2 real ranks on this machine, every operation, the whole commbench range. The machine
  # is shared and noisy: every commbench command runs REAL_RUNS times, and the report takes
  # the median of the runs' medians.
  mpirun -np 2 build/apps/tune/tune --reps 11 --platform "local, 2 ranks" \
    -o inputs/tuning/local_np2.tune
  rm -f "$OUT"/real_np2_*.json
  for ((run = 1; run <= REAL_RUNS; ++run)); do
    for op in alltoall allgather reduce_scatter; do
      LIBCOMM_TUNING=inputs/tuning/local_np2.tune mpirun -np 2 build/apps/commbench/commbench \
        --op "$op" --algo all --reps 11 --json "$OUT/real_np2_${op}.run$run.json" >"$OUT/real_np2_$op.log"
    done
    # (mesh needs a perfect square of ranks: it refuses P = 2.)
    LIBCOMM_TUNING=inputs/tuning/local_np2.tune mpirun -np 2 build/apps/commbench/commbench \
      --op alltoallv --modes b --algo native,direct,two_stage,four_stage,auto --reps 11 \
      --json "$OUT/real_np2_alltoallv.run$run.json" >"$OUT/real_np2_alltoallv.log"
  done
fi

export SIM_REBUILD=0
# SMPI folds every rank's simulated payload onto 1 MiB mappings: MiB blocks on 64 ranks and
# more need more mappings than Linux's default vm.max_map_count (65530), and SimGrid then
# aborts with "Could not map folded virtual memory".
if [[ -r /proc/sys/vm/max_map_count ]] && (($(cat /proc/sys/vm/max_map_count) < 1048576)); then
  sysctl -qw vm.max_map_count=1048576 2>/dev/null ||
    echo "auto.sh: warning: vm.max_map_count is $(cat /proc/sys/vm/max_map_count); blocks of MiBs may abort (raise it as root)" >&2
fi
sim() {  # sim NAME -- simulate.sh args ... -- program args (tune then commbench)
  local name="$1" platform="$2" np="$3" ppn="$4"
  shift 4
  scripts/simulate.sh --platform "$platform" -np "$np" --ppn "$ppn" tune --ops alltoall \
    --sizes "$TUNE_SIZES" --reps 1 --simulated-payload --model-copy "$COPY_GBS" --nodes "ppn=$ppn" --platform "$name" "$@" \
    -o "inputs/tuning/$name.tune"
  scripts/simulate.sh --platform "$platform" -np "$np" --ppn "$ppn" commbench --algo all \
    --sizes "$SIM_SIZES" --reps 1 --simulated-payload --model-copy "$COPY_GBS" --nodes "ppn=$ppn" "$@" \
    --json "$OUT/$name.json" >"$OUT/$name.log"
}
want flat64 && sim flat64 flat64 64 1
want cluster64x8 && sim cluster64x8 cluster64x8 64 8
if want ethernet_fig5b; then
  # The Ethernet tree of paper 003 Fig. 5(b): 32 machines, its hosts file and topology.
  export LIBCOMM_PLATFORM=ethernet_fig5b
  SMPI=(-platform inputs/platforms/ethernet_fig5b.xml -hostfile inputs/platforms/ethernet_fig5b.hosts
        --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf
        --cfg=smpi/shared-malloc:global --cfg=smpi/privatization:dlopen
        --log=root.thres:warning --log=smpi_config.thres:error)
  smpirun -np 32 "${SMPI[@]}" build-sim/apps/tune/tune --ops alltoall --sizes "$TUNE_SIZES" \
    --reps 1 --simulated-payload --model-copy "$COPY_GBS" --nodes flat --topology inputs/topologies/fig5b.topo \
    --platform ethernet_fig5b -o inputs/tuning/ethernet_fig5b.tune
  smpirun -np 32 "${SMPI[@]}" build-sim/apps/commbench/commbench --algo all --sizes "$SIM_SIZES" \
    --reps 1 --simulated-payload --model-copy "$COPY_GBS" --nodes flat --topology inputs/topologies/fig5b.topo \
    --json "$OUT/ethernet_fig5b.json" >"$OUT/ethernet_fig5b.log"
fi

# The Fig. 5 (b) and (c) trees on packets (ns-3's TCP, scripts/simulate.sh --network
# packet), only when named: each all-to-all of 32 machines costs up to a minute of CPU, so
# the table is tuned at four sizes (8K, 32K, 64K, 256K) among the algorithms that win
# somewhere on packets (docs/results/ethernet_packet.md), and auto is checked against them
# at four sizes between (16K, 48K, 128K, 192K). simulate.sh points auto at
# inputs/tuning/ethernet_fig5X_packet.tune itself.
for t in fig5b fig5c; do
  name=ethernet_${t}_packet
  named "$name" || continue
  PKT=(--network packet --platform "ethernet_$t" --hostfile "inputs/platforms/ethernet_$t.hosts")
  scripts/simulate.sh "${PKT[@]}" tune --ops alltoall --algo native,linear,ring,pairwise,tree_scheduled \
    --sizes 8K,32K,64K,256K --reps 1 --warmup 0 --refine 0 --nodes flat --topology "inputs/topologies/$t.topo" \
    --platform "$name" -o "inputs/tuning/$name.tune"
  scripts/simulate.sh "${PKT[@]}" commbench --algo native,linear,pairwise,tree_scheduled,auto \
    --sizes 16K,48K,128K,192K --reps 1 --warmup 0 --nodes flat --topology "inputs/topologies/$t.topo" \
    --progress --json "$OUT/$name.json" >"$OUT/$name.log"
done

# Evaluated at the tuned sizes, the sizes --refine added, and sizes between them.
SIZES_512=8,32,64,128,256
if named flat512; then
  scripts/simulate.sh --platform flat512 -np 512 --ppn 1 --cfg smpi/allgather:ring tune --ops alltoall \
    --algo native,bruck,pairwise,ring_sendrecv,factor,factor_grouped --sizes "$SIZES_512" --reps 1 \
    --simulated-payload --nodes flat --platform flat512 --model-copy "$COPY_GBS" --up-to-largest \
    -o inputs/tuning/flat512.tune
  # ring_sendrecv and factor_grouped time as pairwise to the microsecond here (the table
  # shows it); the evaluation leaves them out.
  scripts/simulate.sh --platform flat512 -np 512 --ppn 1 --cfg smpi/allgather:ring commbench \
    --algo native,bruck,pairwise,factor,auto --sizes 8,12,16,24,32,48,64,88,96,104,128,192,256 --reps 1 --simulated-payload \
    --model-copy "$COPY_GBS" --nodes flat --progress --json "$OUT/flat512.json" >"$OUT/flat512.log"
fi
if named cluster64x8_np512; then
  scripts/simulate.sh --platform cluster64x8 -np 512 --ppn 8 --cfg smpi/allgather:ring tune --ops alltoall \
    --algo native,bruck,pairwise,leader,send_aggregate --sizes "$SIZES_512" --reps 1 --simulated-payload \
    --nodes ppn=8 --platform cluster64x8 --model-copy "$COPY_GBS" --up-to-largest \
    -o "$OUT/cluster64x8_np512.tune"
  # The 512-rank rows go at the end of cluster64x8.tune, replacing earlier ones.
  sed -i '/^# 512 ranks, measured/,$d' inputs/tuning/cluster64x8.tune
  { echo "# 512 ranks, measured $(date -u +%Y-%m-%d) by apps/tune (scripts/reproduce/auto.sh --only cluster64x8_np512)"
    sed -n '/^# alltoall: 512 ranks/,$p' "$OUT/cluster64x8_np512.tune"; } >>inputs/tuning/cluster64x8.tune
  scripts/simulate.sh --platform cluster64x8 -np 512 --ppn 8 --cfg smpi/allgather:ring commbench \
    --algo native,bruck,pairwise,leader,send_aggregate,auto --sizes 8,12,16,24,32,40,48,64,96,128,144,176,192,256 \
    --reps 1 --simulated-payload \
    --model-copy "$COPY_GBS" --nodes ppn=8 --progress --json "$OUT/cluster64x8_np512.json" \
    >"$OUT/cluster64x8_np512.log"
fi

reports=()
for f in "$OUT"/*.json; do
  name=$(basename "$f" .json)
  [[ $name == *.run[2-9]* || $name == *.run[1-9][0-9]* ]] && continue  # joined to run 1 below
  table=inputs/tuning/$name.tune
  if [[ $name == *.run1 ]]; then  # the runs of one command, joined with '+'
    name=${name%.run1}
    f=$(ls "$OUT/$name".run*.json | paste -sd+)
  fi
  [[ $name == real_np2_* ]] && table=inputs/tuning/local_np2.tune
  [[ $name == cluster64x8_np* ]] && table=inputs/tuning/cluster64x8.tune
  # The table lets the report tell the sizes tune measured from those it did not.
  [[ -r $table ]] && reports+=("$name=$f:$table") || reports+=("$name=$f")
done
python3 scripts/reproduce/auto_report.py "${reports[@]}"
