#!/usr/bin/env bash
# Runs unmodified programs with and without the drop-in library (libcomm_mpi.so in
# LD_PRELOAD) and compares their times: fft3d with --algo native (its transposes are
# MPI_Alltoall calls, which the preloaded library takes), the `native` row of commbench for
# every operation (MPI_Alltoall, MPI_Allgather, MPI_Reduce_scatter, MPI_Alltoallv), 8 B -
# 4 MiB, and tests/dropin/dropin_call_cost (per call: MPI_Alltoall, MPI_Ialltoall + MPI_Wait,
# and the program's own MPI_Isend/Irecv + MPI_Waitall, which the library's MPI_Waitall sees)
# at 8 B, 4 KiB and 64 KiB. The runs alternate ROUNDS times between four configurations:
# plain MPI; preloaded with the defaults (on one node `auto` is then the MPI library's
# collective, except reduce-scatter from 2 KiB: README, "Drop-in library"); preloaded with
# LIBCOMM_NODES=flat (every rank a node: libcomm's `auto` choice, the algorithms
# themselves); and that with LIBCOMM_CHECK_ARGS=1 (the optional collective argument check).
# The table shows the median over rounds of each program's own median, so machine noise
# hits all alike. The first preloaded runs' LIBCOMM_VERBOSE=1 logs are printed as well.
#   scripts/reproduce/dropin.sh [--np N] [--rounds R] [--n GRID] [--out FILE]
#   scripts/reproduce/dropin.sh --cost-only [--np "2 4"] [--rounds R] [--out FILE]
#     --np N       ranks (default 2; with --cost-only a list, default "2 4")
#     --rounds R   alternations (default 7; with --cost-only 11)
#     --n GRID     fft3d cube edge (default 64)
#     --out FILE   where the report goes as well (default docs/results/dropin_preload.txt;
#                  with --cost-only docs/results/dropin_cost.txt)
#     --cost-only  only what the preload costs a program: dropin_call_cost at 8 B, plain and
#                  preloaded with the defaults, alternating at each rank count (the timed
#                  calls come after 400 untimed ones: online has decided by then)
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$LIBCOMM_ROOT"
NP=
ROUNDS=
GRID=64
OUT=
COST_ONLY=0
while (($#)); do
  case "$1" in
    --np) NP="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --n) GRID="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --cost-only) COST_ONLY=1; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "dropin.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mpi_environment
if ((COST_ONLY)); then
  NP=${NP:-2 4}
  ROUNDS=${ROUNDS:-11}
  OUT=${OUT:-docs/results/dropin_cost.txt}
  LIB=build/libcomm_mpi/libcomm_mpi.so
  COST=build/tests/dropin/dropin_call_cost
  for f in "$LIB" "$COST"; do
    [[ -e $f ]] || { echo "dropin.sh: $f missing; build the targets libcomm_mpi dropin_call_cost" >&2; exit 2; }
  done
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  N=20000
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
  for ((r = 0; r < ROUNDS; ++r)); do
    for np in $NP; do
      mpiexec -n "$np" "$COST" 8 "$N" >"$tmp/plain.$np.$r" 2>&1
      mpiexec -n "$np" env LD_PRELOAD="$PWD/$LIB" "$COST" 8 "$N" >"$tmp/preload.$np.$r" 2>&1
    done
  done
  median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
  cost_of() {  # cost_of <plain|preload> <np> <awk pattern>: median over rounds, ns
    for ((r = 0; r < ROUNDS; ++r)); do awk "$3 {print \$(NF-3)}" "$tmp/$1.$2.$r"; done | median
  }
  {
    echo "what the preload costs: dropin_call_cost, 8 B, $ROUNDS alternating rounds (plain, then preloaded with the"
    echo "defaults), $(date -u +%Y-%m-%d) on $(nproc) cores (shared)"
    echo "commands: mpiexec -n P [env LD_PRELOAD=$LIB] $COST 8 $N   (P: $NP)"
    echo
    printf '%-5s %-44s %10s %10s %7s\n' ranks "call (ns per call, median over rounds)" plain preload ratio
    for np in $NP; do
      for c in "MPI_Alltoall after online decided|/^MPI_Alltoall,/" "MPI_Ialltoall + MPI_Wait|/^MPI_Ialltoall/" \
               "the program's own Irecv + Isend + Waitall|/Waitall/"; do
        a=$(cost_of plain "$np" "${c#*|}")
        b=$(cost_of preload "$np" "${c#*|}")
        printf '%-5s %-44s %10.0f %10.0f %7.3f\n' "$np" "${c%%|*}" "$a" "$b" "$(echo "$b / $a" | bc -l)"
      done
      echo "      preloaded, rank 0 after the untimed calls: $(sed -n 's/^routes after the untimed calls: //p' "$tmp/preload.$np.0")"
    done
    echo "ratio = preloaded / plain (below 1: faster preloaded)"
    echo "load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg)"
  } | tee "$OUT"
  exit 0
