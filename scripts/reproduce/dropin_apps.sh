#!/usr/bin/env bash
# Unmodified applications from Debian with and without the drop-in library (libcomm_mpi.so
# in LD_PRELOAD); the runs alternate ROUNDS times between plain MPI, preloaded with the
# defaults (auto's online policy: native for the first 16 calls of a size class, then the
# candidates timed and the fastest kept) and preloaded with LIBCOMM_NODES=flat
# LIBCOMM_AUTO=model (every rank a node, the cost model's choice: libcomm's algorithms) at
# each rank count; LIBCOMM_VERBOSE=1 must show the calls reaching libcomm, and the results
# must be the same all three ways:
#  - Quantum ESPRESSO (Fortran; pw.x, the 2-atom silicon SCF of inputs/dropin/qe_si.in with
#    Debian's Si.pz-vbc.UPF): the same total energy; time: pw.x's WALL;
#  - LAMMPS (C++; Debian's peptide example, PPPM with `kspace_modify collective yes`, so
#    its FFTs transpose with MPI_Alltoallv): the same energies at the last step; time: the
#    loop time;
#  - HPC Challenge (C; hpcc with inputs/dropin/hpccinf.txt): Success=1, no RandomAccess
#    errors and the MPIFFT error below 1e-12 both ways; rate: MPIFFT Gflop/s (higher is
#    better, so the ratio is plain / preloaded, like the times' preloaded / plain); and, at
#    the first rank count, hpcc's large MPI_Alltoall calls one by one (those of MPIFFT: the
#    forward transform that its Gflop/s times, then the inverse), all three ways, timed by
#    tests/dropin/alltoall_call_timer.c preloaded ahead of the library or alone.
# Medians over rounds.
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
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "dropin_apps.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
ensure_packages quantum-espresso quantum-espresso-data lammps lammps-examples hpcc
mpi_environment
LIB=$PWD/build/libcomm_mpi/libcomm_mpi.so
TIMER=$PWD/build/tests/dropin/liballtoall_call_timer.so
for f in "$LIB" "$TIMER"; do
  [[ -e $f ]] || { echo "dropin_apps.sh: $f missing; build the targets libcomm_mpi alltoall_call_timer" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp inputs/dropin/qe_si.in inputs/dropin/hpccinf.txt "$tmp/"
cp /usr/share/lammps/examples/peptide/data.peptide "$tmp/"
sed 's/^kspace_style\(.*\)$/kspace_style\1\nkspace_modify collective yes/' \
  /usr/share/lammps/examples/peptide/in.peptide > "$tmp/in.peptide"
grep -q "kspace_modify collective yes" "$tmp/in.peptide" ||
  { echo "dropin_apps.sh: could not add kspace_modify to the peptide input" >&2; exit 1; }
# The environment of a run in MODE, as env's arguments in the array `envs`: plain MPI,
# preload (the library at its defaults) or flat (LIBCOMM_NODES=flat LIBCOMM_AUTO=model:
# libcomm's algorithms on one node); FIRST, when given, is preloaded ahead of the library;
# VERBOSE=1 adds LIBCOMM_VERBOSE=1 to the preloaded runs.
mode_env() {  # mode_env MODE FIRST VERBOSE
  local mode=$1 preload=$2
  envs=(env)
  if [[ $mode != plain ]]; then
    preload=${preload:+$preload:}$LIB
    [[ $3 == 1 ]] && envs+=(LIBCOMM_VERBOSE=1)
  fi
  [[ -n $preload ]] && envs+=("LD_PRELOAD=$preload")
  [[ $mode == flat ]] && envs+=(LIBCOMM_NODES=flat LIBCOMM_AUTO=model)
  return 0
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
energy() { awk '/^!    total energy/ {print $5}' "$1"; }
routes_of() { grep -h "^libcomm_mpi:" "$1" | sed 's/^libcomm_mpi: //; s/ (.*//' | sort -u | paste -sd';' -; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b / a}'; }
# pw.x's WALL as seconds (it writes 1m15.57s from a minute on)
wall() { awk '/PWSCF.*WALL/ {for (i = 1; i < NF; ++i) if ($(i + 1) == "WALL") {v = $i; sub("s$", "", v); m = 0; if (v ~ /m/) {split(v, a, "m"); m = a[1]; v = a[2]}; print m * 60 + v}}' "$1" | tail -1; }
{
  echo "# Applications under the drop-in library"
  echo
  echo "\`scripts/reproduce/dropin_apps.sh --np \"$NPS\" --rounds $ROUNDS\`, $(date -u +%Y-%m-%d), $(nproc) cores (shared; load average at the start: $(cut -d' ' -f1-3 /proc/loadavg))."
  echo
  echo "| application | ranks | plain: result | preloaded (both ways): result | same | plain: time s (hpcc: Gflop/s) | preloaded | ratio | flat | ratio | what ran (defaults / flat) |"
  echo "|---|---:|---|---|---|---:|---:|---:|---:|---:|---|"
  for np in $NPS; do
    for ((r = 0; r < ROUNDS; ++r)); do
      for mode in plain preload flat; do
        mode_env "$mode" "" 1
        (cd "$tmp" && rm -rf qe_tmp && mpiexec -n "$np" "${envs[@]}" pw.x -in qe_si.in > "qe.$mode.$np.$r" 2>&1) ||
          { cat "$tmp/qe.$mode.$np.$r"; echo "dropin_apps.sh: pw.x ($mode, $np ranks) failed" >&2; exit 1; }
      done
    done
    e0=$(energy "$tmp/qe.plain.$np.0") e1=$(energy "$tmp/qe.preload.$np.0") e2=$(energy "$tmp/qe.flat.$np.0")
    same=no
    [[ -n $e0 && $e0 == "$e1" && $e0 == "$e2" ]] && same=yes
    w0=$(for ((r = 0; r < ROUNDS; ++r)); do wall "$tmp/qe.plain.$np.$r"; done | median)
    w1=$(for ((r = 0; r < ROUNDS; ++r)); do wall "$tmp/qe.preload.$np.$r"; done | median)
    w2=$(for ((r = 0; r < ROUNDS; ++r)); do wall "$tmp/qe.flat.$np.$r"; done | median)
    routes=$(routes_of "$tmp/qe.preload.$np.0") froutes=$(routes_of "$tmp/qe.flat.$np.0")
    echo "| Quantum ESPRESSO pw.x (Fortran), Si 2 atoms | $np | $e0 Ry | $e1 Ry / $e2 Ry | $same | $w0 | $w1 | $(ratio "$w0" "$w1") | $w2 | $(ratio "$w0" "$w2") | ${routes:-none} / ${froutes:-none} |"
    [[ $same == yes && -n $routes && $froutes == *MPI_Alltoall* && $froutes != *pmpi* ]] ||
      { echo "dropin_apps.sh: QE at $np ranks: energies $e0 / $e1 / $e2, routes '${routes}' / '${froutes}'" >&2; exit 1; }
  done
  for np in $NPS; do  # LAMMPS and hpcc
    for ((r = 0; r < ROUNDS; ++r)); do
      for mode in plain preload flat; do
        mode_env "$mode" "" 1
        (cd "$tmp" && mpiexec -n "$np" "${envs[@]}" lmp -in in.peptide -log "lmp.$mode.$np.$r.log" \
          > "lmp.$mode.$np.$r" 2>&1) || { cat "$tmp/lmp.$mode.$np.$r"; echo "dropin_apps.sh: lmp failed" >&2; exit 1; }
        (cd "$tmp" && rm -f hpccoutf.txt && mpiexec -n "$np" "${envs[@]}" hpcc > "hpcc.$mode.$np.$r" 2>&1 &&
          mv hpccoutf.txt "hpccoutf.$mode.$np.$r") || { cat "$tmp/hpcc.$mode.$np.$r"; echo "dropin_apps.sh: hpcc failed" >&2; exit 1; }
      done
    done
    last_step() { grep -A3 "Step *[0-9]* -----" "$1" | tail -3; }
    same=no
    last_step "$tmp/lmp.plain.$np.0.log" > "$tmp/e0"
    last_step "$tmp/lmp.preload.$np.0.log" > "$tmp/e1"
    last_step "$tmp/lmp.flat.$np.0.log" > "$tmp/e2"
    [[ -s $tmp/e0 ]] && cmp -s "$tmp/e0" "$tmp/e1" && cmp -s "$tmp/e0" "$tmp/e2" && same=yes
    etot=$(awk '/TotEng/ {print $3}' "$tmp/e0")
    etot1=$(awk '/TotEng/ {print $3}' "$tmp/e1")
    etot2=$(awk '/TotEng/ {print $3}' "$tmp/e2")
    loop() { for ((r = 0; r < ROUNDS; ++r)); do awk '/^Loop time/ {print $4}' "$tmp/lmp.$1.$np.$r.log"; done | median; }
    l0=$(loop plain) l1=$(loop preload) l2=$(loop flat)
    routes=$(routes_of "$tmp/lmp.preload.$np.0") froutes=$(routes_of "$tmp/lmp.flat.$np.0")
    echo "| LAMMPS peptide, PPPM collective (C++) | $np | TotEng $etot | TotEng $etot1 / $etot2 | $same (last step, all terms) | $l0 | $l1 | $(ratio "$l0" "$l1") | $l2 | $(ratio "$l0" "$l2") | ${routes:-none} / ${froutes:-none} |"
    [[ $same == yes && $routes == *MPI_Alltoallv* && $froutes == *"MPI_Alltoallv on $np ranks:"* ]] ||
      { echo "dropin_apps.sh: LAMMPS at $np ranks: same=$same routes '$routes' / '$froutes'" >&2; exit 1; }
    ok=yes
    for mode in plain preload flat; do
      f="$tmp/hpccoutf.$mode.$np.0"
      grep -qx "Success=1" "$f" && grep -qx "MPIRandomAccess_ErrorsFraction=0" "$f" &&
        awk -F= '/^MPIFFT_maxErr=/ {exit !($2 < 1e-12)}' "$f" || ok=no
    done
    gflops() { for ((r = 0; r < ROUNDS; ++r)); do awk -F= '/^MPIFFT_Gflops=/ {print $2}' "$tmp/hpccoutf.$1.$np.$r"; done | median; }
    g0=$(gflops plain) g1=$(gflops preload) g2=$(gflops flat)
    routes=$(routes_of "$tmp/hpcc.preload.$np.0") froutes=$(routes_of "$tmp/hpcc.flat.$np.0")
    echo "| HPC Challenge hpcc (C): checks, MPIFFT Gflop/s | $np | passed | $( [[ $ok == yes ]] && echo passed || echo FAILED ) | $ok | $g0 | $g1 | $(ratio "$g1" "$g0") | $g2 | $(ratio "$g2" "$g0") | ${routes:-none} / ${froutes:-none} |"
    [[ $ok == yes && $routes == *MPI_Alltoall* && $froutes == *MPI_Alltoall* && $froutes != *pmpi* ]] ||
      { echo "dropin_apps.sh: hpcc at $np ranks: checks $ok, routes '$routes' / '$froutes'" >&2; exit 1; }
  done
  np=${NPS%% *}
  for ((r = 0; r < ROUNDS; ++r)); do
    for mode in plain preload flat; do
      mode_env "$mode" "$TIMER" 0
      (cd "$tmp" && rm -f hpccoutf.txt && mpiexec -n "$np" "${envs[@]}" hpcc > "trace.$mode.$r" 2>&1) ||
        { cat "$tmp/trace.$mode.$r"; echo "dropin_apps.sh: hpcc with the call timer failed" >&2; exit 1; }
    done
  done
  ncalls=$(grep -c "alltoall_call_timer: call" "$tmp/trace.plain.0")
  for mode in preload flat; do
    n=$(grep -c "alltoall_call_timer: call" "$tmp/trace.$mode.0")
    [[ $n == "$ncalls" ]] || { echo "dropin_apps.sh: the call timer saw $ncalls calls plain, $n $mode" >&2; exit 1; }
  done
  echo
  echo "hpcc at $np ranks, its MPI_Alltoall calls of 16 KiB blocks and more, one by one (alltoall_call_timer: the"
  echo "program's own calls, timed where it makes them; medians over $ROUNDS alternating rounds, us): plain, preloaded with"
  echo "the defaults, and preloaded with LIBCOMM_NODES=flat LIBCOMM_AUTO=model (libcomm's algorithm)."
  echo "MPIFFT's Gflop/s times one forward transform, its first three:"
  echo
  echo "| call | block bytes | plain us | preloaded us | ratio | flat us | ratio |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  for ((k = 1; k <= ncalls; ++k)); do
    col() { for ((r = 0; r < ROUNDS; ++r)); do grep "alltoall_call_timer: call" "$tmp/trace.$1.$r" | sed -n "${k}p" | awk '{print $(NF-1)}'; done | median; }
    bytes=$(grep "alltoall_call_timer: call" "$tmp/trace.plain.0" | sed -n "${k}p" | awk '{print $4}')
    t0=$(col plain) t1=$(col preload) t2=$(col flat)
    echo "| $k | $bytes | $t0 | $t1 | $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b / a}') | $t2 | $(awk -v a="$t0" -v b="$t2" 'BEGIN {printf "%.2f", b / a}') |"
  done
  echo
  echo "Results: the first round of each mode. Times and rates: medians over $ROUNDS alternating rounds;"
  echo "QE: pw.x WALL s; LAMMPS: loop time s; hpcc: MPIFFT Gflop/s (ratios plain / preloaded, so above 1 is"
  echo "always slower preloaded). preloaded: the defaults (online); flat: LIBCOMM_NODES=flat LIBCOMM_AUTO=model (libcomm's algorithms on one node)."
  echo "Log lines (LIBCOMM_VERBOSE=1, first preloaded runs at the last rank count; defaults, then flat):"
  echo
  for mode in preload flat; do
    grep -h "^libcomm_mpi:" "$tmp"/{qe,lmp,hpcc}."$mode"."${NPS##* }".0 | sort -u | sed 's/^/    /'
    echo
  done
} | tee "$OUT"
