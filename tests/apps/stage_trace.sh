#!/bin/sh
# LIBCOMM_TRACE_STAGES: every rank writes one line per stage of each run of a step
# program, and stage_trace_report.py splits a run's time on the busiest link.
#   stage_trace.sh MPIEXEC COMMBENCH SOURCE_DIR
set -eu
mpiexec=$1 commbench=$2 src=$3
dir=$(mktemp -d /tmp/libcomm-stage-trace.XXXXXX)
trap 'rm -rf "$dir"' EXIT
LIBCOMM_TRACE_STAGES=$dir "$mpiexec" -n 3 "$commbench" --algo pairwise --sizes 1K --reps 2 \
  --warmup 0 --skip-native >"$dir/out.txt" 2>&1 || { cat "$dir/out.txt"; exit 1; }
for r in 0 1 2; do
  f=$dir/stages.$r.txt
  [ -s "$f" ] || { echo "stage_trace.sh: FAIL: no $f"; exit 1; }
  # pairwise on 3 ranks runs as ring_sendrecv: 2 runs x 3 stages (the own block's copy,
  # then 2 exchanges of a 1024-byte send and receive), each posted no later than done.
  awk -v r="$r" '
    { n++; if ($1 != "ring_sendrecv" || $4 > $5) bad = bad " line " NR ": " $0 }
    / s[0-9]+:1024/ && / r[0-9]+:1024/ { ok++ }
    END { if (bad != "" || n != 6 || ok != 4) { print "stage_trace.sh: FAIL: rank " r ": " n " lines, " ok " exchanges;" bad; exit 1 } }' "$f"
done
python3 "$src/scripts/reproduce/stage_trace_report.py" "$dir" "$src/inputs/topologies/star3.topo" 100 \
  --run 1 >"$dir/report.txt"
grep -q "^ring_sendrecv, run 1: .* ms from the first stage posted to the last done" "$dir/report.txt" &&
  grep -q "^busiest link .*: 2 messages, 2048 bytes" "$dir/report.txt" ||
  { cat "$dir/report.txt"; echo "stage_trace.sh: FAIL: report"; exit 1; }
echo "stage_trace.sh: PASS"
