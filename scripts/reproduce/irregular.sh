#!/usr/bin/env bash
# Paper 001, section 4 under SimGrid: A1 direct, A2 two_stage, A3 mesh and A4 four_stage,
# blocking (b) and non-blocking with one (n1) or two (n2) send buffers, on a flat network
# with the IBM SP2's figures of Table 1 (inputs/platforms/sp2_flat100.xml: Ts = 44 us,
# tc + td = 0.035 us/byte, one rank per host), 22-byte elements as on the SP2, Pattern1
# and Pattern2 of Fig. 14. Every run also prints the flat model's prediction for the SP2
# (commbench --predict SP2). Series:
#   calibration: commbench --calibrate on 2 ranks measures Ts and tc + td back
#   P:     M_max = 1024, P in PROCS; every algorithm and mode (A1-n2 is A1-n1 by
#          construction and is not rerun; A3 on squares only) (Figs. 15, 17)
#   Pbig:  M_max = 1024, P in PBIG; blocking mode only (A1-b, A2-b, A3-b, A4-b)
#   Mmax:  P = 64, M_max in MMAX (and 1024 from series P); every algorithm and mode
#          (Figs. 16, 18, 21, 22)
#   Fig23: A3-n1 against A4-n2, M_max = 4096, square P in FIG23 (and 64 from series Mmax)
# Records: results/irregular/*.json and *.log; tables (docs/results/irregular_tables.md),
# plots (docs/results/irregular_*.png) and copies of the JSON (docs/results/irregular/).
#   scripts/reproduce/irregular.sh [--quick] [--jobs N] [--procs "LIST"] [--pbig "LIST"]
#                                  [--mmax "LIST"] [--fig23 "LIST"] [--copy-gbs G]
#     --quick   series P at P = 16, 25 and Fig. 23 at P = 16 only; output in
#               results/irregular/ only (a smoke run of about a minute)
#     --copy-gbs G  charge the staged engine's local copies (composition and delivery,
#               paper 001's tm) at G GB/s (commbench --model-copy); output in
#               results/irregular_copy/ and docs/results/irregular_copy/ (the default
#               series, with free copies, stays in results/irregular/)
#     --jobs N  simulations run at once (default 1; each is one single-threaded process)
#     --procs, --pbig, --mmax, --fig23  the series' values (defaults:
#               "16 20 25 30 36 42 49 64", "100", "16 256 4096", "25 36 49 81 100")
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$LIBCOMM_ROOT"
QUICK=0
JOBS=1
PROCS="16 20 25 30 36 42 49 64"
PBIG="100"
MMAX="16 256 4096"
FIG23="25 36 49 81 100"
COPY_GBS=""
while (($#)); do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --procs) PROCS="$2"; shift 2 ;;
    --mmax) MMAX="$2"; shift 2 ;;
    --pbig) PBIG="$2"; shift 2 ;;
    --fig23) FIG23="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --copy-gbs) COPY_GBS="$2"; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "irregular.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
ELEM=22
PLATFORM=inputs/platforms/sp2_flat100.xml
OUT=results/irregular
DOCS=docs/results
COPY=()
if [[ -n "$COPY_GBS" ]]; then
  [[ "$COPY_GBS" =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "irregular.sh: --copy-gbs must be a positive number, got '$COPY_GBS'" >&2; exit 2; }
  COPY=(--model-copy "$COPY_GBS")
  OUT=results/irregular_copy
  DOCS=docs/results/irregular_copy
fi
if ((QUICK)); then
  PROCS="16 25"; PBIG=""; MMAX=""; FIG23="16"; DOCS=$OUT
fi
NHOSTS=$(python3 scripts/platform_hosts.py "$PLATFORM" | wc -l)
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "irregular.sh: --jobs must be a positive integer, got '$JOBS'" >&2; exit 2; }
for p in $PROCS $PBIG $FIG23; do
  [[ "$p" =~ ^[1-9][0-9]*$ ]] || { echo "irregular.sh: P must be a positive integer, got '$p'" >&2; exit 2; }
  ((p <= NHOSTS)) || { echo "irregular.sh: P = $p exceeds the $NHOSTS hosts of $PLATFORM" >&2; exit 2; }
done
for m in $MMAX; do
  [[ "$m" =~ ^[1-9][0-9]*$ ]] || { echo "irregular.sh: M_max must be a positive integer, got '$m'" >&2; exit 2; }
done

ensure_packages "${LIBCOMM_PACKAGES[@]}" libsimgrid-dev  # (plots only where matplotlib is)
BUILD="${SIMGRID_BUILD_DIR:-build-sim}"
build_simgrid_target "$BUILD" commbench || exit 1

