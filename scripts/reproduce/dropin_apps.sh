#!/usr/bin/env bash
# Unmodified applications from Debian with and without the drop-in library (libcomm_mpi.so
# in LD_PRELOAD). So far Quantum ESPRESSO (Fortran: pw.x, the 2-atom silicon SCF of
# inputs/dropin/qe_si.in with Debian's Si.pz-vbc.UPF): the runs alternate ROUNDS times
# between plain MPI and preloaded at each rank count; the check is that the total energy
# is the same to the last printed digit and that LIBCOMM_VERBOSE=1 shows its MPI_ALLTOALL(V)
# calls reaching libcomm (Open MPI's Fortran layer calls PMPI_* directly: only the library's
# Fortran entry points catch them). Times are pw.x's own WALL figure, medians over rounds.
#   scripts/reproduce/dropin_apps.sh [--np "2 4"] [--rounds R] [--out FILE]
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$LIBCOMM_ROOT"
NPS="2 4"
ROUNDS=5
OUT=docs/results/dropin_apps.md
while (($#)); do
  case "$1" in
    --np) NPS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "dropin_apps.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
ensure_packages quantum-espresso quantum-espresso-data
mpi_environment
LIB=$PWD/build/libcomm_mpi/libcomm_mpi.so
[[ -e $LIB ]] || { echo "dropin_apps.sh: $LIB missing; build the target libcomm_mpi" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp inputs/dropin/qe_si.in "$tmp/"
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
energy() { awk '/^!    total energy/ {print $5}' "$1"; }
wall() { awk '/PWSCF.*WALL/ {for (i = 1; i < NF; ++i) if ($(i + 1) == "WALL") {v = $i; sub("s$", "", v); print v}}' "$1" | tail -1; }
{
  echo "# Applications under the drop-in library"
  echo
  echo "\`scripts/reproduce/dropin_apps.sh --np \"$NPS\" --rounds $ROUNDS\`, $(date -u +%Y-%m-%d), $(nproc) cores (shared)."
  echo
  echo "| application | ranks | plain: energy (Ry) | preloaded: energy (Ry) | same | plain WALL s | preloaded WALL s | ratio | reached libcomm |"
  echo "|---|---:|---|---|---|---:|---:|---:|---|"
  for np in $NPS; do
    for ((r = 0; r < ROUNDS; ++r)); do
      for mode in plain preload; do
        envs=()
        [[ $mode == preload ]] && envs=(env "LD_PRELOAD=$LIB" LIBCOMM_VERBOSE=1)
        (cd "$tmp" && rm -rf qe_tmp && mpiexec -n "$np" "${envs[@]}" pw.x -in qe_si.in > "qe.$mode.$np.$r" 2>&1) ||
          { cat "$tmp/qe.$mode.$np.$r"; echo "dropin_apps.sh: pw.x ($mode, $np ranks) failed" >&2; exit 1; }
      done
    done
    e0=$(energy "$tmp/qe.plain.$np.0") e1=$(energy "$tmp/qe.preload.$np.0")
    same=no
    [[ -n $e0 && $e0 == "$e1" ]] && same=yes
    w0=$(for ((r = 0; r < ROUNDS; ++r)); do wall "$tmp/qe.plain.$np.$r"; done | median)
    w1=$(for ((r = 0; r < ROUNDS; ++r)); do wall "$tmp/qe.preload.$np.$r"; done | median)
    routes=$(grep -h "^libcomm_mpi:" "$tmp/qe.preload.$np.0" | sed 's/^libcomm_mpi: //; s/ (.*//' | sort -u | paste -sd';' -)
    echo "| Quantum ESPRESSO pw.x (Fortran), Si 2 atoms | $np | $e0 | $e1 | $same | $w0 | $w1 | $(awk -v a="$w0" -v b="$w1" 'BEGIN {printf "%.3f", b / a}') | ${routes:-none} |"
    [[ $same == yes && -n $routes ]] || { echo "dropin_apps.sh: QE at $np ranks: energies $e0 / $e1, routes '${routes}'" >&2; exit 1; }
  done
  echo
  echo "Energies: the first round of each mode. WALL: medians over $ROUNDS alternating rounds."
  echo "Log lines (LIBCOMM_VERBOSE=1, first preloaded run at the last rank count):"
  echo
  grep -h "^libcomm_mpi:" "$tmp/qe.preload.${NPS##* }.0" | sort -u | sed 's/^/    /'
} | tee "$OUT"
