#!/usr/bin/env bash
# Paper 003, section 6 under SimGrid: the three topologies of Fig. 5 (100 Mbit/s full
# duplex) with tree_scheduled (pairwise synchronisation, and a barrier per phase),
# linear (LAM), ring / ring_sendrecv / pairwise (MPICH), native and SimGrid's own
# all-to-all algorithms, blocks of 8 KiB to 256 KiB. Writes results/ethernet/*.json and
# docs/results/ethernet.md + ethernet_fig5*.png (completion time and aggregate throughput beside the peak
# bound, the paper's numbers alongside).
#   scripts/reproduce/ethernet.sh [--quick] [--network fluid|packet] [--topologies "fig5a ..."]
#     --quick    2 sizes (64 KiB, 256 KiB), 1 repetition; tables and plots go to
#                results/ethernet*/ instead of docs/results/. With --network packet:
#                64 KiB only, native, tree_scheduled, linear and pairwise (a few minutes)
#     --network  fluid (default: SimGrid's flow model, docs/results/ethernet.md) or packet
#                (ns-3 TCP, docs/results/ethernet_packet.md, records in ethernet_packet/):
#                each algorithm then runs in a
#                simulation of its own, 3 repetitions, so that no algorithm inherits the
#                network another one left behind; SimGrid's built-ins are left out
#                (native is SMPI's MPI_Alltoall as Open MPI's rules pick, simulate.sh's default)
#     --sizes L  block sizes (default 8K,16K,32K,64K,128K,256K)
#     --reps N   repetitions per simulation (default 2 fluid, 3 packet)
#     --algos L  packet: the algorithms to run, in this order (default: native and every
#                one of ours)
#     --resume   packet: skip an algorithm whose record of this topology is already there
#                (a long run that was stopped goes on where it was)
#     --progress print each simulation's medians as they come
#     --queue N  packet: one drop-tail FIFO of N packets at every link end instead of ns-3's
#                default queues (256: the paper's switches, docs/results/ethernet_packet.md);
#                records in results/ethernet_packet_qN/ and docs/results/ethernet_packet/queueN/
#     --trace    packet: trace every simulation's stages (LIBCOMM_TRACE_STAGES) and keep, per
#                algorithm, where its first repetition of each size spent its time on the
#                busiest link (stage_trace_report.py: <record>.trace.json)
#     --tcp-log  packet, implies --trace: log every simulation's TCP retransmissions from
#                ns-3's own log (simulate.sh --tcp-log) and keep them counted per repetition
#                (scripts/tcp_log.py: <record>.tcp.json); costs 2-3x the simulation's time
#     --report-only  write docs/results/ethernet_packet.md (or ethernet.md) and the plots
#                from the committed records alone, without simulating
set -euo pipefail
cd "$(dirname "$0")/../.."
QUICK=0
REPS_ARG=""
RESUME=0
PACKET_ALGOS=""
NETWORK=fluid
PROGRESS=()
QUEUE=""
TRACE=0
TCPLOG=0
REPORT_ONLY=0
SIZES="8K,16K,32K,64K,128K,256K"
TOPOS="fig5a fig5b fig5c"
while (($#)); do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --topologies) TOPOS="$2"; shift 2 ;;
    --network) NETWORK="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --progress) PROGRESS=(--progress); shift ;;
    --reps) REPS_ARG="$2"; shift 2 ;;
    --resume) RESUME=1; shift ;;
    --algos) PACKET_ALGOS="$2"; shift 2 ;;
    --queue) QUEUE="$2"; shift 2 ;;
    --trace) TRACE=1; shift ;;
    --tcp-log) TRACE=1 TCPLOG=1; shift ;;
    --report-only) REPORT_ONLY=1; shift ;;
    -h|--help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ethernet.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -z "$QUEUE" || "$QUEUE" =~ ^[1-9][0-9]*$ ]] || { echo "ethernet.sh: --queue must be a positive integer" >&2; exit 2; }
