#!/usr/bin/env bash
# Paper 003 on packets: how large a drop-tail FIFO a port needs before the uncoordinated
# algorithms behave as the paper measured them. At 64 KiB, LAM's routine (linear) on
# Fig. 5 (a) and MPICH's (pairwise) on (b) under `simulate.sh --network packet --queue Q`
# for every Q given; the paper's own figures for the two (Figs. 6 and 7) are 468.8 and
# 1374 ms. MPICH's routine on (a) (ring_sendrecv: 24 ranks) and tree_scheduled on both run
# too: on the single switch (a) the paper's MPICH lost to "a limited form of node
# contention" that only a small enough FIFO shows, and a host's card gets the same FIFO as
# a switch port, so a too small one makes a single flow drop its own packets. Every run is
# traced (its stages, stage_trace_report.py) and logs its TCP retransmissions
# (simulate.sh --tcp-log: ns-3's own log of the timeouts that fired and resent, counted per
# repetition by tcp_log.py). Records: docs/results/ethernet_packet/queue_sweep/
# fig5<t>_q<Q>_<algo>.json, .trace.json (the first repetition's busiest link) and .tcp.json;
# ethernet_report.py puts them in ethernet_packet.md.
#   scripts/reproduce/ethernet_queue_sweep.sh [--reps N] [Q...]   (default: 3 repetitions;
#                                                                  32 64 128 256)
# A record already there is kept (delete it to run it again).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
BUILD="${BUILD_SG_DIR:-build-sg}"
[[ -x "$BUILD/apps/commbench/commbench" ]] || build_simgrid_target "$BUILD" commbench
REPS=3
if [[ "${1:-}" == --reps ]]; then
  REPS=$2
  shift 2
fi
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "ethernet_queue_sweep.sh: --reps must be a positive integer" >&2; exit 2; }
QUEUES=("$@")
((${#QUEUES[@]})) || QUEUES=(32 64 128 256)
OUT=docs/results/ethernet_packet/queue_sweep
mkdir -p "$OUT"
for q in "${QUEUES[@]}"; do
  for run in fig5a:linear fig5b:pairwise fig5b:tree_scheduled fig5a:ring_sendrecv fig5a:tree_scheduled; do
    t=${run%%:*} a=${run#*:}
    name="${t}_q${q}_$a"
    [[ -s "$OUT/$name.json" ]] && { echo "== $name: kept"; continue; }
    echo "== $t $a, queues of $q packets"
    trace=$(mktemp -d /tmp/libcomm-sweep.XXXXXX)
    tcp=$(mktemp /tmp/libcomm-sweep-tcp.XXXXXX)
    topo=()
    [[ "$a" == tree_scheduled ]] && topo=(--topology "inputs/topologies/$t.topo")
    LIBCOMM_TRACE_STAGES="$trace" SIM_BUILD_DIR="$BUILD" SIM_REBUILD=0 scripts/simulate.sh --network packet \
      --queue "$q" --tcp-log "$tcp" --platform "inputs/platforms/ethernet_$t.xml" \
      --hostfile "inputs/platforms/ethernet_$t.hosts" \
      commbench "${topo[@]}" --sizes 64K --reps "$REPS" --warmup 0 --algo "$a" --skip-native \
      --json "$OUT/$name.json" | grep -E "^alltoall|^validation"
    python3 scripts/reproduce/stage_trace_report.py "$trace" "inputs/topologies/$t.topo" 100 \
      --json "$OUT/$name.trace.json" >/dev/null
    python3 scripts/tcp_log.py count "$tcp" --trace "$trace" --json "$OUT/$name.tcp.json"
    rm -rf "$trace" "$tcp"
  done
done
