#!/usr/bin/env bash
# An emulated switched cluster on this machine (issue 9): one network namespace per
# machine, one bridge per switch, a veth pair with tc rate limits on both ends per link.
#   scripts/testbed.sh [--prefix P] [--net 10.X] COMMAND ...
#     up TOPOLOGY [--rate R] [--delay D] [--queue Q] [--ranks-per-machine SPEC] [--tcp CC]
#        [--dry-run]
#         TOPOLOGY: a .topo file (inputs/topologies/, or a bare name such as fig5a);
#         R: link rate per direction (tc syntax, default 2mbit); D: added delay per link
#         and direction (default 0; needs the kernel's netem qdisc);
#         Q: queue of each link end (default 64kb); SPEC: K, A,B,C or a .nodes file
#         (ranks on each machine, rank order; default 1); CC: the machines' TCP congestion
#         control (default: the host's; a namespace may only pick one of the host's
#         net.ipv4.tcp_allowed_congestion_control); --dry-run prints the commands
#     run [-np N] [--timeout S] [--build DIR] -- PROGRAM ARGS...
#         Open MPI over TCP across the machines (default N: every slot); PROGRAM is an app
#         name built in build/ (commbench, fft3d, ...) or a path. Prints the CPU and link
#         load of the run afterwards. --timeout: abort the job after S seconds.
#     check [--size S] [--tolerance F] [--max-links K] [--build DIR]
#         per link (switch--switch links first, at most K): latency, ping-pong and
#         bidirectional rate between two machines on either side (apps/linkcheck);
#         fails when a rate is off by more than F (default 0.2)
#     status    what is up;   down    removes every namespace and link named P-*
#   P: name prefix (default lc, env LIBCOMM_TESTBED_PREFIX); 10.X: the private range
#   10.X.0.0/16 (default 10.147, env LIBCOMM_TESTBED_NET). Needs root (ip netns, tc).
# Example: scripts/testbed.sh up fig1 && scripts/testbed.sh run -- commbench --topology \
#   inputs/topologies/fig1.topo --algo tree_scheduled,linear --sizes 64K; scripts/testbed.sh down
set -euo pipefail
source "$(dirname "$0")/lib.sh"
HERE="$LIBCOMM_ROOT/scripts/testbed"
PREFIX="${LIBCOMM_TESTBED_PREFIX:-lc}"
NET="${LIBCOMM_TESTBED_NET:-10.147}"

die() { echo "testbed: error: $*" >&2; exit 2; }
usage() { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; }

while (($#)); do
  case "$1" in
    --prefix) PREFIX="$2"; shift 2 ;;
    --net) NET="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) break ;;
  esac