[[ -z "$QUEUE" || "$NETWORK" == packet ]] || { echo "ethernet.sh: --queue needs --network packet" >&2; exit 2; }
plots() {  # plots FOLDER DOCS: PNG plots (matplotlib: the Debian python3-matplotlib is in /usr/bin/python3)
  local py
  for py in python3 /usr/bin/python3; do
    if "$py" -c "import matplotlib" 2>/dev/null; then
      "$py" scripts/reproduce/ethernet_plot.py "$1" "$2" --network "$NETWORK"
      return
    fi
  done
}
if ((REPORT_ONLY)); then
  if [[ "$NETWORK" == packet ]]; then
    python3 scripts/reproduce/ethernet_report.py docs/results/ethernet_packet --network packet \
      > docs/results/ethernet_packet.md
    plots docs/results/ethernet_packet docs/results
  else
    python3 scripts/reproduce/ethernet_report.py docs/results/ethernet > docs/results/ethernet.md
    plots docs/results/ethernet docs/results
  fi
  exit 0
fi
BUILD="${BUILD_SG_DIR:-build-sg}"
source scripts/lib.sh
if [[ ! -x "$BUILD/apps/commbench/commbench" ]]; then
  build_simgrid_target "$BUILD" commbench  # installs SimGrid first where it is missing
else
  ensure_packages libsimgrid-dev
fi
[[ "$NETWORK" == fluid || "$NETWORK" == packet ]] ||
  { echo "ethernet.sh: --network must be fluid or packet" >&2; exit 2; }
REPS=2
OUT=results/ethernet
REPORT=ethernet
RECORDS=docs/results/ethernet_packet
if [[ "$NETWORK" == packet ]]; then
  REPS=3 OUT=results/ethernet_packet REPORT=ethernet_packet
  if [[ -n "$QUEUE" ]]; then
    OUT=results/ethernet_packet_q$QUEUE RECORDS=docs/results/ethernet_packet/queue$QUEUE
  fi
fi
DOCS=docs/results
((QUICK)) && SIZES="64K,256K" && REPS=1 && DOCS=$OUT
if ((QUICK)) && [[ "$NETWORK" == packet ]]; then
  SIZES=64K
  PACKET_ALGOS=${PACKET_ALGOS:-native tree_scheduled linear pairwise}
fi
if [[ -n "$REPS_ARG" ]]; then
  [[ "$REPS_ARG" =~ ^[1-9][0-9]*$ ]] || { echo "ethernet.sh: --reps must be a positive integer" >&2; exit 2; }
  REPS=$REPS_ARG
