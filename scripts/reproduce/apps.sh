#!/usr/bin/env bash
# Reproduces the papers' application-level claims with the mini-apps, under SimGrid with
# the local work charged by cost models (deterministic simulated time), and writes
# docs/results/apps.md with a plot per claim (scripts/reproduce/apps_report.py).
#
#   scripts/reproduce/apps.sh [--quick] [--only LIST] [--jobs N] [--commands-only]
#     --quick      a smaller run of every part (minutes): the 16 x 8 CPMD case with five
#                  algorithms, cubes up to d = 4, redistribution at P = 16 and 36; the
#                  report goes to results/apps_quick/apps.md instead of docs/results
#     --commands-only  run nothing: write each simulation's command (NAME.cmd) beside the
#                  records already there and rewrite the page from them (after a change
#                  to the report, or to give older records their commands)
#     --only LIST  comma-separated parts: cpmd, matvec, table19, nbody, redistribute (default all)
#     --jobs N     simulations at once (default 2; each is one single-threaded smpirun)
#
# Parts (records in results/apps/, one text log, one JSON and one NAME.cmd (the arguments
# given to scripts/simulate.sh: platform, ranks, SimGrid settings, program and options) per
# simulation, copied to docs/results/apps/, from which the page is written):
#   cpmd          paper 002, s. 6.2, Fig. 13: fft3d's CPMD-like slab transform (--sphere:
#                 only the x lines inside the cutoff sphere travel) on cluster64x8 at
#                 16 x 8 cores (cutoff radii 0.35, 0.5, 0.7 and the full slab), every
#                 regular all-to-all algorithm but the switch-tree ones and auto; the same
#                 problem (512 x 128 x 128, radius 0.5) at 16, 32 and 64 nodes x 8 (Fig.
#                 13(b)); SA / RD / leader with cold copies of received data (Fig. 5);
#                 commbench at the CPMD block with the intra-node steps through shared
#                 memory and through messages.
#                 FFT at 2 GFlop/s, copies at 1 GB/s (docs/results/fft3d_sim.md).
#   matvec        paper 004, s. 2, Table 19: matrix-vector and vector-matrix products on
#                 row, column and 2-D (column-major) layouts of a simulated binary d-cube,
#                 d = 1..8, every allgather / reduce-scatter pairing, flops charged at
#                 0.5 GFlop/s per node (--model-flops; the reduce-scatter's combines too).
#   table19       the products' rate on 256 nodes against the matrix size (Table 19's rows).
#   nbody         paper 004, s. 1: direct N-body, allgather algorithms against the systolic
#                 ring, on the same cubes and flop rate.
#   redistribute  paper 001: the sample sort's bucket exchange and Pattern1 through A1-A4
#                 in the modes b, n1, n2 on the SP2 platform at P = 16, 36, 64, 100, the
#                 composition / decomposition charged (0.1 GFlop/s, 0.1 GB/s as in
#                 docs/results/irregular.md).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$LIBCOMM_ROOT"
QUICK=0
ONLY=cpmd,matvec,table19,nbody,redistribute
JOBS=2
COMMANDS_ONLY=0
while (($#)); do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --only) ONLY="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --commands-only) COMMANDS_ONLY=1; shift ;;
    -h|--help) sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "apps.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "apps.sh: --jobs must be a positive integer, got '$JOBS'" >&2; exit 2; }
for part in ${ONLY//,/ }; do
  case "$part" in
    cpmd|matvec|table19|nbody|redistribute) ;;
    *) echo "apps.sh: --only: unknown part '$part' (cpmd, matvec, table19, nbody, redistribute)" >&2; exit 2 ;;
  esac
done
want() { [[ ",$ONLY," == *",$1,"* ]]; }

((COMMANDS_ONLY)) || ensure_packages "${LIBCOMM_PACKAGES[@]}" libsimgrid-dev  # (plots only where matplotlib is)
BUILD="${SIMGRID_BUILD_DIR:-build-sim}"
# (SIM_REBUILD=0, as for simulate.sh: use the binaries already in $BUILD as they are.)
if [[ "${SIM_REBUILD:-1}" == 1 ]] && ((!COMMANDS_ONLY)); then
  for t in fft3d commbench matvec nbody redistribute; do build_simgrid_target "$BUILD" "$t" || exit 1; done
