#!/usr/bin/env bash
# Auto against the best single algorithm (issue 33; docs/results/auto.md). For every
# operation, commbench times every algorithm (native included) and auto under its three
# policies side by side in one run: online (after its warm-up calls), model (the cost
# formulas with the platform's calibrated parameters, inputs/tuning/<platform>.model) and
# table (a later run that starts from the table online learned, --save-learned, and
# measures nothing). auto_report.py writes the page from the JSON records.
#   scripts/reproduce/auto.sh [--only sim|real|dropin|model|uncalibrated|calibrate]... [--platforms "flat512 tree16x16 cluster64x8"]
#                             [--ranks "16 64 256"] [--ops "..."] [--sizes LIST] [--sim-reps N]
#                             [--sim-timeout S] [--cross-traffic SEED,PAIRS[,BYTES[,GAP_US]]]
#                             [--arrival-skew SEED,US]
#                             [--real-runs N] [--real-reps N] [--report-only]
# sim:    SimGrid (deterministic): flat512 (one switch), tree16x16 (a two-level fat tree,
#         rank r on leaf r mod 16) and cluster64x8 (nodes of 8 cores, --ppn 8); 16, 64 and
#         256 ranks; blocks 8 B - 1 MiB; every rank's clock starts at one agreed simulated
#         instant after the barrier (commbench --synchronized-start). Online runs at the
#         library's defaults (its warm-up of native calls, 3 timings per candidate),
#         --sim-reps timed repetitions (3). With --sim-timeout S, a run that has not
#         finished in S seconds is stopped and leaves NAME.skipped (its command and the
#         time), which the page lists. At 256 ranks
#         SMPI's all-at-once collectives (native allgather, linear all-to-alls: 65280
#         flows at once) take over 10 min per block size here, and a reduce_scatter of 256 KiB
#         blocks holds more scratch than this machine's 23 GB: run it with --sizes.
#         --cross-traffic passes commbench --cross-traffic to every simulated run (other jobs
#         on the network, so that online is scored on timings it did not choose from).
#         --arrival-skew passes commbench --arrival-skew (every rank reaches every call after
#         its own seeded wait): the variability of a platform whose every host runs a rank,
#         where no cross traffic fits (tree16x16 at 256 ranks).
# real:   this machine, 2 ranks, and 4 ranks as 2 virtual nodes of 2 (--nodes ppn=2);
#         the library's defaults (online after 16 native calls, 3 timings per candidate);
#         N runs of each command (default 3; --real-reps timed repetitions each, default 31),
#         the report takes the median of their medians; and the model on this machine's
#         parameters (commbench --calibrate, real_npN.model), in runs of its own.
# model (only when named): rerun the model policy's runs of the existing sim records, under
#         each record's own start, cross traffic or arrival skew.
# uncalibrated (with sim, or named): the model policy again in a run of its own, without
#         the platform's .model file, as a user on a platform nobody calibrated runs it (in
#         a simulation its parameters then come from the network the platform declares):
#         NAME.uncalibrated.json.
# calibrate (only when named): commbench --calibrate on each platform, rewriting
#         inputs/tuning/PLATFORM.model (the model policy's parameters).
# dropin: scripts/reproduce/dropin_apps.sh (the drop-in at its default under QE, LAMMPS,
#         hpcc), which writes docs/results/dropin_apps.md.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$LIBCOMM_ROOT"
mpi_environment
ONLY=()
PLATFORMS="flat512 tree16x16 cluster64x8"
RANKS="16 64 256"
OPS="alltoall allgather reduce_scatter alltoallv"
REAL_RUNS=3
REAL_REPS=31
REPORT_ONLY=0
SIZES=8,64,512,4K,32K,256K,1M
SIM_REPS=3
SIM_TIMEOUT=0
TRAFFIC=()  # --cross-traffic and --arrival-skew, passed to every simulated run
while (($#)); do
  case "$1" in
    --only) ONLY+=("$2"); shift 2 ;;
    --platforms) PLATFORMS="$2"; shift 2 ;;
    --ranks) RANKS="$2"; shift 2 ;;
    --ops) OPS="$2"; shift 2 ;;
    --real-runs) REAL_RUNS="$2"; shift 2 ;;
    --real-reps) REAL_REPS="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --sim-reps) SIM_REPS="$2"; shift 2 ;;
    --sim-timeout) SIM_TIMEOUT="$2"; shift 2 ;;
    --cross-traffic) TRAFFIC+=(--cross-traffic "$2"); shift 2 ;;
    --arrival-skew) TRAFFIC+=(--arrival-skew "$2"); shift 2 ;;
    --report-only) REPORT_ONLY=1; shift ;;
    -h|--help) sed -n '2,41p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "auto.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
