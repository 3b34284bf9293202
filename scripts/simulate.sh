#!/usr/bin/env bash
# Runs a program of the suite on a simulated cluster with SimGrid's SMPI.
#   scripts/simulate.sh [-np N] [--platform FILE] [--ppn K] [--host-speed FLOPS]
#                       [--network fluid|packet] [--cfg NAME:VALUE]... [--verbose]
#                       [--] PROGRAM [ARGS...]
#     -np N            simulated ranks (default: one per host of the platform)
#     --platform FILE  SimGrid platform (default inputs/platforms/flat64.xml; a bare name
#                      such as flat64 means inputs/platforms/NAME.xml)
#     --ppn K          ranks per host: ranks iK .. iK+K-1 go to the i-th host (default 1)
#     --layout L       uneven nodes: a .nodes file or sizes=A,B,..; node k's ranks go to
#                      host k, and -np defaults to the sum
#     --host-speed F   charges the time spent computing on this machine to simulated time:
#                      SMPI counts it as F flop/s on this machine and replays it at the
#                      platform's host speed (on a 1Gf platform, 4Gf makes every compute
#                      burst 4x longer); without it computation is free
#     --hostfile FILE  rank i on the host of line i (instead of --ppn / --layout)
#     --network M      fluid (default): SimGrid's flow model, every link shared fairly
#                      among the flows crossing it; packet: ns-3's packet-level TCP (slow
#                      start, queues, drops, retransmission timeouts) on the same platform;
#                      the platform must be one ns-3 can build (scripts/packet_platform.py)
#     --tcp-buffer B   packet model: TCP send and receive buffers, bytes (default 64M); must
#                      be more than twice the largest message (README, "Packet-level model")
#     --queue N        packet model: every link end (switch port or network card) is a FIFO
#                      of N packets (N >= 2) that drops what does not fit, instead of ns-3's
#                      default: a 100-packet FIFO behind an FQ-CoDel queue disc of 10240
#                      packets (256: the switches of paper 003's experiments as far as the
#                      binding can show them, docs/results/ethernet_packet.md)
#     --tcp-log FILE   packet model: FILE gets a line per TCP retransmission, from ns-3's own
#                      log of its sockets: a retransmission timeout that fired and resent
#                      (rto), a connection request sent again after its timeout (syn), a data
#                      segment sent again for any reason (segment), each with its simulated
#                      time and node, and the connections and segments sent in all
#                      (scripts/tcp_log.py; `tcp_log.py count FILE --trace DIR` counts them
#                      per run of a stage trace). The log costs the simulation 2-3x its time
#     --native-selector S  whose decision rules pick the algorithm of the MPI library's own
#                      collectives (what commbench calls native): ompi (default, Open MPI's
#                      tuned rules over SMPI's copies of its algorithms), mpich (MPICH's),
#                      mvapich2 (MVAPICH2's), or smpi (SMPI's own default, which for
#                      allgather and alltoall posts every message at once); sets
#                      smpi/coll-selector, which a per-collective
#                      --cfg smpi/<collective>:ALGO overrides for that collective. Records
#                      say which ran (commbench's native_selector)
#     --cfg N:V        any further SimGrid setting (e.g. smpi/alltoall:pair)
#     --verbose        keep SimGrid's informational log
#   PROGRAM is an app name (commbench, fft3d, ...) built in build-sim/, or a path.
# Builds the SimGrid variant (cmake -DLIBCOMM_SIMGRID=ON) in build-sim/ when needed.
# Example: scripts/simulate.sh -np 64 commbench --sizes 1K,64K --simulated-payload
set -euo pipefail
source "$(dirname "$0")/lib.sh"
NP=""
PLATFORM="$LIBCOMM_ROOT/inputs/platforms/flat64.xml"
PPN=1
LAYOUT=""
SPEED=""
VERBOSE=0
HOSTFILE_IN=""
NETWORK=fluid
TCP_BUFFER=64M
QUEUE=""
TCP_LOG=""
SELECTOR=ompi
CFG=()
while (($#)); do
  case "$1" in
    -np|--np) NP="$2"; shift 2 ;;
    --platform) PLATFORM="$2"; shift 2 ;;
    --ppn) PPN="$2"; shift 2 ;;
    --layout) LAYOUT="$2"; shift 2 ;;
    --host-speed) SPEED="$2"; shift 2 ;;
    --cfg) CFG+=("--cfg=$2"); shift 2 ;;
    --verbose) VERBOSE=1; shift ;;
    --hostfile) HOSTFILE_IN="$2"; shift 2 ;;
    --network) NETWORK="$2"; shift 2 ;;
    --tcp-buffer) TCP_BUFFER="$2"; shift 2 ;;
    --queue) QUEUE="$2"; shift 2 ;;
    --tcp-log) TCP_LOG="$2"; shift 2 ;;
    --native-selector) SELECTOR="$2"; shift 2 ;;
    -h|--help) sed -n '2,46p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) echo "simulate.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
