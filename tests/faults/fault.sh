#!/bin/sh
# A rank that dies or stops in the middle of a collective: what ends the job, and what the
# surviving ranks say. Starts VICTIM (fault_victim) on NP ranks, waits until every rank has
# run its collective once (DIR/rank.N.pid), hits rank 1, and requires the job to end within
# LIMIT seconds (a hang fails):
#   kill  SIGKILL, default mpiexec: Open MPI's promise. mpiexec exits non-zero, saying
#         that rank 1 died of signal 9.
#   stop  SIGSTOP with LIBCOMM_TIMEOUT=T set: libcomm's promise (README, "Faults"). Every
#         other rank's wait gives up after T s without progress with the error
#         "fault_victim: error: ALGO: rank R: no message completed for T s (LIBCOMM_TIMEOUT)
#         ...", at least one of them naming rank 1 among the ranks it waits for; the
#         program (apps::mpi_main) then ends the job ("ending the job") and mpiexec exits 2.
#   dead  SIGKILL under mpiexec --enable-recovery with LIBCOMM_TIMEOUT=T: the runtime keeps
#         the job, as an MPI with fault tolerance would, so the survivors' messages to and
#         from rank 1 never complete: the same errors and end as for stop (mpiexec's exit
#         status is then Open MPI's own and not checked).
#   fault.sh MODE LIMIT NP MPIEXEC VICTIM OP ALGO [MPIEXEC_FLAGS...]
set -u
mode=$1 limit=$2 np=$3 mpiexec=$4 victim=$5 op=$6 algo=$7
shift 7
case "$mode" in
  kill) [ -z "${LIBCOMM_TIMEOUT:-}" ] || { echo "fault.sh: kill: LIBCOMM_TIMEOUT must be unset"; exit 2; } ;;
  stop|dead) [ -n "${LIBCOMM_TIMEOUT:-}" ] || { echo "fault.sh: $mode needs LIBCOMM_TIMEOUT"; exit 2; } ;;
  *) echo "fault.sh: unknown mode '$mode' (kill, stop, dead)"; exit 2 ;;
esac
recovery=""
[ "$mode" = dead ] && recovery="--enable-recovery"
dir=$(mktemp -d)
job=""
cleanup() {  # nothing of the job may outlive the test
  [ -n "$job" ] && kill -9 "$job" 2>/dev/null
  for f in "$dir"/rank.*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { cat "$dir/out"; echo "fault.sh: FAIL: $mode $op/$algo: $*"; exit 1; }
# shellcheck disable=SC2086  # $recovery: one word or none
"$mpiexec" "$@" $recovery -n "$np" "$victim" "$op" "$algo" "$dir" > "$dir/out" 2>&1 &
job=$!
waited=0
while [ "$(ls "$dir" | grep -c '^rank\..*\.pid$')" -lt "$np" ]; do
  kill -0 "$job" 2>/dev/null || fail "the job ended before every rank had run once"
  [ "$waited" -ge 600 ] && fail "the ranks did not start within 60 s"
  sleep 0.1
  waited=$((waited + 1))
done
victim_pid=$(cat "$dir/rank.1.pid")
if [ "$mode" = stop ]; then kill -STOP "$victim_pid"; else kill -9 "$victim_pid"; fi
start=$(date +%s.%N)
ticks=0
while kill -0 "$job" 2>/dev/null; do
  [ "$ticks" -ge $((limit * 10)) ] && fail "the job still ran $limit s after rank 1 was hit (a hang)"
  sleep 0.1
  ticks=$((ticks + 1))
done
wait "$job"
rc=$?
job=""
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
if [ "$mode" = kill ]; then
  [ "$rc" -ne 0 ] || fail "mpiexec exited 0 after a rank was killed"
  # Open MPI: "mpiexec noticed that process rank 1 with PID ... exited on signal 9 (Killed)"
  # (the PID it prints may be 0).
  grep -q "rank 1 .*signal 9" "$dir/out" || fail "mpiexec's message does not say that rank 1 was killed by signal 9"
else
  t=$LIBCOMM_TIMEOUT
  for r in $(seq 0 $((np - 1))); do
    [ "$r" -eq 1 ] && continue
    grep -Eq "^fault_victim: error: [a-z_]+: rank $r: no message completed for $t s \(LIBCOMM_TIMEOUT\) in " "$dir/out" ||
      fail "rank $r did not report the timeout"
  done
  grep -Eq "^fault_victim: error: [a-z_]+: rank [02-9][0-9]*: .*: waiting for rank ([0-9]+, )*1(, [0-9]+)* \(" "$dir/out" ||
    fail "no surviving rank names rank 1 among the ranks it waits for"
  grep -q "^fault_victim: ending the job: the other ranks did not stop within LIBCOMM_TIMEOUT ($t s)$" "$dir/out" ||
    fail "no rank ended the job"
  if [ "$mode" = stop ]; then [ "$rc" -eq 2 ] || fail "mpiexec exited with $rc, want 2 (the ranks' error status)"; fi
fi
cat "$dir/out"
echo "fault.sh: PASS: $mode $op/$algo on $np ranks: rank 1 (pid $victim_pid) hit, the job ended with status $rc after $elapsed s"
