#!/usr/bin/env bash
# Runs a program of the suite on a simulated cluster with SimGrid's SMPI.
#   scripts/simulate.sh [-np N] [--platform FILE] [--ppn K] [--host-speed FLOPS]
#                       [--cfg NAME:VALUE]... [--verbose] [--] PROGRAM [ARGS...]
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
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) echo "simulate.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
(($#)) || { echo "simulate.sh: no program given (see --help)" >&2; exit 2; }
[[ -f "$PLATFORM" ]] || PLATFORM="$LIBCOMM_ROOT/inputs/platforms/$PLATFORM.xml"
[[ -f "$PLATFORM" ]] || { echo "simulate.sh: no platform file '$PLATFORM'" >&2; exit 2; }
[[ "$PPN" =~ ^[1-9][0-9]*$ ]] || { echo "simulate.sh: --ppn must be a positive integer, got '$PPN'" >&2; exit 2; }

SIM_BUILD="${SIM_BUILD_DIR:-$LIBCOMM_ROOT/build-sim}"
ensure_packages "${LIBCOMM_PACKAGES[@]}" libsimgrid-dev
if [[ ! -f "$SIM_BUILD/CMakeCache.txt" || "${SIM_REBUILD:-1}" == 1 ]]; then
  configure_and_build "$SIM_BUILD" -DLIBCOMM_SIMGRID=ON >"$SIM_BUILD.build.log" 2>&1 ||
    { tail -40 "$SIM_BUILD.build.log"; exit 1; }
fi

PROGRAM="$1"
shift
if [[ "$PROGRAM" != */* ]]; then
  PROGRAM="$SIM_BUILD/apps/$PROGRAM/$PROGRAM"
fi
[[ -x "$PROGRAM" ]] || { echo "simulate.sh: no program '$PROGRAM' in the SimGrid build" >&2; exit 2; }

HOSTFILE=$(mktemp /tmp/libcomm-hosts.XXXXXX)
trap 'rm -f "$HOSTFILE"' EXIT
if [[ -n "$LAYOUT" ]]; then
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
  awk -v k="$PPN" '{for (i = 0; i < k; i++) print}' <<<"$HOSTS" | head -n "$NP" >"$HOSTFILE"
fi

OPTS=(--cfg=smpi/shared-malloc:global --cfg=smpi/privatization:dlopen)
[[ -n "$SPEED" ]] && OPTS+=("--cfg=smpi/host-speed:$SPEED") ||
  OPTS+=(--cfg=smpi/simulate-computation:no)
((VERBOSE)) || OPTS+=(--log=root.thres:warning --log=smpi_config.thres:error)
export OMPI_ALLOW_RUN_AS_ROOT=1
# auto finds inputs/tuning/<platform>.tune through this (inputs/tuning/README.md).
export LIBCOMM_PLATFORM="${LIBCOMM_PLATFORM:-$(basename "$PLATFORM" .xml)}"
exec smpirun -np "$NP" -platform "$PLATFORM" -hostfile "$HOSTFILE" "${OPTS[@]}" "${CFG[@]}" \
  "$PROGRAM" "$@"