(($#)) || { echo "simulate.sh: no program given (see --help)" >&2; exit 2; }
[[ -f "$PLATFORM" ]] || PLATFORM="$LIBCOMM_ROOT/inputs/platforms/$PLATFORM.xml"
[[ -f "$PLATFORM" ]] || { echo "simulate.sh: no platform file '$PLATFORM'" >&2; exit 2; }
[[ "$PPN" =~ ^[1-9][0-9]*$ ]] || { echo "simulate.sh: --ppn must be a positive integer, got '$PPN'" >&2; exit 2; }
[[ "$NETWORK" == fluid || "$NETWORK" == packet ]] ||
  { echo "simulate.sh: --network must be fluid or packet, got '$NETWORK'" >&2; exit 2; }
TCP_BUFFER_BYTES=$(python3 -c '
import re, sys
m = re.fullmatch(r"([1-9][0-9]*)([KMG]?)(i?B)?", sys.argv[1])
n = int(m[1]) << {"": 0, "K": 10, "M": 20, "G": 30}[m[2]] if m else 0
print(n if 0 < n < 2**32 else "")' "$TCP_BUFFER")
[[ -n "$TCP_BUFFER_BYTES" ]] ||
  { echo "simulate.sh: --tcp-buffer must be a byte count below 4 GiB (e.g. 64M), got '$TCP_BUFFER'" >&2; exit 2; }
[[ -z "$QUEUE" || ( "$QUEUE" =~ ^[1-9][0-9]{0,5}$ && "$QUEUE" -ge 2 ) ]] ||
  { echo "simulate.sh: --queue must be a number of packets of at least 2, got '$QUEUE'" >&2; exit 2; }
[[ -z "$QUEUE" || "$NETWORK" == packet ]] ||
  { echo "simulate.sh: --queue needs --network packet (the fluid model has no queues)" >&2; exit 2; }
[[ -z "$TCP_LOG" || "$NETWORK" == packet ]] ||
  { echo "simulate.sh: --tcp-log needs --network packet (the fluid model has no TCP)" >&2; exit 2; }
[[ -z "$TCP_LOG" ]] || : >"$TCP_LOG" ||
  { echo "simulate.sh: --tcp-log: cannot write '$TCP_LOG'" >&2; exit 2; }
case "$SELECTOR" in
  ompi|mpich|mvapich2) SELECTOR_CFG="$SELECTOR" ;;
  smpi) SELECTOR_CFG=default ;;  # SimGrid's name for its own choices
  *) echo "simulate.sh: --native-selector must be ompi, mpich, mvapich2 or smpi, got '$SELECTOR'" >&2; exit 2 ;;
esac
for c in "${CFG[@]}"; do
  [[ "$c" != --cfg=smpi/coll-selector:* ]] ||
    { echo "simulate.sh: give the selector as --native-selector (ompi, mpich, mvapich2 or smpi), not $c" >&2; exit 2; }
done
[[ -z "$HOSTFILE_IN" || -f "$HOSTFILE_IN" ]] || { echo "simulate.sh: no host file '$HOSTFILE_IN'" >&2; exit 2; }