fi
mkdir -p "$OUT" inputs/platforms docs/results
# SimGrid's own all-to-alls: four algorithms by name, and the ones Open MPI's and MPICH's
# decision rules pick (the paper compares with MPICH: Figs. 6-8).
BUILTIN="basic_linear pair ring bruck ompi mpich"
status=0
for t in $TOPOS; do
  topo=inputs/topologies/$t.topo
  plat=inputs/platforms/ethernet_$t.xml
  hosts=inputs/platforms/ethernet_$t.hosts
  python3 scripts/reproduce/topo2platform.py "$topo" "$plat" --hostfile "$hosts"
  np=$(wc -l < "$hosts")
  run() {  # run NAME NP HOSTFILE EXTRA_SMPI_ARGS... -- COMMBENCH_ARGS...
    local name="$1" n="$2" hf="$3"
    shift 3
    local smpi=()
    while [[ "$1" != "--" ]]; do smpi+=("$1"); shift; done
    shift
    [[ -n "$QUEUE" ]] && smpi+=(--queue "$QUEUE")
    echo "== $name: simulate.sh --network $NETWORK -np $n ${smpi[*]} commbench $*"
    local start=$SECONDS trace=""
    if ((TRACE)) && [[ "$name" != *_p2p ]]; then
      trace="$OUT/traces/$name"
      rm -rf "$trace" && mkdir -p "$trace"
      ((TCPLOG)) && smpi+=(--tcp-log "$OUT/$name.tcp.log")
    fi
    if ! LIBCOMM_TRACE_STAGES="$trace" SIM_BUILD_DIR="$BUILD" SIM_REBUILD=0 scripts/simulate.sh \
        --network "$NETWORK" -np "$n" --platform "$plat" --hostfile "$hf" "${smpi[@]}" -- \
        commbench "$@" --json "$OUT/$name.json" > "$OUT/$name.log" 2>&1; then
      echo "== $name FAILED (see $OUT/$name.log)"
      status=1
    elif [[ -n "$trace" ]]; then
      # The first repetition of each size (no warm-up: runs 0, REPS, 2 REPS, ... in order).
      python3 - "$trace" "$topo" "$OUT/$name.trace.json" "$REPS" "$SIZES" <<'PY' || status=1
import contextlib, io, json, subprocess, sys
trace, topo, out, reps, sizes = sys.argv[1:6]
rows = []
for i, size in enumerate(sizes.split(",")):
    r = subprocess.run([sys.executable, "scripts/reproduce/stage_trace_report.py", trace, topo, "100",
                        "--run", str(i * int(reps)), "--json", out + ".tmp"], capture_output=True, text=True)
    if r.returncode:
        sys.exit(r.stderr)
    rows.append(json.load(open(out + ".tmp")) | {"size": size})
json.dump(rows, open(out, "w"), indent=1)
subprocess.run(["rm", "-f", out + ".tmp"])
PY
      if ((TCPLOG)); then
        python3 scripts/tcp_log.py count "$OUT/$name.tcp.log" --trace "$trace" --json "$OUT/$name.tcp.json" ||
          status=1
      fi
    fi
    echo "   $name: $((SECONDS - start)) s of wall time" | tee -a "$OUT/wall_times.txt"
    grep -E "validation" "$OUT/$name.log" || true
  }
  # Effective bandwidth of the simulator: one 16 MiB exchange between the first and the
  # last machine (both directions at once, full duplex), crossing the bottleneck.
  printf '%s\n%s\n' "$(head -1 "$hosts")" "$(tail -1 "$hosts")" > "$OUT/${t}_pair.hosts"
  run "${t}_p2p" 2 "$OUT/${t}_pair.hosts" -- --algo ring_sendrecv --sizes 16M --reps 1 --warmup 1 \
    --skip-native
  OURS=tree_scheduled,tree_scheduled_barrier,linear,ring,ring_sendrecv,pairwise
  if [[ "$NETWORK" == fluid ]]; then
    run "${t}_libcomm" "$np" "$hosts" -- --topology "$topo" --sizes "$SIZES" --reps "$REPS" \
      --warmup 1 --algo "$OURS"
    for a in $BUILTIN; do
      run "${t}_simgrid_$a" "$np" "$hosts" --cfg smpi/alltoall:"$a" -- --algo native \
        --sizes "$SIZES" --reps "$REPS" --warmup 1
    done
  else
    # One simulation per algorithm: every run starts from an idle network (no warmup:
    # the binding opens a new TCP connection per message, so nothing warms up).
    for a in ${PACKET_ALGOS:-native ${OURS//,/ }}; do
      if ((RESUME)) && [[ -s "$OUT/${t}_packet_$a.json" ]]; then
        echo "== ${t}_packet_$a: kept (--resume)"
        continue
      fi
      run "${t}_packet_$a" "$np" "$hosts" -- --topology "$topo" --sizes "$SIZES" \
        --reps "$REPS" --warmup 0 --algo "$a" --skip-native "${PROGRESS[@]}"
    done
  fi
done
SOURCE="$OUT"
if [[ "$NETWORK" == packet && "$DOCS" == docs/results ]]; then
  # The packet runs take hours: their records are kept beside the tables, and the page is
  # written from the committed records (today's queues and every --queue run's).
  mkdir -p "$RECORDS"
  cp "$OUT"/*.json "$RECORDS/"
  SOURCE=docs/results/ethernet_packet
elif [[ "$DOCS" == docs/results ]]; then
  # The fluid records are kept beside the page too (docs/results/ethernet/), which is
  # written from them, with the cells of the page before native ran under Open MPI's
  # decision (before_ompi_native.json) for the comparison it prints.
  mkdir -p docs/results/ethernet
  cp "$OUT"/fig5*.json docs/results/ethernet/
  SOURCE=docs/results/ethernet
fi
python3 scripts/reproduce/ethernet_report.py "$SOURCE" --network "$NETWORK" > "$DOCS/$REPORT.md" || status=1
cat "$DOCS/$REPORT.md"
plots "$SOURCE" "$DOCS" || status=1
exit $status