fi
export SIM_REBUILD=0 SIM_BUILD_DIR="$BUILD"

OUT=results/apps
DOCS=docs/results
if ((QUICK)); then OUT=results/apps_quick; DOCS=$OUT; fi
CMDS=$OUT
((COMMANDS_ONLY && !QUICK)) && CMDS=$DOCS/apps  # beside the records the page is written from
mkdir -p "$OUT" "$CMDS"
FAILED="$OUT/failed.txt"
rm -f "$FAILED"

# run NAME SIMULATE-ARGS... -- PROGRAM ARGS...: one simulation in the background (at most
# --jobs at once), its output in $OUT/NAME.txt, its JSON in $OUT/NAME.json, its command
# (what simulate.sh is given, shell-quoted, one line) in NAME.cmd.
run() {
  local name="$1"
  shift
  printf '%q ' "$@" | sed 's/ $//' >"$CMDS/$name.cmd"
  echo >>"$CMDS/$name.cmd"
  ((COMMANDS_ONLY)) && return
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
  (
    t0=$SECONDS
    if ! scripts/simulate.sh "$@" --json "$OUT/$name.json" >"$OUT/$name.txt" 2>&1 ||
        ! grep -q "validation: PASS" "$OUT/$name.txt"; then
      echo "$name" >>"$FAILED"
      echo "== $name FAILED (log: $OUT/$name.txt)"
    else
      echo "== $name: $((SECONDS - t0)) s"
    fi
  ) &
}

# ---- paper 002: CPMD-like fft3d on cluster64x8 ------------------------------------------
if want cpmd; then
  CL=(--platform cluster64x8 --ppn 8 --cfg smpi/allgather:ring)
  MODEL=(--model-fft 2 --model-copy 1 --reps 1 --decomp slab)
  ALGOS=auto,linear,ring,ring_sendrecv,pairwise,factor,bruck,clustered_factor,leader,send_aggregate,recv_distribute
  if ((QUICK)); then
    run cpmd16x8_r0.5 "${CL[@]}" -np 128 fft3d "${MODEL[@]}" --n 128 --sphere 0.5 \
      --algo auto,pairwise,leader,send_aggregate,recv_distribute
  else
    for r in 0.35 0.5 0.7; do
      run "cpmd16x8_r$r" "${CL[@]}" -np 128 fft3d "${MODEL[@]}" --n 128 --sphere "$r" --algo "$ALGOS"
    done
    run cpmd16x8_full "${CL[@]}" -np 128 fft3d "${MODEL[@]}" --n 128 --algo "$ALGOS"
    run cpmd16x8_r0.5_cold "${CL[@]}" -np 128 fft3d "${MODEL[@]}" --n 128 --sphere 0.5 --model-copy-cold 0.5 \
      --algo leader,send_aggregate,recv_distribute
    for np in 128 256 512; do
      run "cpmd_scale_np$np" "${CL[@]}" -np "$np" fft3d "${MODEL[@]}" --size 512x128x128 --sphere 0.5 \
        --algo auto,pairwise,bruck,leader,send_aggregate,recv_distribute
    done
  fi
  # The CPMD block (416 B at 16 x 8, radius 0.5): shared window against intra-node messages.
  for intra in shared messages; do
    run "intra16x8_$intra" "${CL[@]}" -np 128 commbench --op alltoall --sizes 416,2K --reps 1 --warmup 1 \
      --model-copy 1 --intra "$intra" --algo leader,send_aggregate,recv_distribute
  done
fi

# ---- paper 004: matvec and nbody on binary d-cubes ----------------------------------------
DMAX=8
((QUICK)) && DMAX=4
# The cube's links (hypercube_platform.py's defaults, given here so that the record says
# them: cube_platform.cmd holds the generator's options).
CUBE_LINKS=(--bandwidth 1GBps --latency 1us)
if want matvec || want nbody || want table19; then
  printf '%q ' "${CUBE_LINKS[@]}" | sed 's/ $//' >"$CMDS/cube_platform.cmd"
  echo >>"$CMDS/cube_platform.cmd"
  for d in $(seq 1 "$DMAX"); do
    python3 scripts/reproduce/hypercube_platform.py "$d" "$OUT/cube_d$d.xml" --hostfile "$OUT/cube_d$d.hosts" \
      "${CUBE_LINKS[@]}" >/dev/null
  done