SIM_BUILD="${SIM_BUILD_DIR:-$LIBCOMM_ROOT/build-sim}"
ensure_packages "${LIBCOMM_PACKAGES[@]}" libsimgrid-dev
PROGRAM="$1"
shift
if [[ ! -f "$SIM_BUILD/CMakeCache.txt" || "${SIM_REBUILD:-1}" == 1 ]]; then
  TARGETS=()  # an app name builds that app only; a path builds everything
  [[ "$PROGRAM" == */* ]] || TARGETS=(--targets "$PROGRAM")
  configure_and_build "$SIM_BUILD" "${TARGETS[@]}" -DLIBCOMM_SIMGRID=ON >"$SIM_BUILD.build.log" 2>&1 ||
    { tail -40 "$SIM_BUILD.build.log"; exit 1; }
fi

if [[ "$PROGRAM" != */* ]]; then
  PROGRAM="$SIM_BUILD/apps/$PROGRAM/$PROGRAM"
fi
[[ -x "$PROGRAM" ]] || { echo "simulate.sh: no program '$PROGRAM' in the SimGrid build" >&2; exit 2; }

HOSTFILE=$(mktemp /tmp/libcomm-hosts.XXXXXX)
trap 'rm -f "$HOSTFILE"' EXIT
if [[ -n "$HOSTFILE_IN" ]]; then
  SLOTS=$(grep -c . "$HOSTFILE_IN")
  [[ -n "$NP" ]] || NP=$SLOTS
  ((NP <= SLOTS)) || { echo "simulate.sh: $NP ranks, but the host file '$HOSTFILE_IN' has $SLOTS lines" >&2; exit 2; }
  # (awk stops by itself: `| head` would kill the writer with SIGPIPE, which pipefail makes fatal)
  awk -v n="$NP" 'NF && c < n {print; ++c}' "$HOSTFILE_IN" >"$HOSTFILE"
elif [[ -n "$LAYOUT" ]]; then
  python3 "$LIBCOMM_ROOT/scripts/platform_hosts.py" "$PLATFORM" --layout "$LAYOUT" >"$HOSTFILE"
  SLOTS=$(wc -l <"$HOSTFILE")
  [[ -n "$NP" ]] || NP=$SLOTS
  if ((NP != SLOTS)); then
    echo "simulate.sh: the layout '$LAYOUT' holds $SLOTS ranks, not -np $NP" >&2
    exit 2
  fi
else
  HOSTS=$(python3 "$LIBCOMM_ROOT/scripts/platform_hosts.py" "$PLATFORM")
  NHOSTS=$(wc -l <<<"$HOSTS")
  [[ -n "$NP" ]] || NP=$((NHOSTS * PPN))
  [[ "$NP" =~ ^[1-9][0-9]*$ ]] || { echo "simulate.sh: -np must be a positive integer, got '$NP'" >&2; exit 2; }
  if ((NP > NHOSTS * PPN)); then
    echo "simulate.sh: $NP ranks do not fit on $NHOSTS hosts x $PPN ranks ($PLATFORM)" >&2
    exit 2
  fi
  awk -v k="$PPN" -v n="$NP" '{for (i = 0; i < k && c < n; i++) {print; ++c}}' <<<"$HOSTS" >"$HOSTFILE"
fi

OPTS=(--cfg=smpi/shared-malloc:global --cfg=smpi/privatization:dlopen --cfg=smpi/coll-selector:$SELECTOR_CFG)
# Open MPI's decision for MPI_Alltoallv is its pairwise algorithm at P < 4, 64 <= P < 128
# and 256 <= P < 1024 (basic linear elsewhere). Open MPI's pairwise sends to rank + step
# and receives from rank - step (coll_base_alltoallv.c), SMPI's `ring`; SimGrid 3.32 maps
# it to its XOR `pair` instead, which aborts when P is not a power of two. There simulate.sh
# runs `ring`, what Open MPI runs, unless a --cfg smpi/alltoallv:ALGO says otherwise
# (records name it: commbench's native_forced). The setting is global and keyed on -np: an
# MPI_Alltoallv on a sub-communicator of another size is not corrected (none of libcomm's
# programs makes one), and on a power-of-two P SMPI's XOR order stays (the model prices it so).
if [[ "$SELECTOR" == ompi && " ${CFG[*]} " != *" --cfg=smpi/alltoallv:"* ]] && ((NP & (NP - 1))) &&
   ((NP < 4 || (NP >= 64 && NP < 128) || (NP >= 256 && NP < 1024))); then
  OPTS+=(--cfg=smpi/alltoallv:ring)
