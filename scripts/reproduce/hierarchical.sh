#!/usr/bin/env bash
# Reproduces the hierarchical all-to-all experiments under SimGrid (see
# docs/results/hierarchical.md for the discussion):
#   - paper 002, Figs. 7-9: flat (the paper's "orig", MVAPICH-PSM's size-based choice:
#     libcomm's bruck up to 256 B, linear beyond) vs leader vs send_aggregate vs
#     recv_distribute (and auto) on 64 nodes x 8 cores, 1 B to 8 KiB;
#   - paper 000, section 4: clustered_factor (and its section 4 fill, and both with one
#     matching per step) vs the trivial algorithm, ring (MPICH 1.2.5's order) and linear
#     (the order 0, 1, ...), on a 6 x 4 Giganet-like cluster, for the node layouts of
#     inputs/nodes/.
#   scripts/reproduce/hierarchical.sh [--quick] [--out DIR]
#     --quick   fewer sizes (a smoke run of a few minutes)
#     --np N    ranks of the 64 x 8 experiment (default 128: the first 16 nodes; 512 is
#               the paper's full system but SimGrid needs hours for the flat algorithms
#               there on this machine: 261,632 concurrent flows per call)
#     --out D   where the JSON records go (default results/hierarchical)
#     --network packet   instead, both experiments on Ethernet with ns-3's TCP
#               (scripts/simulate.sh --network packet): every node a switch of its own with
#               one host per core (topo2platform.py --cores), 100 Mbit/s network links;
#               paper 000 on 6 x 4 (memory links 300 Mbit/s: the paper's 300:105 MB/s),
#               paper 002 on 4 x 4 and 8 x 4 (memory links 1 Gbit/s); each algorithm in a
#               simulation of its own, 3 repetitions. Writes docs/results/hierarchical_packet.md
#               and its records in docs/results/hierarchical_packet/ (--quick: --out only).
#     --only 000|002   one paper's experiments (default both)
#     --resume  packet: keep the records of a stopped run (an algorithm whose record exists
#               is not run again)
# P000_ALGOS=a,b,... (packet) runs only those of paper 000's algorithms (default linear,
# ring, clustered_factor, clustered_factor_fill, clustered_factor_one_matching, native);
# X_one_matching is algorithm X run with --clustered-steps one-matching (one exchange
# between nodes per node at a time, in step order: the paper's single-ported execution),
# its record named so. `ring` is MPICH 1.2.5's MPI_Alltoall (every receive and send posted at
# once, rank i sending to i+1, i+2, ...), `linear` the same in the order 0, 1, ....
# P002_ALGOS=a,b,... (packet) the same for paper 002's (default auto, linear, pairwise,
# bruck, leader, send_aggregate, recv_distribute; auto by the cost model, LIBCOMM_AUTO=model).
#     --report-only    rewrite the page (hierarchical_tables.md, or with --network packet
#               hierarchical_packet.md) and its plots from the committed records alone
# Paper 000's runs trace their stages (LIBCOMM_TRACE_STAGES): every record
# X_<algo>.json of a traced algorithm gets X_<algo>.trace.json (fluid: one per layout,
# uneven_<layout>.trace.json), where each node's processes spent the first repetition of
# each size (scripts/reproduce/hierarchical_traces.py). The fluid run also replays those
# step programs on single-ported nodes, the paper's machine model, which neither SimGrid
# model has (hierarchical_single_port.py): uneven_<layout>.single_port.json. The clustered
# factor with one matching per step runs (and is traced and replayed) on its own:
# uneven_<layout>.one_matching.json, .one_matching.trace.json, .one_matching.single_port.json.
# A full run writes docs/results/hierarchical_tables.md, its PNG plots and a copy of the
# JSON records in docs/results/hierarchical/; --quick writes its tables into --out only.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
source "$ROOT/scripts/lib.sh"
QUICK=0
NETWORK=fluid
MC_NP=128
ONLY=""
REPORT_ONLY=0
RESUME=0
OUT="$ROOT/results/hierarchical"
while (($#)); do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --out) OUT="$2"; shift 2 ;;
    --np) MC_NP="$2"; shift 2 ;;
    --network) NETWORK="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --report-only) REPORT_ONLY=1; shift ;;
    --resume) RESUME=1; shift ;;
    -h|--help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "hierarchical.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$NETWORK" == fluid || "$NETWORK" == packet ]] ||
  { echo "hierarchical.sh: --network must be fluid or packet" >&2; exit 2; }
[[ -z "$ONLY" || "$ONLY" == 000 || "$ONLY" == 002 ]] ||
  { echo "hierarchical.sh: --only must be 000 or 002" >&2; exit 2; }