fi
# Ideal cube links (no TCP calibration factors), as cycles.sh; smpi/test:0: SMPI otherwise
# charges each MPI_Test(all) 0.1 ms, which the systolic loop calls between chunks.
CUBE_CFG=(--cfg smpi/bw-factor:0:1 --cfg smpi/lat-factor:0:1 --cfg smpi/allgather:ring --cfg smpi/test:0)
N_MATVEC=4096
N_BODIES=4096
((QUICK)) && N_MATVEC=1024 && N_BODIES=1024
for d in $(seq "$DMAX" -1 1); do
  CUBE=(--platform "$OUT/cube_d$d.xml" --hostfile "$OUT/cube_d$d.hosts" "${CUBE_CFG[@]}")
  if want matvec; then
    run "matvec_d$d" "${CUBE[@]}" matvec --model-flops 0.5 --n "$N_MATVEC" --op matvec,vecmat \
      --layout rows,cols,grid_colmajor --algo all --reps 1
  fi
  if want nbody; then
    run "nbody_d$d" "${CUBE[@]}" nbody --model-flops 0.5 --n "$N_BODIES" --steps 2 --algo all --reps 1
  fi
done

# Table 19's shape: the products' rate on 256 nodes (d = 8) as the matrix grows.
if want table19 && ((!QUICK)); then
  CUBE=(--platform "$OUT/cube_d8.xml" --hostfile "$OUT/cube_d8.hosts" "${CUBE_CFG[@]}")
  for n in 1024 2048 4096 8192; do
    run "matvec_t19_n$n" "${CUBE[@]}" matvec --model-flops 0.5 --n "$n" --op matvec,vecmat --layout grid_colmajor \
      --algo d_cycles,send_spread,native --reps 1
  done
fi

# ---- paper 001: redistribution on the SP2 platform ----------------------------------------
if want redistribute; then
  SP2=inputs/platforms/sp2_flat100.xml
  python3 scripts/platform_hosts.py "$SP2" >"$OUT/sp2_hosts_all.txt"
  PROCS="16 36 64 100"
  ((QUICK)) && PROCS="16 36"
  for p in $PROCS; do
    head -n "$p" "$OUT/sp2_hosts_all.txt" >"$OUT/sp2_hosts_$p.txt"
    for mode in b n1 n2; do
      algos=native,direct,two_stage,mesh,four_stage
      [[ "$mode" == b ]] || algos=direct,two_stage,mesh,four_stage
      for kase in sort pattern; do
        run "redistribute_${kase}_p${p}_$mode" --platform "$SP2" --hostfile "$OUT/sp2_hosts_$p.txt" \
          redistribute --case "$kase" --pattern pattern1 --records 1024 --record-bytes 22 --mode "$mode" \
          --algo "$algos" --reps 1 --model-flops 0.1 --model-copy 0.1
      done
    done
  done
fi
wait
if [[ -s "$FAILED" ]]; then
  echo "apps.sh: failed: $(tr '\n' ' ' <"$FAILED")" >&2
fi
RECORDS=$OUT
if ((!QUICK)); then  # the records the page is written from go beside it
  RECORDS=$DOCS/apps
  mkdir -p "$RECORDS"
  ((COMMANDS_ONLY)) || cp "$OUT"/*.json "$OUT"/*.txt "$OUT"/*.cmd "$RECORDS"/ 2>/dev/null || true
  rm -f "$RECORDS/failed.txt"
fi
# The page (and, with matplotlib, its plots: lib.sh's plot_python) from the records; the
# page's text depends on the records alone (tests/pages regenerates it in CI).
"$(plot_python)" scripts/reproduce/apps_report.py "$RECORDS" "$DOCS"
[[ ! -s "$FAILED" ]]