fi
if [[ "$NETWORK" == packet ]]; then
  python3 "$LIBCOMM_ROOT/scripts/packet_platform.py" "$PLATFORM" "$HOSTFILE" || exit 2
  for c in "${CFG[@]}"; do
    if [[ "$c" == --cfg=tracing* ]]; then
      echo "simulate.sh: $c: SimGrid 3.32's tracing fails under the ns-3 binding (\"No route\"" \
        "while drawing the platform, SIGSEGV without it); LIBCOMM_TRACE_STAGES=DIR traces a" \
        "schedule's stages instead (README, \"Packet-level model\")" >&2
      exit 2
    fi
  done
  # smpi/wtime:0: SimGrid 3.32 injects a 10 ns sleep into every MPI_Wtime; under the ns-3
  # model those sleeps can be left waiting for ever once ns-3 has run past them to its next
  # flow completion, and SimGrid then reports "Deadlock detected" (clustered_factor on 6 x 4
  # nodes at 4 KiB, after 1 KiB runs). A clock read costs nothing instead.
  OPTS+=(--cfg=network/model:ns-3 --cfg=smpi/wtime:0)
  # ns-3 attribute defaults (README, "Packet-level model"):
  # - SndBufSize above the largest message: SimGrid 3.32's binding aborts ("total_bytes is
  #   not sent_bytes") on a message larger than the send buffer.
  # - RcvBufSize as large: ns-3.37's NextSeg accepts unsent data when the bytes in flight
  #   equal the receiver's window, returns an empty segment, and SendPendingData crashes
  #   (SIGSEGV in TcpRateLinux::SkbSent) once SACKed losses open the congestion window;
  #   a receive window above twice the message never equals what the sender has out.
  # - MinRto 200 ms: Linux's minimum retransmission timeout (ns-3's default is 1 s).
  # - ConnTimeout 200 ms: the binding opens a TCP connection per message, where an MPI
  #   library keeps one per peer; a SYN lost in a full queue would cost ns-3's 3 s
  #   connection timeout, so it costs what a lost first segment costs instead.
  ATTRS="ns3::TcpSocket::SndBufSize=$TCP_BUFFER_BYTES;ns3::TcpSocket::RcvBufSize=$TCP_BUFFER_BYTES"
  ATTRS+=";ns3::TcpSocketBase::MinRto=+200ms;ns3::TcpSocket::ConnTimeout=+200ms"
  # - DataRetries 15: Linux's tcp_retries2 (ns-3's default is 6). A connection that gives up
  #   closes before its message is through, and the binding aborts on it as on a message
  #   larger than the send buffer ("total_bytes is not sent_bytes"): linear on Fig. 5 (c)
  #   with 256-packet FIFOs at 128 KiB, which runs with 15. A run that finished never
  #   reached 6 retries, so the change leaves every finished run as it was. (The same run
  #   still aborts at 256 KiB, with 10000 of 262160 bytes sent after 45 s: not retries,
  #   which would take longer; cause not found.)
  ATTRS+=";ns3::TcpSocket::DataRetries=15"
  # - --queue N: every device of the binding has ns-3's default queue disc, FQ-CoDel (10240
  #   packets, one queue per flow served in turn, CoDel's 5 ms target), in front of its
  #   100-packet drop-tail FIFO, which takes from it whenever it has room. A switch port of
  #   2005 was one FIFO: the device's FIFO then holds N - 1 packets and the queue disc one,
  #   so a link end holds N packets and drops the rest.
  [[ -n "$QUEUE" ]] && ATTRS+=";ns3::DropTailQueue<Packet>::MaxSize=$((QUEUE - 1))p;ns3::FqCoDelQueueDisc::MaxSize=1p"
  export NS_ATTRIBUTE_DEFAULT="$ATTRS${NS_ATTRIBUTE_DEFAULT:+;$NS_ATTRIBUTE_DEFAULT}"
  # --tcp-log: ns-3's log of its TCP sockets (debug: every data segment sent and every
  # timeout that resent one; TcpL4Protocol's functions: every packet with its header, so a
  # repeated connection request shows), read by tcp_log.py on the way out. stdbuf buffers
  # stderr: unbuffered, every piece of a log line was a write of its own (2x the time).
  if [[ -n "$TCP_LOG" ]]; then
    LOG_SPEC="TcpSocketBase=debug|prefix_time|prefix_node|prefix_func:TcpL4Protocol=function|prefix_time|prefix_node"
    export NS_LOG="$LOG_SPEC${NS_LOG:+:$NS_LOG}"
  fi
