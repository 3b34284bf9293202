#!/usr/bin/env bash
# The SMP experiments on real packets (issue 9): machines are network namespaces on one
# Linux bridge with tbf-limited links (scripts/testbed.sh); ranks on one machine share
# memory, ranks on different machines talk TCP through the links.
#   - paper 000, section 4: 6 machines x up to 4 ranks, the uneven layouts of
#     inputs/nodes/, clustered_factor (and its fill variant) vs linear;
#   - paper 002: 4 machines x 4 ranks, leader, send_aggregate, recv_distribute vs the
#     flat algorithms (auto, linear, pairwise).
#   scripts/reproduce/testbed_hierarchical.sh [--rate 2mbit] [--layouts "regular_24 ..."]
#                                             [--uneven-sizes 4K,64K] [--multicore-sizes 64,8K]
#                                             [--reps 1] [--tcp CC]
#   --reps: timed repetitions per cell (median reported), after one warm-up; --tcp: the
#   machines' TCP congestion control (see testbed.sh; reno where the host's bbr stalls).
# Writes results/testbed/*.json|log and docs/results/testbed_hierarchical.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
RATE=2mbit
LAYOUTS="regular_24 organ_pipe_18 alternating_15 random_seed1_15"
REPS=1
UP_EXTRA=()
UN_SIZES=4K,64K
MC_SIZES=64,1K,8K,32K
while (($#)); do
  case "$1" in
    --rate) RATE="$2"; shift 2 ;;
    --layouts) LAYOUTS="$2"; shift 2 ;;
    --uneven-sizes) UN_SIZES="$2"; shift 2 ;;
    --multicore-sizes) MC_SIZES="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --tcp) UP_EXTRA=(--tcp "$2"); shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "testbed_hierarchical.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
OUT=results/testbed
mkdir -p "$OUT"
[[ -x build/apps/commbench/commbench ]] || cmake --build build -j2 --target commbench
TB=scripts/testbed.sh
trap '$TB down >/dev/null' EXIT
status=0
bench() {  # NAME COMMBENCH_ARGS...
  local name="$1"
  shift
  $TB run --timeout 900 -- commbench --reps "$REPS" --warmup 1 --json "$OUT/$name.json" "$@" > "$OUT/$name.log" 2>&1 ||
    { echo "== $name FAILED (see $OUT/$name.log)"; status=1; }
  grep -E "validation|testbed:" "$OUT/$name.log" || true
}
for layout in $LAYOUTS; do
  echo "== paper 000: star6, layout $layout, links $RATE"
  $TB down >/dev/null
  $TB up star6 --rate "$RATE" "${UP_EXTRA[@]}" --ranks-per-machine "inputs/nodes/$layout.nodes" > "$OUT/uneven_${layout}_up.log"
  bench "uneven_${layout}_$RATE" --nodes shared --sizes "$UN_SIZES" \
    --algo linear,clustered_factor,clustered_factor_fill
done
echo "== paper 002: star4 x 4 ranks, links $RATE"
$TB down >/dev/null
$TB up star4 --rate "$RATE" "${UP_EXTRA[@]}" --ranks-per-machine 4 > "$OUT/multicore_up.log"
bench "multicore_4x4_$RATE" --nodes shared --sizes "$MC_SIZES" \
  --algo auto,linear,pairwise,leader,send_aggregate,recv_distribute
$TB down
python3 scripts/reproduce/testbed_hierarchical_report.py "$OUT" "$RATE" > docs/results/testbed_hierarchical.md || status=1
exit $status