want() { ((${#ONLY[@]} == 0)) || [[ " ${ONLY[*]} " == *" $1 "* ]]; }
OUT=docs/results/auto
mkdir -p "$OUT"
# Every record keeps the command that made it (NAME.cmd), which the page prints.
record() {  # record NAME command...: run it, its stdout to NAME.log, the command to NAME.cmd
  local name="$1"
  shift
  echo "$*" >"$OUT/$name.cmd"
  "$@" >"$OUT/$name.log"
}
# alltoallv: one mode (b, blocking) per row, 8-byte elements (so 8 B holds one); the
# block is pattern1's M_max, its longest message.
op_args() { [[ $1 == alltoallv ]] && echo "--modes b --elem 8" || true; }

# Each platform's cost parameters for the model policy (inputs/tuning/PLATFORM.model):
# commbench --calibrate on the platform (run only when named: --only calibrate).
CAL_SIZES=0,64,256,1K,4K,8K,16K,64K,256K,1M
if ((!REPORT_ONLY)) && [[ " ${ONLY[*]} " == *" calibrate "* ]]; then
  for platform in $PLATFORMS; do
    case $platform in
      cluster64x8) placement=(-np 64 --ppn 8); nodes=ppn=8 ;;  # eight nodes of 8
      # More hosts than the network carries links' worth (network_links): 128 over the 64
      # uplinks of the tree, 32 on the switch whose backbone carries 10 hosts' links.
      tree16x16) placement=(-np 128 --hostfile inputs/platforms/tree16x16.hosts); nodes=flat ;;
      *) placement=(-np 32); nodes=flat ;;
    esac
    SIM_REBUILD=0 scripts/simulate.sh --platform "$platform" "${placement[@]}" commbench \
      --calibrate "inputs/tuning/$platform.model" --sizes "$CAL_SIZES" --reps 3 --simulated-payload \
      --model-copy 1 --nodes "$nodes" >/dev/null
    sed -i "1i # scripts/reproduce/auto.sh --only calibrate --platforms $platform" "inputs/tuning/$platform.model"
  done
fi

# sim: every algorithm and online in one run, then table and model each in a run of its
# own (the simulation is deterministic, so runs compare); --only model reruns only the
# model's runs of existing records (after a change to the formulas or parameters), with
# the sizes and repetitions of their main run.
run_sim=0 run_model=0 run_uncalibrated=0
want sim && run_sim=1 run_model=1 run_uncalibrated=1
[[ " ${ONLY[*]} " == *" model "* ]] && run_model=1
[[ " ${ONLY[*]} " == *" uncalibrated "* ]] && run_uncalibrated=1
if ((!REPORT_ONLY)) && ((run_sim || run_model || run_uncalibrated)); then
  export SIM_REBUILD=0
  # SMPI folds every rank's simulated payload onto 1 MiB mappings: MiB blocks on 256 ranks
  # need more than Linux's default vm.max_map_count (65530).
  if [[ -r /proc/sys/vm/max_map_count ]] && (($(cat /proc/sys/vm/max_map_count) < 1048576)); then
    sysctl -qw vm.max_map_count=1048576 2>/dev/null ||
      echo "auto.sh: warning: vm.max_map_count is $(cat /proc/sys/vm/max_map_count); MiB blocks may abort" >&2
  fi
  # model_run SUFFIX ENV...: the model policy's own run of record $name under ENV, with the
  # sizes, repetitions, start and variability of its main run (set in the loop below).
  model_run() {
    local suffix=$1
    shift
    echo "auto.sh: $name.$suffix" >&2
    record "$name.$suffix" env "$@" "${simulate[@]}" "${varied[@]}" \
      --op "$op" $(op_args "$op") --sizes "$sizes" --reps "$reps" --warmup 1 --simulated-payload \
      --model-copy 1 --nodes "$nodes" --algo auto:model --skip-native --json "$OUT/$name.$suffix.json"
  }
  for platform in $PLATFORMS; do
    # The platform's cost parameters and no tuning table (LIBCOMM_PLATFORM names none; the
    # platform's own name would pick up an old .tune): online measures, model predicts.
    untuned=(env "LIBCOMM_PLATFORM=$platform.untuned" "LIBCOMM_MODEL=inputs/tuning/$platform.model")
    placement=()
    case $platform in
      cluster64x8) placement=(--ppn 8); nodes=ppn=8 ;;
      tree16x16) placement=(--hostfile inputs/platforms/tree16x16.hosts); nodes=flat ;;
      *) nodes=flat ;;
    esac
    for np in $RANKS; do
      for op in $OPS; do
        name=sim_${platform}_np${np}_$op
        simulate=(scripts/simulate.sh --platform "$platform" -np "$np" "${placement[@]}" commbench)
        # Every rank's clock starts at one agreed instant (the barrier's own exit skew, 2.4 ms
        # at 256 ranks on flat512, is not any algorithm's), then the variability asked for.
        sim=("${simulate[@]}" --synchronized-start "${TRAFFIC[@]}")
        if ((run_sim)); then
          # One untimed call first (a first call also pays SMPI's set-up), then the median
          # of --sim-reps (3). Without --cross-traffic a simulated call repeats exactly.
          reps=$SIM_REPS
          sizes=$SIZES
          echo "auto.sh: $name" >&2
          rm -f "$OUT/$name.skipped"
          limit=()
          ((SIM_TIMEOUT > 0)) && limit=(timeout "$SIM_TIMEOUT")
          rc=0
          record "$name" "${limit[@]}" "${untuned[@]}" "${sim[@]}" \
            --op "$op" $(op_args "$op") --sizes "$sizes" --reps "$reps" --warmup 1 --simulated-payload \
            --model-copy 1 --nodes "$nodes" --algo all,auto:online --save-learned "$OUT/$name.learned" \
            --json "$OUT/$name.json" || rc=$?
          if ((rc == 124)); then  # stopped by --sim-timeout: no record, the page says so
            { cat "$OUT/$name.cmd"; echo "not finished after $SIM_TIMEOUT s (--sim-timeout)"; } >"$OUT/$name.skipped"
            rm -f "$OUT/$name".{cmd,log,json,learned} "$OUT/$name".{table,model,uncalibrated}.{cmd,log,json}
            continue
          fi
          ((rc == 0)) || exit "$rc"
          record "$name.table" "${untuned[@]}" "LIBCOMM_TUNING=$OUT/$name.learned" "${sim[@]}" \
            --op "$op" $(op_args "$op") --sizes "$sizes" --reps "$reps" --warmup 1 --simulated-payload \
            --model-copy 1 --nodes "$nodes" --algo auto:table --skip-native --json "$OUT/$name.table.json"
        fi
        [[ -r $OUT/$name.cmd ]] || continue
        sizes=$(grep -o -- '--sizes [^ ]*' "$OUT/$name.cmd" | cut -d' ' -f2)
        reps=$(grep -o -- '--reps [^ ]*' "$OUT/$name.cmd" | cut -d' ' -f2)
        # The start and variability the record ran under (its synchronized start, cross
        # traffic or arrival skew), not this invocation's: a model rerun scores against the
        # record's own timings.
        read -ra varied <<<"$(grep -o -- '--synchronized-start\|--cross-traffic [^ ]*\|--arrival-skew [^ ]*' "$OUT/$name.cmd" | tr '\n' ' ')"
        if ((run_model)); then model_run model "${untuned[@]:1}"; fi
        if ((run_uncalibrated)); then model_run uncalibrated "LIBCOMM_PLATFORM=$platform.untuned"; fi
      done
    done
  done