DOCS="$ROOT/docs/results"
if ((REPORT_ONLY)); then
  if [[ "$NETWORK" == packet ]]; then
    "$(plot_python)" "$ROOT/scripts/reproduce/hierarchical_report.py" --network packet \
      "$DOCS/hierarchical_packet" "$DOCS/hierarchical_packet.md"
  else
    "$(plot_python)" "$ROOT/scripts/reproduce/hierarchical_report.py" "$DOCS/hierarchical" \
      "$DOCS/hierarchical_tables.md" >/dev/null
  fi
  exit 0
fi
# The plots are drawn where python3-matplotlib is there (it is not installed for them: the
# pages link them either way and are the same without it).
SIM="$ROOT/scripts/simulate.sh"
"$SIM" -np 1 commbench --sizes 8 --reps 1 --algo native >/dev/null  # builds build-sim once
export SIM_REBUILD=0

if [[ "$NETWORK" == packet ]]; then
  [[ "$OUT" == "$ROOT/results/hierarchical" ]] && OUT="$ROOT/results/hierarchical_packet"
  mkdir -p "$OUT"
  PLAT="$OUT/platforms"
  mkdir -p "$PLAT"
  # packet_run NAME PLATFORM HOSTFILE NODES SIZES ALGOS: one simulation per algorithm.
  # packet_run NAME PLATFORM HOSTFILE NODES SIZES ALGOS [TRACED]: with TRACED, the
  # stages of those algorithms (a comma list) are traced and summarised.
  packet_run() {
    local name="$1" plat="$2" hosts="$3" nodes="$4" sizes="$5" algos="$6" traced="${7:-}" a start trace
    for a in ${algos//,/ }; do
      start=$SECONDS
      trace=""
      [[ ",$traced," == *",$a,"* ]] && trace="$OUT/traces/${name}_$a"
      if ((RESUME)) && [[ -s "$OUT/${name}_$a.json" && ( -z "$trace" || -d "$trace" ) ]]; then
        echo "== $name $a: kept (--resume)"
      else
        [[ -n "$trace" ]] && rm -rf "$trace" && mkdir -p "$trace"
        local run=("$a") # X_one_matching: X with one matching per step
        [[ "$a" == *_one_matching ]] && run=("${a%_one_matching}" --clustered-steps one-matching)
        # auto by the cost model: online's warm-up (a few hundred calls) opens more TCP
        # connections than the ns-3 binding's 65535 ports (simulate.sh says so and stops).
        LIBCOMM_AUTO=model LIBCOMM_TRACE_STAGES="$trace" "$SIM" --network packet --platform "$plat" --hostfile "$hosts" \
          commbench --nodes "$nodes" --sizes "$sizes" --reps 3 --warmup 0 --algo "${run[@]}" --skip-native \
          --json "$OUT/${name}_$a.json" >"$OUT/${name}_$a.log" 2>&1 ||
          { tail -5 "$OUT/${name}_$a.log"; echo "== $name $a FAILED"; exit 1; }
      fi
      if [[ -n "$trace" ]]; then
        local replay=()
        [[ "$a" == clustered_factor* && "$a" != clustered_factor_fill && -s "$OUT/p2p_inter.json" ]] &&
          replay=(--single-port "$OUT/${name}_$a.single_port.json"
            --calibration "packet:$OUT/p2p_inter.json:$OUT/p2p_intra.json")
        python3 "$ROOT/scripts/reproduce/hierarchical_traces.py" "$trace" "$OUT/${name}_$a.json" \
          "$OUT/${name}_$a.trace.json" --nodes "$nodes" --rate 100 "${replay[@]}"
      fi
      echo "== $name $a: $(grep -E '^validation' "$OUT/${name}_$a.log" | cut -c1-16), $((SECONDS - start)) s"
    done
  }
  if ((QUICK)); then
    UN_SIZES=64K LAYOUTS="organ_pipe_18" MC_SIZES=512 MC_SHAPES="4x4"
  else
    UN_SIZES=1K,4K,16K,64K,256K MC_SIZES=1,8,64,256,512,2K,8K MC_SHAPES="4x4 8x4"
    LAYOUTS="regular_24 organ_pipe_18 alternating_15 random_seed1_15 random_seed2_11 random_seed3_13"
  fi
  [[ "$ONLY" == 002 ]] && LAYOUTS=""
  [[ "$ONLY" == 000 ]] && MC_SHAPES=""
  if [[ -n "$LAYOUTS" ]]; then
    # One exchange alone between two nodes and inside one (the replay's "schedule alone").
    python3 "$ROOT/scripts/reproduce/topo2platform.py" "$ROOT/inputs/topologies/star6.topo" \
      "$PLAT/p2p.xml" --hostfile "$PLAT/p2p.hosts" --cores 4 --memory-bandwidth 300Mbps
    printf 'n0-c0\nn1-c0\n' >"$PLAT/p2p_inter.hosts"
    printf 'n0-c0\nn0-c1\n' >"$PLAT/p2p_intra.hosts"
    for where in inter intra; do
      ((RESUME)) && [[ -s "$OUT/p2p_$where.json" ]] && continue
      rm -rf "$OUT/traces/p2p_$where" && mkdir -p "$OUT/traces/p2p_$where"
      LIBCOMM_TRACE_STAGES="$OUT/traces/p2p_$where" "$SIM" --network packet --platform "$PLAT/p2p.xml" \
        --hostfile "$PLAT/p2p_$where.hosts" commbench --sizes "$UN_SIZES" --reps 1 --warmup 0 \
        --algo ring_sendrecv --skip-native --json "$OUT/p2p_$where.run.json" >/dev/null
      python3 "$ROOT/scripts/reproduce/hierarchical_traces.py" "$OUT/traces/p2p_$where" \
        "$OUT/p2p_$where.run.json" "$OUT/p2p_$where.json" --exchange-times
    done
  fi
  for layout in $LAYOUTS; do
    nodes="$ROOT/inputs/nodes/$layout.nodes"
    python3 "$ROOT/scripts/reproduce/topo2platform.py" "$ROOT/inputs/topologies/star6.topo" \
      "$PLAT/p000_$layout.xml" --hostfile "$PLAT/p000_$layout.hosts" --cores 4 \
      --memory-bandwidth 300Mbps --layout "$nodes"
    packet_run "p000_$layout" "$PLAT/p000_$layout.xml" "$PLAT/p000_$layout.hosts" "file:$nodes" \
      "$UN_SIZES" "${P000_ALGOS:-linear,ring,clustered_factor,clustered_factor_fill,clustered_factor_one_matching,native}" \
      linear,ring,clustered_factor,clustered_factor_fill,clustered_factor_one_matching
  done
  for shape in $MC_SHAPES; do
    n=${shape%x*} k=${shape#*x}
    python3 "$ROOT/scripts/reproduce/topo2platform.py" "$ROOT/inputs/topologies/star$n.topo" \
      "$PLAT/p002_$shape.xml" --hostfile "$PLAT/p002_$shape.hosts" --cores "$k"
    packet_run "p002_$shape" "$PLAT/p002_$shape.xml" "$PLAT/p002_$shape.hosts" "ppn=$k" "$MC_SIZES" \
      "${P002_ALGOS:-auto,linear,pairwise,bruck,leader,send_aggregate,recv_distribute}"
  done
  if ((QUICK)); then
    SOURCE="$OUT" PAGE="$OUT/hierarchical_packet.md"
  else
    mkdir -p "$DOCS/hierarchical_packet"
    cp "$OUT"/*.json "$DOCS/hierarchical_packet/"
    SOURCE="$DOCS/hierarchical_packet" PAGE="$DOCS/hierarchical_packet.md"
  fi
  "$(plot_python)" "$ROOT/scripts/reproduce/hierarchical_report.py" --network packet "$SOURCE" "$PAGE"
  cat "$PAGE"
  exit 0
fi
mkdir -p "$OUT"

if ((QUICK)); then
  MC_SIZES=512
  UN_SIZES=4K,64K
  LAYOUTS="regular_24 alternating_15"
else
  MC_SIZES=1,8,64,256,512,2K,8K
  UN_SIZES=1K,4K,16K,64K,256K
  LAYOUTS="regular_24 organ_pipe_18 alternating_15 random_seed1_15 random_seed2_11 random_seed3_13"
fi

# SimGrid 3.32's default MPI_Allgather costs the simulator O(P^2) per rank (minutes a call
# at 512 ranks); commbench calls it only to set up, so the ring one changes no timed row.
MC_SIM=("$SIM" --cfg smpi/allgather:ring)
if [[ "$ONLY" != 000 ]]; then
  echo "== paper 002: $MC_NP ranks of 64 x 8, validated at small sizes with real buffers"
  "${MC_SIM[@]}" --platform cluster64x8 --ppn 8 -np "$MC_NP" commbench --sizes 1,64 --reps 1 \
    --algo auto,leader,send_aggregate,recv_distribute | grep -E "^commbench|^validation"
  echo "== paper 002: $MC_NP ranks of 64 x 8, sizes $MC_SIZES (simulated payload)"
  "${MC_SIM[@]}" --platform cluster64x8 --ppn 8 -np "$MC_NP" commbench --sizes "$MC_SIZES" --reps 1 \
    --simulated-payload --algo auto,leader,send_aggregate,recv_distribute \
    --json "$OUT/multicore_64x8_np$MC_NP.json" | grep -E "^commbench|^alltoall"
  # The paper's flat baseline, "orig" (MVAPICH-PSM's size-based choice: Bruck up to 256 B,
  # Isend/Irecv up to 32 KiB, pairwise beyond), from libcomm's bruck and linear: libcomm's
  # auto may pick a hierarchical scheme itself, so it is no flat reference.
  echo "== paper 002: $MC_NP ranks of 64 x 8, the paper's flat orig (bruck, linear)"
  "${MC_SIM[@]}" --platform cluster64x8 --ppn 8 -np "$MC_NP" commbench --sizes "$MC_SIZES" --reps 1 \
    --simulated-payload --algo bruck,linear --skip-native \
    --json "$OUT/multicore_64x8_np$MC_NP.orig.json" | grep -E "^commbench|^alltoall"
fi

[[ "$ONLY" == 002 ]] && LAYOUTS=""
if [[ -n "$LAYOUTS" ]]; then
  # One exchange alone between two nodes and inside one: what each step of the clustered
  # factor costs on this platform when nothing else runs (the replay's "schedule alone").
  for where in inter:1,1 intra:2; do
    w=${where%%:*}
    rm -rf "$OUT/traces/p2p_$w" && mkdir -p "$OUT/traces/p2p_$w"
    LIBCOMM_TRACE_STAGES="$OUT/traces/p2p_$w" "$SIM" --platform giganet6x4 --layout "sizes=${where#*:}" \
      commbench --sizes "$UN_SIZES" --reps 1 --warmup 0 --algo ring_sendrecv --skip-native \
      --json "$OUT/p2p_$w.run.json" >/dev/null
    python3 "$ROOT/scripts/reproduce/hierarchical_traces.py" "$OUT/traces/p2p_$w" "$OUT/p2p_$w.run.json" \
      "$OUT/p2p_$w.json" --exchange-times
  done
fi
for layout in $LAYOUTS; do
  echo "== paper 000: 6 x 4, layout $layout"
  nodes="$ROOT/inputs/nodes/$layout.nodes"
  trace="$OUT/traces/uneven_$layout"
  rm -rf "$trace" && mkdir -p "$trace"
  LIBCOMM_TRACE_STAGES="$trace" "$SIM" --platform giganet6x4 --layout "$nodes" commbench \
    --sizes "$UN_SIZES" --reps 1 --warmup 0 --algo linear,ring,clustered_factor,clustered_factor_fill \
    --json "$OUT/uneven_$layout.json" | grep -E "^commbench|^alltoall|^validation"
  python3 "$ROOT/scripts/reproduce/hierarchical_traces.py" "$trace" "$OUT/uneven_$layout.json" \
    "$OUT/uneven_$layout.trace.json" --nodes "file:$nodes" --rate 840 \
    --single-port "$OUT/uneven_$layout.single_port.json" \
    --calibration "fluid:$OUT/p2p_inter.json:$OUT/p2p_intra.json"
  # The same clustered factor with one matching per step: a run (and trace) of its own.
  rm -rf "$trace.one_matching" && mkdir -p "$trace.one_matching"
  LIBCOMM_TRACE_STAGES="$trace.one_matching" "$SIM" --platform giganet6x4 --layout "$nodes" commbench \
    --sizes "$UN_SIZES" --reps 1 --warmup 0 --algo clustered_factor,clustered_factor_fill \
    --clustered-steps one-matching --skip-native --json "$OUT/uneven_$layout.one_matching.json" |
    grep -E "^alltoall|^validation"
  python3 "$ROOT/scripts/reproduce/hierarchical_traces.py" "$trace.one_matching" \
    "$OUT/uneven_$layout.one_matching.json" "$OUT/uneven_$layout.one_matching.trace.json" --nodes "file:$nodes" \
    --rate 840 --single-port "$OUT/uneven_$layout.one_matching.single_port.json" \
    --calibration "fluid:$OUT/p2p_inter.json:$OUT/p2p_intra.json"
done

if ((QUICK)); then
  "$(plot_python)" "$ROOT/scripts/reproduce/hierarchical_report.py" "$OUT" "$OUT/hierarchical_tables.md"
else
  mkdir -p "$ROOT/docs/results/hierarchical"
  cp "$OUT"/*.json "$ROOT/docs/results/hierarchical/"
  "$(plot_python)" "$ROOT/scripts/reproduce/hierarchical_report.py" "$ROOT/docs/results/hierarchical" \
    "$ROOT/docs/results/hierarchical_tables.md"
fi
