#!/bin/sh
# Stands in for fault_victim in fault.sh's self-tests: every rank writes its pid file; the
# ranks other than 1 then print the lines fault.sh looks for after a stopped peer (the
# timeout error naming rank 1, "ending the job") and end as END says: exit 2 (the control,
# which passes), exit 1 or crash (SIGSEGV), both of which fault.sh must fail.
#   fake_victim.sh END ALGO DIR      (run by fault.sh under mpiexec, LIBCOMM_TIMEOUT set)
end=$1 dir=$3
rank=${OMPI_COMM_WORLD_RANK:?run under the mpiexec of Open MPI}
echo $$ > "$dir/rank.$rank.pid"
if [ "$rank" -eq 1 ]; then
  while :; do sleep 1; done
fi
echo "fault_victim: error: fake: rank $rank: no message completed for $LIBCOMM_TIMEOUT s (LIBCOMM_TIMEOUT) in stage 0 of 1: waiting for rank 1 (messages from 1)" >&2
echo "fault_victim: ending the job: the other ranks did not stop within LIBCOMM_TIMEOUT ($LIBCOMM_TIMEOUT s)" >&2
sleep 2  # every rank has printed before the first one ends (and mpiexec ends the rest)
case "$end" in
  exit2) exit 2 ;;
  exit1) exit 1 ;;
  crash) kill -SEGV $$ ;;
esac
exit 0