fi

if ((!REPORT_ONLY)) && want real; then
  cmake --build build -j2 --target commbench >/dev/null
  for np in 2 4; do
    nodes=shared
    ((np == 4)) && nodes=ppn=2
    # What a user who calibrates gets: this machine's parameters (commbench --calibrate),
    # then each run again with the model on them, beside the run at the defaults.
    model=$OUT/real_np$np.model
    echo "auto.sh: real_np$np.calibrate" >&2
    record "real_np$np.calibrate" mpirun -np "$np" build/apps/commbench/commbench --calibrate "$model" --nodes "$nodes"
    for op in $OPS; do
      for ((run = 1; run <= REAL_RUNS; ++run)); do
        name=real_np${np}_$op.run$run
        echo "auto.sh: $name" >&2
        record "$name" mpirun -np "$np" build/apps/commbench/commbench --op "$op" $(op_args "$op") \
          --sizes "$SIZES" --reps "$REAL_REPS" --nodes "$nodes" --algo all,auto:online,auto:model \
          --json "$OUT/$name.json"
        name=real_np${np}_$op.calibrated.run$run
        record "$name" env LIBCOMM_MODEL="$model" mpirun -np "$np" build/apps/commbench/commbench --op "$op" \
          $(op_args "$op") --sizes "$SIZES" --reps "$REAL_REPS" --nodes "$nodes" --algo all,auto:model \
          --json "$OUT/$name.json"
      done
    done
  done
fi

if ((!REPORT_ONLY)) && want dropin; then
  scripts/reproduce/dropin_apps.sh
fi

python3 scripts/reproduce/auto_report.py --records "$OUT" --dropin docs/results/dropin_apps.md >docs/results/auto.md
echo "auto.sh: wrote docs/results/auto.md" >&2