fi
[[ -n "$SPEED" ]] && OPTS+=("--cfg=smpi/host-speed:$SPEED") ||
  OPTS+=(--cfg=smpi/simulate-computation:no)
((VERBOSE)) || OPTS+=(--log=root.thres:warning --log=smpi_config.thres:error)
export OMPI_ALLOW_RUN_AS_ROOT=1
# auto finds inputs/tuning/<platform>.tune through this (inputs/tuning/README.md).
# The packet model has tables of its own: inputs/tuning/<platform>_packet.tune.
SUFFIX=""
[[ "$NETWORK" == packet ]] && SUFFIX=_packet
export LIBCOMM_PLATFORM="${LIBCOMM_PLATFORM:-$(basename "$PLATFORM" .xml)$SUFFIX}"
# Keep a copy of stderr: SimGrid exits 0 after a deadlock or an MPI_Abort, which must not
# pass, and it explains the ns-3 binding's aborts.
ERRLOG=$(mktemp /tmp/libcomm-sim.XXXXXX)
trap 'rm -f "$HOSTFILE" "$ERRLOG"' EXIT
set +e
if [[ -n "$TCP_LOG" ]]; then
  # stderr through the log's reader, which keeps the retransmissions and passes on the rest
  { stdbuf -e 1M smpirun -np "$NP" -platform "$PLATFORM" -hostfile "$HOSTFILE" "${OPTS[@]}" "${CFG[@]}" \
      "$PROGRAM" "$@" 2>&1 1>&3 3>&- | python3 "$LIBCOMM_ROOT/scripts/tcp_log.py" filter "$TCP_LOG" |
      tee "$ERRLOG" >&2; } 3>&1
else
  { smpirun -np "$NP" -platform "$PLATFORM" -hostfile "$HOSTFILE" "${OPTS[@]}" "${CFG[@]}" \
      "$PROGRAM" "$@" 2>&1 1>&3 3>&- | tee "$ERRLOG" >&2; } 3>&1  # stderr through tee, stdout as is
fi
rc=${PIPESTATUS[0]}
if grep -q "Deadlock detected" "$ERRLOG"; then
  # SimGrid reports it and still exits 0: a run that never finished must not pass.
  echo "simulate.sh: SimGrid stopped the simulation on a deadlock (its actor list above says" \
    "who waited for what); the run did not finish" >&2
  ((rc != 0)) || rc=3
fi
if grep -q "MPI_Abort was called" "$ERRLOG"; then
  # A rank gave up (its error is above): SMPI kills every rank and still exits 0.
  echo "simulate.sh: a rank called MPI_Abort (its error is above); the run did not finish" >&2
  ((rc != 0)) || rc=4
fi
if ((rc != 0)); then
  if grep -q "is not sent_bytes" "$ERRLOG"; then
    echo "simulate.sh: a TCP connection closed before its message was through: either the" \
      "message was larger than the packet model's TCP send buffer ($TCP_BUFFER_BYTES bytes;" \
      "give --tcp-buffer more than twice the largest message) or a segment was retransmitted" \
      "15 times in vain (ns3::TcpSocket::DataRetries) and the connection gave up, or it closed" \
      "for a reason not found yet (README, \"Packet-level model\")" >&2
  elif grep -q "Too many endpoints" "$ERRLOG"; then
    echo "simulate.sh: ns-3 ran out of port numbers. The binding gives every message a TCP" \
      "connection on a port of its own and wraps after 65535, onto ports whose connections" \
      "still wait out TIME_WAIT; this simulation sent more messages than that. Split it into" \
      "several (fewer sizes, repetitions or algorithms each)" >&2
  elif grep -q "SkbSent\|Segmentation fault" "$ERRLOG"; then
    echo "simulate.sh: the simulation crashed (SIGSEGV). With messages of more than half of" \
      "--tcp-buffer ($TCP_BUFFER_BYTES bytes) that is ns-3.37's empty-segment crash: raise" \
      "--tcp-buffer (README, \"Packet-level model\")" >&2
  fi
fi
exit $rc