fi
NP=${NP:-2}
ROUNDS=${ROUNDS:-7}
OUT=${OUT:-docs/results/dropin_preload.txt}
LIB=build/libcomm_mpi/libcomm_mpi.so
FFT=build/apps/fft3d/fft3d
BENCH=build/apps/commbench/commbench
COST=build/tests/dropin/dropin_call_cost
COST_CASES=("8 20000" "4096 5000" "65536 1000")  # bytes, calls per batch
for f in "$LIB" "$FFT" "$BENCH" "$COST"; do
  [[ -e $f ]] || { echo "dropin.sh: $f missing; build the targets libcomm_mpi fft3d commbench dropin_call_cost" >&2; exit 2; }
done
FFT_ARGS=(--n "$GRID" --decomp slab,pencil --algo native --plan estimate --reps 5)
BENCH_OPS=(alltoall allgather reduce_scatter alltoallv)
BENCH_ARGS=(--algo native --min 8 --max 4MiB --reps 11 --warmup 2)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# envs_of <config>: 0 plain, 1 preloaded, 2 preloaded with LIBCOMM_NODES=flat, 3 and the check
envs_of() {
  envs=()
  (($1)) && envs=(env "LD_PRELOAD=$PWD/$LIB")
  (($1 >= 2)) && envs+=(LIBCOMM_NODES=flat)
  (($1 == 3)) && envs+=(LIBCOMM_CHECK_ARGS=1)
  return 0
}
run() {  # run <tag> <round> <config 0-3> <program> <args...>
  local tag=$1 round=$2 preload=$3; shift 3
  envs_of "$preload"
  ((preload)) && envs+=(LIBCOMM_VERBOSE=1)
  mpiexec -n "$NP" "${envs[@]}" "$@" > "$tmp/$tag.$preload.$round" 2>&1
  grep -q "validation: PASS" "$tmp/$tag.$preload.$round" ||
    { cat "$tmp/$tag.$preload.$round"; echo "dropin.sh: $tag run failed validation" >&2; exit 1; }
}
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < ROUNDS; ++r)); do
  for preload in 0 1 2 3; do
    run fft3d "$r" "$preload" "$FFT" "${FFT_ARGS[@]}"
    for op in "${BENCH_OPS[@]}"; do
      run "commbench_$op" "$r" "$preload" "$BENCH" --op "$op" "${BENCH_ARGS[@]}" \
        --json "$tmp/commbench_$op.$preload.$r.json"
    done
    for c in "${COST_CASES[@]}"; do
      set -- $c
      envs_of "$preload"
      mpiexec -n "$NP" "${envs[@]}" "$COST" "$1" "$2" > "$tmp/cost_$1.$preload.$r" 2>&1 ||
        { cat "$tmp/cost_$1.$preload.$r"; echo "dropin.sh: dropin_call_cost failed" >&2; exit 1; }
    done
  done