done
(($#)) || { usage >&2; exit 2; }
COMMAND="$1"
shift
STATE_DIR="${LIBCOMM_TESTBED_STATE:-/run/libcomm-testbed}/$PREFIX"
STATE="$STATE_DIR/plan.json"

need_root() {
  [[ $(id -u) -eq 0 ]] || die "'$COMMAND' needs root (network namespaces and tc)"
  command -v ip >/dev/null && command -v tc >/dev/null || ensure_packages iproute2
}
# Our namespaces: those the plan lists and any other named PREFIX-*.
our_namespaces() {
  { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}-" || true
    if [[ -f "$STATE" ]]; then
      python3 -c 'import json,sys
p=json.load(open(sys.argv[1]))
for n in p["switches"]+p["machines"]: print(n["namespace"])' "$STATE" 2>/dev/null || true
    fi
  } | sort -u
}

cmd_down() {
  local ns n=0
  for ns in $(our_namespaces); do
    if ip netns list | awk '{print $1}' | grep -qx -- "$ns"; then
      ip netns del "$ns" && n=$((n + 1))
    fi
  done
  # Deleting a namespace deletes its veth ends and their peers; the root link goes with
  # the first switch, but delete it explicitly if it survived.
  if ip link show "$PREFIX-host" >/dev/null 2>&1; then ip link del "$PREFIX-host" 2>/dev/null || true; fi
  rm -rf "$STATE_DIR"
  echo "testbed: down ($n namespaces named $PREFIX-* removed)"
}

NETEM_ERROR=""
netem_available() {  # a throw-away namespace tries to add a netem qdisc; tc's error in NETEM_ERROR
  local ns="$PREFIX-probe" ok=0
  ip netns add "$ns" || { NETEM_ERROR="could not create the probe namespace $ns"; return 1; }
  if ip -n "$ns" link add "$PREFIX-pa" type veth peer name "$PREFIX-pb"; then
    NETEM_ERROR=$(tc -n "$ns" qdisc add dev "$PREFIX-pa" root netem delay 1ms 2>&1) && ok=1
  fi
  ip netns del "$ns"
  ((ok))
}

cmd_up() {
  local topo="" dry=0 args=()
  while (($#)); do
    case "$1" in
      --rate|--delay|--queue|--ranks-per-machine|--tcp) args+=("$1" "$2"); shift 2 ;;
      --dry-run) dry=1; shift ;;
      -*) die "up: unknown option '$1'" ;;
      *) [[ -z "$topo" ]] || die "up: more than one topology ('$topo', '$1')"; topo="$1"; shift ;;
    esac
  done
  [[ -n "$topo" ]] || die "up: no topology given (a file of inputs/topologies/)"
  [[ -f "$topo" ]] || topo="$LIBCOMM_ROOT/inputs/topologies/$topo.topo"
  [[ -f "$topo" ]] || die "up: no topology file '$topo'"
  if ((dry)); then
    python3 "$HERE/plan.py" up "$topo" --prefix "$PREFIX" --net "$NET" "${args[@]}"
    return
  fi
  need_root
  local existing
  existing=$(our_namespaces | tr '\n' ' ')
  [[ -z "$existing" ]] || die "a testbed named $PREFIX-* is already up ($existing): run 'testbed.sh down' first or use --prefix"
  if ip -4 addr show | grep -q " inet ${NET//./\\.}\."; then
    die "the range $NET.0.0/16 is already in use on this machine: choose another with --net"
  fi
  local delay
  delay=$(awk '{for (i = 1; i < NF; i++) if ($i == "--delay") print $(i + 1)}' <<<"${args[*]:-}")
  if [[ -n "$delay" && ! "$delay" =~ ^0+(us|ms|s)?$ ]] && ! netem_available; then
    die "up: --delay $delay needs the netem qdisc, which this kernel lacks (kernel option CONFIG_NET_SCH_NETEM, module sch_netem; 'tc qdisc add ... netem' said: ${NETEM_ERROR:-nothing}); use --delay 0"
  fi
  mkdir -p "$STATE_DIR"
  local cmds
  cmds=$(python3 "$HERE/plan.py" up "$topo" --prefix "$PREFIX" --net "$NET" --state "$STATE" \
         "${args[@]}") || { rm -rf "$STATE_DIR"; exit 2; }
  # Whatever fails from here on, take down what was built.
  trap 'echo "testbed: up failed, removing what was built" >&2; cmd_down >&2' ERR INT TERM
  local c
  while IFS= read -r c; do
    # shellcheck disable=SC2086  # the plan's commands have no quoting
    $c || { echo "testbed: failed: $c" >&2; false; }
  done <<<"$cmds"
  trap - ERR INT TERM
  python3 "$HERE/plan.py" describe "$STATE"
  echo "testbed: up ($(wc -l <<<"$cmds") commands)"
}

cmd_status() {
  local ns
  ns=$(our_namespaces | tr '\n' ' ')
  if [[ -f "$STATE" ]]; then
    python3 "$HERE/plan.py" describe "$STATE"
  fi
  echo "namespaces named $PREFIX-*: ${ns:-none}"
  if ip link show "$PREFIX-host" >/dev/null 2>&1; then
    echo "root namespace link: $PREFIX-host"
  else
    echo "root namespace link: none"
  fi
  [[ -f "$STATE" || -z "$ns" ]] || echo "testbed: namespaces without a plan: run 'testbed.sh down'"
}

# mpirun across the namespaces: HOSTFILE NP PROGRAM ARGS...
# Open MPI believes every namespace is a machine of its own with free cores, so it would
# let waiting ranks spin; mpi_yield_when_idle gives the few real cores back to the ranks
# (and the kernel's forwarding) that have work.
launch() {
  local hostfile="$1" np="$2"
  shift 2
  local subnet="$NET.0.0/16"
  mpi_environment
  mpirun --hostfile "$hostfile" -np "$np" \
    --mca plm_rsh_agent "$HERE/ns-agent.sh" --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include "$subnet" --mca btl_tcp_if_include "$subnet" \
    --mca btl tcp,vader,self --mca btl_vader_single_copy_mechanism none \
    --mca mpi_yield_when_idle 1 \
    "$@"
}