mkdir -p "$OUT" "$DOCS"
rm -f "$OUT"/*.json "$OUT"/*.log
export OMPI_ALLOW_RUN_AS_ROOT=1
python3 scripts/platform_hosts.py "$PLATFORM" >"$OUT/hosts_all.txt"
FAILED="$OUT/failed.txt"
rm -f "$FAILED"
# sim NAME NP ARGS...: commbench on the first NP hosts of the SP2 platform (one rank per
# host), log and JSON in $OUT, in the background (at most --jobs at once). The
# simulation is deterministic: one timed repetition.
sim() {
  local name="$1" np="$2"
  shift 2
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
  head -n "$np" "$OUT/hosts_all.txt" >"$OUT/hosts_$np.txt"
  (
    t0=$SECONDS
    if ! smpirun -np "$np" -platform "$PLATFORM" -hostfile "$OUT/hosts_$np.txt" \
        --cfg=smpi/shared-malloc:global --cfg=smpi/privatization:dlopen \
        --cfg=smpi/display-timing:no --log=root.thres:error --log=smpi_config.thres:error \
        "$BUILD/apps/commbench/commbench" "$@" >"$OUT/$name.log" 2>&1; then
      echo "$name" >>"$FAILED"
      echo "== $name FAILED (log: $OUT/$name.log)"
      tail -5 "$OUT/$name.log"
    fi
    echo "== $name: P = $np, $((SECONDS - t0)) s real time; $(grep -E '^validation' "$OUT/$name.log" || true)"
  ) &
}
alltoallv() {  # alltoallv NAME NP PATTERN SIZES ALGOS
  sim "$1" "$2" --op alltoallv --pattern "$3" --elem "$ELEM" --sizes "$4" --algo "$5" \
    --reps 1 --warmup 1 --predict SP2 "${COPY[@]}" --json "$OUT/$1.json"
}
bytes() { local s="" m; for m in "$@"; do s+="${s:+,}$((m * ELEM))"; done; echo "$s"; }

ALL=direct/b,direct/n1,two_stage/b,two_stage/n1,two_stage/n2,four_stage/b,four_stage/n1,four_stage/n2
MESH=mesh/b,mesh/n1,mesh/n2
is_square() { local q; for ((q = 1; q * q <= $1; ++q)); do ((q * q == $1)) && return 0; done; return 1; }
algos_for() { if is_square "$1"; then echo "$ALL,$MESH"; else echo "$ALL"; fi; }

# Calibration on the simulated SP2: it must find Ts = 44 us and tc + td = 0.035 us/byte
# (the platform's figures) with a small residual.
sim calibrate 2 --calibrate "$OUT/sp2_calibrated.txt" --reps 3
for pattern in pattern1 pattern2; do
  for p in $PROCS; do alltoallv "${pattern}_p${p}_m1024" "$p" "$pattern" "$(bytes 1024)" "$(algos_for "$p")"; done
  for p in $PBIG; do
    b=direct/b,two_stage/b,four_stage/b
    is_square "$p" && b+=,mesh/b
    alltoallv "${pattern}_p${p}_m1024" "$p" "$pattern" "$(bytes 1024)" "$b"
  done
  if [[ -n "$MMAX" ]]; then
    alltoallv "${pattern}_p64_mmax" 64 "$pattern" "$(bytes $MMAX)" "$(algos_for 64)"
  fi
  for p in $FIG23; do
    alltoallv "${pattern}_p${p}_m4096" "$p" "$pattern" "$(bytes 4096)" mesh/n1,four_stage/n2
  done
done
wait
sed -n '/^Ts =/,/^fit/p' "$OUT/calibrate.log"
status=0
[[ -f "$FAILED" ]] && status=1

# (The copy rate, when there is one, comes from the records: model_copy_gbs.)
python3 scripts/reproduce/irregular_report.py "$OUT" "$DOCS" >"$DOCS/irregular_tables.md" || status=1
cat "$DOCS/irregular_tables.md"
# PNG plots where matplotlib is (the Debian interpreter's python3-matplotlib; it is not
# installed for them): without it the tables are written and the plots are not drawn.
PY="$(matplotlib_python)"
if [[ -n "$PY" ]]; then
  "$PY" scripts/reproduce/irregular_report.py "$OUT" "$DOCS" --plots >/dev/null || status=1
else
  echo "irregular.sh: no matplotlib: the tables are written, the plots are not drawn" >&2
fi
if ((!QUICK)); then
  mkdir -p "$DOCS/irregular"
  rm -f "$DOCS/irregular"/*.json
  cp "$OUT"/*.json "$OUT/sp2_calibrated.txt" "$OUT/calibrate.log" "$DOCS/irregular/"
fi
exit $status