done

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
# over_rounds <program> <config 0|1|2> <awk program printing one time | json:BYTES>: median
# over rounds (commbench: its JSON record's median, in us, to the nanosecond)
over_rounds() {
  for ((r = 0; r < ROUNDS; ++r)); do
    if [[ $3 == json:* ]]; then
      python3 -c 'import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    if x["algo"] == "native" and x["block_bytes"] == int(sys.argv[2]): print(x["median_s"] * 1e6)' \
        "$tmp/$1.$2.$r.json" "${3#json:}"
    else
      awk "$3" "$tmp/$1.$2.$r"
    fi
  done | median
}
# row <program> <case> <awk program>: one table line, plain / each preloaded configuration
row() {
  local a b c d
  a=$(over_rounds "$1" 0 "$3")
  b=$(over_rounds "$1" 1 "$3")
  c=$(over_rounds "$1" 2 "$3")
  d=$(over_rounds "$1" 3 "$3")
  printf '%-24s %-18s %11.4f %11.4f %7.3f %11.4f %7.3f %11.4f %7.3f\n' "$1" "$2" "$a" "$b" \
    "$(echo "$b / $a" | bc -l)" "$c" "$(echo "$c / $a" | bc -l)" "$d" "$(echo "$d / $a" | bc -l)"
}
{
  echo "drop-in library: $NP ranks, $ROUNDS alternating rounds, $(date -u +%Y-%m-%d) on $(nproc) cores (shared, loaded)"
  echo "commands:"
  echo "  mpiexec -n $NP $FFT ${FFT_ARGS[*]}"
  echo "  mpiexec -n $NP env LD_PRELOAD=$LIB LIBCOMM_VERBOSE=1 $FFT ${FFT_ARGS[*]}"
  echo "  mpiexec -n $NP [env LD_PRELOAD=...] $BENCH --op OP ${BENCH_ARGS[*]}   (OP: ${BENCH_OPS[*]})"
  echo "  mpiexec -n $NP [env LD_PRELOAD=...] $COST BYTES N   (BYTES N: ${COST_CASES[*]})"
  echo
  for config in 1 2; do
    echo "LIBCOMM_VERBOSE=1 log of the first fft3d and commbench runs preloaded$( ((config == 2)) && echo ", LIBCOMM_NODES=flat"):"
    grep -h "^libcomm_mpi:" "$tmp/fft3d.$config.0" "$tmp"/commbench_*."$config".0 | sort -u | sed 's/^/  /'
    echo
  done
  printf '%-24s %-18s %11s %11s %7s %11s %7s %11s %7s\n' program case "plain MPI" preload ratio "flat" ratio \
    "flat+check" ratio
  for decomp in slab pencil; do
    row fft3d "$decomp fwd_ms" "\$1 == \"$decomp\" && \$NF == \"PASS\" {print \$5}"
  done
  for op in "${BENCH_OPS[@]}"; do
    for bytes in $(python3 -c 'import json, sys
print(" ".join(str(x["block_bytes"]) for x in json.load(open(sys.argv[1]))["results"] if x["algo"] == "native"))' \
        "$tmp/commbench_$op.0.0.json"); do
      row "commbench_$op" "$bytes B us" "json:$bytes"
    done
  done
  for c in "${COST_CASES[@]}"; do
    set -- $c
    row "cost_$1" "MPI_Alltoall ns" '/^MPI_Alltoall,/ {print $(NF-3)}'
    row "cost_$1" "MPI_Ialltoall+Wait" '/^MPI_Ialltoall/ {print $(NF-3)}'
    row "cost_$1" "own p2p Waitall ns" '/Waitall/ {print $(NF-3)}'
  done
  echo "fft3d: forward transform ms; commbench_OP: the MPI call's us; cost_BYTES: ns per call (dropin_call_cost);"
  echo "medians over rounds of each run's median"
  echo "ratio = preloaded / plain MPI (below 1: faster preloaded). preload: the defaults; flat: LIBCOMM_NODES=flat"
  echo "(libcomm's algorithms also on one node); flat+check: and LIBCOMM_CHECK_ARGS=1 (libcomm's argument-check"
  echo "collective per call; off by default)"
  echo "load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT"