program_path() {  # app name or path -> executable
  local p="$1" build="$2"
  [[ "$p" == */* ]] || p="$build/apps/$p/$p"
  [[ -x "$p" ]] || die "no program '$p' (build it: cmake --build $build --target $(basename "$p"))"
  echo "$p"
}

cmd_run() {
  local np="" build="$LIBCOMM_ROOT/build" limit=()
  while (($#)); do
    case "$1" in
      -np|--np) np="$2"; shift 2 ;;
      --timeout) limit=(--timeout "$2"); shift 2 ;;
      --build) build="$2"; shift 2 ;;
      --) shift; break ;;
      *) break ;;
    esac
  done
  (($#)) || die "run: no program given (run [-np N] -- PROGRAM ARGS)"
  [[ -f "$STATE" ]] || die "no testbed is up (prefix $PREFIX): run 'testbed.sh up TOPOLOGY' first"
  need_root
  local program slots
  program=$(program_path "$1" "$build")
  shift
  python3 "$HERE/plan.py" hostfile "$STATE" > "$STATE_DIR/hostfile"
  slots=$(awk -F'slots=' '{s += $2} END {print s}' "$STATE_DIR/hostfile")
  np="${np:-$slots}"
  [[ "$np" =~ ^[1-9][0-9]*$ ]] || die "run: -np must be a positive integer, got '$np'"
  ((np <= slots)) || die "run: -np $np but the testbed has $slots rank slots (up --ranks-per-machine)"
  python3 "$HERE/monitor.py" snapshot "$STATE" > "$STATE_DIR/before.json"
  local rc=0
  launch "$STATE_DIR/hostfile" "$np" "${limit[@]}" "$program" "$@" || rc=$?
  python3 "$HERE/monitor.py" report "$STATE" "$STATE_DIR/before.json" | sed 's/^/testbed: /'
  return $rc
}

cmd_check() {
  local size=1MiB tol=0.2 max=100000 build="$LIBCOMM_ROOT/build"
  while (($#)); do
    case "$1" in
      --size) size="$2"; shift 2 ;;
      --tolerance) tol="$2"; shift 2 ;;
      --max-links) max="$2"; shift 2 ;;
      --build) build="$2"; shift 2 ;;
      *) die "check: unknown option '$1'" ;;
    esac
  done
  [[ -f "$STATE" ]] || die "no testbed is up (prefix $PREFIX): run 'testbed.sh up TOPOLOGY' first"
  need_root
  local program rate delay
  program=$(program_path linkcheck "$build")
  read -r rate delay < <(python3 -c 'import json,sys
p=json.load(open(sys.argv[1])); print(p["rate"], p["delay"])' "$STATE")
  echo "check: links of $rate, $delay each way; message $size; pass band: rate x (1 +- $tol)"
  echo "       TCP over Ethernet carries at most 1448 payload bytes per 1514-byte frame: 95.6% of the rate"
  printf '%-14s %-8s %-8s %4s %10s %14s %12s  %s\n' link from to hops latency_us pingpong_mbit bidir_mbit verdict
  local bad=0 label a b hops out lat pp bi verdict
  while read -r label a b hops; do
    printf '%s slots=1\n%s slots=1\n' "$a" "$b" > "$STATE_DIR/pair.hosts"
    python3 "$HERE/monitor.py" snapshot "$STATE" > "$STATE_DIR/before.json"
    out=$(launch "$STATE_DIR/pair.hosts" 2 "$program" --size "$size" </dev/null 2>&1) || true
    lat=$(sed -n 's/.*latency_us=\([0-9.]*\).*/\1/p' <<<"$out")
    pp=$(sed -n 's/.*pingpong_mbit=\([0-9.]*\).*/\1/p' <<<"$out")
    bi=$(sed -n 's/.*bidir_mbit=\([0-9.]*\).*/\1/p' <<<"$out")
    if [[ -z "$bi" ]] || ! grep -q "validation: PASS" <<<"$out"; then
      verdict="FAILED: $(tail -3 <<<"$out" | tr '\n' ' ')"
      bad=1
    else
      verdict=$(python3 -c 'import sys,re
rate, tol, pp, bi = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", rate.lower())
r = float(m[1]) * {"": 1e-6, "k": 1e-3, "m": 1, "g": 1e3}[m[2]] * 0.956
off = [f"{n} {v:.2f} is {100 * v / r:.0f}% of {r:.2f}" for n, v in (("pingpong", pp), ("bidir", bi))
       if abs(v / r - 1) > tol]
print("OFF: " + "; ".join(off) if off else "ok")' "$rate" "$tol" "$pp" "$bi")
      [[ "$verdict" == ok ]] || bad=1
    fi
    printf '%-14s %-8s %-8s %4s %10s %14s %12s  %s\n' "$label" "${a#"$PREFIX"-}" "${b#"$PREFIX"-}" \
      "$hops" "${lat:--}" "${pp:--}" "${bi:--}" "$verdict"
    python3 "$HERE/monitor.py" report "$STATE" "$STATE_DIR/before.json" | grep '^cpu' | sed 's/^/               /'
  done < <(python3 "$HERE/plan.py" pairs "$STATE" | head -n "$max")
  if ((bad)); then
    echo "check: FAILED: some links are far from $rate (a busy CPU, or a rate the machine cannot emulate); try a lower --rate" >&2
    return 1
  fi
  echo "check: PASS (every link within $tol of $rate x 0.956)"
}

case "$COMMAND" in
  up) cmd_up "$@" ;;
  down) need_root; cmd_down ;;
  status) cmd_status ;;
  run) cmd_run "$@" ;;
  check) cmd_check "$@" ;;
  *) die "unknown command '$COMMAND' (up, run, check, status, down; see --help)" ;;
esac
