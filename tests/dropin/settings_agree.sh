#!/usr/bin/env bash
# Ranks whose settings differ (README, "Settings every rank must share"): MPMD launches in
# which one rank of four has other LIBCOMM_* variables, another tuning table or another
# cost model than the rest. Under the drop-in every case must end on every rank, give MPI's
# result, run the MPI library's collectives and say so in one warning that names the
# setting and rank 3; a program on libcomm itself (commbench) must stop on every rank with
# the same error. A control run with the same settings everywhere must run libcomm's
# algorithm (LIBCOMM_ALLTOALL if the environment names one, else bruck; never native).
#   settings_agree.sh MPIEXEC PROGRAM LIBCOMM_MPI_SO COMMBENCH
set -u
mpiexec=$1 program=$2 lib=$3 commbench=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "settings_agree.sh: FAIL: $*"; failures=$((failures + 1)); }

# run NAME [mpiexec arguments...]: the launch, bounded (a hang fails, it does not stall ctest);
# its output goes to $tmp/NAME.log and its duration is printed.
run() {
  local name=$1
  shift
  local start=$SECONDS
  timeout 120 "$mpiexec" "$@" >"$tmp/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc after $((SECONDS - start)) s"
  ((rc == 124)) && fail "$name: still running after 120 s (a hang)"
  return $rc
}

# mismatch NAME SETTING_REGEX [rank 3's env...] -- [the other ranks' env...]
mismatch() {
  local name=$1 setting=$2 rank3=() others=()
  shift 2
  while (($#)) && [[ $1 != -- ]]; do rank3+=("$1"); shift; done
  shift
  others=("$@")
  run "$name" -n 3 env LD_PRELOAD="$lib" "${others[@]}" "$program" : \
      -n 1 env LD_PRELOAD="$lib" "${rank3[@]}" "$program" || fail "$name: exit status (MPI's result expected)"
  local log="$tmp/$name.log"
  grep -q '^settings_agree: PASS$' "$log" || fail "$name: no PASS"
  grep -q '^settings_agree: world: MPI_Alltoall ran pmpi$' "$log" || fail "$name: MPI_Alltoall on MPI_COMM_WORLD did not run in the MPI library"
  grep -q '^settings_agree: dup: MPI_Alltoall ran pmpi$' "$log" || fail "$name: MPI_Alltoall on a duplicate did not run in the MPI library"
  local warnings
  warnings=$(grep -c '^libcomm_mpi: warning: settings differ' "$log")
  ((warnings == 1)) || fail "$name: $warnings warnings, expected exactly one"
  grep -Eq "^libcomm_mpi: warning: settings differ between the ranks of a communicator of 4 ranks: $setting .* on rank 0 but .* on rank 3 " "$log" ||
    fail "$name: the warning does not name $setting and rank 3"
  grep -q 'MPI_ERR' "$log" && fail "$name: an MPI error"
  ((failures)) && sed 's/^/    /' "$log"
}

mismatch auto_model LIBCOMM_AUTO LIBCOMM_AUTO=model LIBCOMM_NODES=flat --
mismatch algorithms LIBCOMM_ALLTOALL LIBCOMM_ALLTOALL=bruck -- LIBCOMM_ALLTOALL=pairwise
mismatch online_after LIBCOMM_ONLINE_AFTER LIBCOMM_ONLINE_AFTER=0 --
# (libcomm's own agreements are non-blocking collectives with a timeout, blocking without)
mismatch timeout LIBCOMM_TIMEOUT LIBCOMM_TIMEOUT=30 --
# The same variable on every rank, another file behind it (a file present on one node
# only, or different there): relative paths from two working directories.
mkdir -p "$tmp/a" "$tmp/b"
printf 'alltoall 4 1 0 inf bruck\n' >"$tmp/a/t.tune"
printf 'alltoall 4 1 0 inf ring\n' >"$tmp/b/t.tune"
printf 'ts_us = 3\n' >"$tmp/a/m.model"
run table_differs -n 3 -wdir "$tmp/a" env LD_PRELOAD="$lib" LIBCOMM_AUTO=table LIBCOMM_TUNING=t.tune "$program" : \
    -n 1 -wdir "$tmp/b" env LD_PRELOAD="$lib" LIBCOMM_AUTO=table LIBCOMM_TUNING=t.tune "$program" ||
  fail "table_differs: exit status"
grep -Eq "^libcomm_mpi: warning: settings differ .*: the tuning table is 't.tune' .* on rank 0 but 't.tune' .* on rank 3 " \
  "$tmp/table_differs.log" || { fail "table_differs: the warning does not name the tuning table and rank 3"; cat "$tmp/table_differs.log"; }
grep -q '^settings_agree: world: MPI_Alltoall ran pmpi$' "$tmp/table_differs.log" || fail "table_differs: libcomm ran"
run model_missing -n 3 -wdir "$tmp/a" env LD_PRELOAD="$lib" LIBCOMM_AUTO=model LIBCOMM_MODEL=m.model "$program" : \
    -n 1 -wdir "$tmp/b" env LD_PRELOAD="$lib" LIBCOMM_AUTO=model LIBCOMM_MODEL=m.model "$program" ||
  fail "model_missing: exit status"
grep -Eq "^libcomm_mpi: warning: settings differ .*: the cost model file is 'm.model' .* on rank 0 but 'm.model' \(cannot be read.* on rank 3 " \
  "$tmp/model_missing.log" || { fail "model_missing: the warning does not name the cost model file and rank 3"; cat "$tmp/model_missing.log"; }

# Control: the same settings everywhere run libcomm's algorithm, without a warning.
want=${LIBCOMM_ALLTOALL:-bruck}
run control -n 4 env LD_PRELOAD="$lib" LIBCOMM_ALLTOALL="$want" "$program" || fail "control: exit status"
grep -q '^settings_agree: PASS$' "$tmp/control.log" || fail "control: no PASS"
if [[ $want == native || $want == pmpi ]]; then
  fail "control: LIBCOMM_ALLTOALL=$want: libcomm must run one of its own algorithms here"
fi
grep -q "^settings_agree: world: MPI_Alltoall ran $want\$" "$tmp/control.log" || { fail "control: $want did not run"; cat "$tmp/control.log"; }
grep -q 'settings differ' "$tmp/control.log" && fail "control: a warning where the settings agree"

# A program on libcomm itself: the same error on every rank, exit status non-zero.
run commbench -n 1 env LIBCOMM_ALLTOALL=bruck "$commbench" --sizes 64 --reps 1 --warmup 0 : \
    -n 1 "$commbench" --sizes 64 --reps 1 --warmup 0 && fail "commbench: exit status 0 where the settings differ"
errors=$(grep -c '^commbench: error: settings differ between the ranks of a communicator of 2 ranks: LIBCOMM_ALLTOALL is '"'"'bruck'"'"' on rank 0 but (unset) on rank 1 ' "$tmp/commbench.log")
((errors == 2)) || { fail "commbench: $errors ranks reported the difference, expected 2"; cat "$tmp/commbench.log"; }

if ((failures)); then
  echo "settings_agree.sh: FAIL ($failures)"
  exit 1
fi
echo "settings_agree.sh: PASS"
