#!/bin/sh
# A rank killed (SIGKILL) in the middle of a collective must end the job with a clear
# message from mpiexec within seconds, not hang: starts fault_victim on NP ranks, waits
# until every rank has run its collective once, kills rank 1, and requires mpiexec to exit
# non-zero within LIMIT seconds, saying which rank died of which signal.
#   kill_rank.sh LIMIT NP MPIEXEC VICTIM OP ALGO [MPIEXEC_FLAGS...]
set -u
limit=$1 np=$2 mpiexec=$3 victim=$4 op=$5 algo=$6
shift 6
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$mpiexec" "$@" -n "$np" "$victim" "$op" "$algo" "$dir" > "$dir/out" 2>&1 &
job=$!
waited=0
while [ "$(ls "$dir" | grep -c '^rank\..*\.pid$')" -lt "$np" ]; do
  if ! kill -0 "$job" 2>/dev/null; then
    cat "$dir/out"; echo "kill_rank.sh: the job ended before every rank had run once"; exit 1
  fi
  [ "$waited" -ge 600 ] && { kill -9 "$job"; echo "kill_rank.sh: the ranks did not start within 60 s"; exit 1; }
  sleep 0.1
  waited=$((waited + 1))
done
victim_pid=$(cat "$dir/rank.1.pid")
start=$(date +%s.%N)
kill -9 "$victim_pid"
ticks=0
while kill -0 "$job" 2>/dev/null; do
  if [ "$ticks" -ge $((limit * 10)) ]; then
    kill -9 "$job" 2>/dev/null
    pkill -9 -f "$victim $op $algo $dir" 2>/dev/null
    cat "$dir/out"
    echo "kill_rank.sh: FAIL: $op/$algo: the job still ran $limit s after rank 1 was killed (a hang)"
    exit 1
  fi
  sleep 0.1
  ticks=$((ticks + 1))
done
wait "$job"
rc=$?
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
cat "$dir/out"
[ "$rc" -ne 0 ] || { echo "kill_rank.sh: FAIL: mpiexec exited 0 after a rank was killed"; exit 1; }
# Open MPI: "mpiexec noticed that process rank 1 with PID ... exited on signal 9 (Killed)"
# (the PID it prints may be 0).
grep -q "rank 1 .*signal 9" "$dir/out" ||
  { echo "kill_rank.sh: FAIL: mpiexec's message does not say that rank 1 was killed by signal 9"; exit 1; }
echo "kill_rank.sh: PASS: $op/$algo on $np ranks: rank 1 (pid $victim_pid) killed, mpiexec exited with $rc after $elapsed s"
