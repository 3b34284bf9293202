#!/usr/bin/env bash
# Paper 003, Figs. 6-8 on real packets: the Fig. 5 trees built by scripts/testbed.sh
# (namespaces, bridges, tbf-limited veth links), commbench with tree_scheduled (pairwise
# synchronisation and barrier variants), linear (LAM), ring and pairwise (MPICH) and
# native, validated; the CPU and link load of every run is logged. Writes
# results/testbed/*.json|log and docs/results/testbed_ethernet.md + PNG plots.
#   scripts/reproduce/testbed_ethernet.sh [--rate 2mbit] [--sizes 8K,...] [--reps 1]
#                                         [--topologies "fig1 fig5a fig5b fig5c"] [--no-check]
#                                         [--tcp CC]  (TCP congestion control, see testbed.sh)
# The links run at --rate instead of the paper's 100 Mbit/s so that the 2 cores are not
# the bottleneck; times scale with 100 Mbit/s / rate, fractions of the bound do not. The
# report covers every topology run so far (results/testbed/fig5?_RATE.json), so the
# topologies may be run one by one at different rates.
set -euo pipefail
cd "$(dirname "$0")/../.."
RATE=2mbit
SIZES="8K,16K,32K,64K,128K,256K"
REPS=1
TOPOS="fig5a fig5b fig5c"
CHECK=1
UP_EXTRA=()
while (($#)); do
  case "$1" in
    --rate) RATE="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --topologies) TOPOS="$2"; shift 2 ;;
    --tcp) UP_EXTRA=(--tcp "$2"); shift 2 ;;
    --no-check) CHECK=0; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "testbed_ethernet.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
OUT=results/testbed
mkdir -p "$OUT"
for target in commbench linkcheck; do
  [[ -x build/apps/$target/$target ]] || cmake --build build -j2 --target "$target"
done
TB=scripts/testbed.sh
trap '$TB down >/dev/null' EXIT
status=0
for t in $TOPOS; do
  $TB down >/dev/null
  $TB up "$t" --rate "$RATE" "${UP_EXTRA[@]}" > "$OUT/${t}_up.log"
  if ((CHECK)); then
    $TB check --max-links 3 > "$OUT/${t}_check.log" 2>&1 || { echo "== $t: link check FAILED (see $OUT/${t}_check.log)"; status=1; }
    grep -E "^check:" "$OUT/${t}_check.log" | tail -1
  fi
  echo "== $t: commbench at $RATE, sizes $SIZES"
  $TB run --timeout 1800 -- commbench --topology "inputs/topologies/$t.topo" --sizes "$SIZES" --reps "$REPS" \
    --warmup 1 --algo tree_scheduled,tree_scheduled_barrier,linear,ring,pairwise \
    --json "$OUT/${t}_$RATE.json" > "$OUT/${t}_$RATE.log" 2>&1 || status=1
  grep -E "validation|testbed:" "$OUT/${t}_$RATE.log" || true
done
$TB down
# The report takes every topology's latest run, whatever its rate (fig5a may need a lower one).
python3 scripts/reproduce/testbed_report.py "$OUT" > docs/results/testbed_ethernet.md || status=1
/usr/bin/python3 scripts/reproduce/testbed_plot.py "$OUT" docs/results || status=1
exit $status
