#!/usr/bin/env bash
# The two contention claims of issues 32 and 41 (paper 000's clustered factor, paper 003's
# generated routine), in a few minutes: the single-port replay on hand-timed programs; the
# fluid run of paper 000's regular layout traced and replayed on single-ported nodes (the
# library's own programs: with head-of-line blocking of whole messages linear, in the order
# 0, 1, ..., must lose, without it win, and MPICH's rotated order (ring) must beat the
# clustered factor even with it); the packet model's --queue (the era's switch buffers)
# taking effect, and its TCP log (--tcp-log) counting the retransmission timeouts a tiny FIFO
# causes and none where nothing can drop. The result pages are regenerated from their
# committed records by the pages tests (tests/pages/pages.txt).
# Run by scripts/test.sh; builds commbench with SimGrid (build-sim/ or SIM_BUILD_DIR) when needed.
source "$(dirname "$0")/common.sh" libcomm-claims-test

echo "== single-port replay on programs timed by hand"
python3 tests/sim/single_port_model.py || fail "single_port_model.py"

echo "== paper 000: regular 6 x 4 at 16 KiB, fluid, traced, replayed on single-ported nodes"
nodes=inputs/nodes/regular_24.nodes
mkdir -p "$TMP/trace"
LIBCOMM_TRACE_STAGES="$TMP/trace" scripts/simulate.sh --platform giganet6x4 --layout "$nodes" commbench \
  --sizes 16K --reps 1 --warmup 0 --algo linear,ring,clustered_factor --skip-native --json "$TMP/fluid.json" \
  >"$TMP/fluid.log" 2>&1 || { tail -20 "$TMP/fluid.log"; fail "fluid run failed"; }
export SIM_REBUILD=0
grep -q "^validation: PASS" "$TMP/fluid.log" || fail "fluid: validation did not pass"
python3 scripts/reproduce/hierarchical_traces.py "$TMP/trace" "$TMP/fluid.json" "$TMP/trace.json" \
  --nodes "file:$nodes" --rate 840 --single-port "$TMP/single.json" || fail "hierarchical_traces.py"
python3 - "$TMP/trace.json" "$TMP/single.json" "$TMP/fluid.json" <<'PY' || fail "paper 000's records"
import json, sys
trace, single, fluid = (json.load(open(p)) for p in sys.argv[1:4])
bad = []
for row in trace:
    for n in row["nodes"]:
        parts = n["network_s"] + n["waiting_s"] + n["intra_s"] + n["idle_s"]
        if abs(parts - row["total_s"]) > 1e-6 * max(1.0, row["total_s"]):
            bad.append(f"{row['algorithm']} node {n['node']}: parts {parts} != run {row['total_s']}")
    if row["algorithm"] == "clustered_factor" and not any(n["intra_s"] > 0 for n in row["nodes"]):
        bad.append("clustered_factor: no intra-node steps traced (a node paired with itself)")
# The run's own times: the trace's run is the commbench median (one repetition).
times = {r["algo"]: r["median_s"] for r in fluid["results"]}
for row in trace:
    if abs(row["total_s"] - times[row["algorithm"]]) > 0.02 * times[row["algorithm"]]:
        bad.append(f"{row['algorithm']}: traced {row['total_s']} s against commbench's {times[row['algorithm']]} s")
t = {(r["algorithm"], r["ports"]): r["time_s"] for r in single["results"]}
if not t[("clustered_factor", "single")] < t[("linear", "single")]:
    bad.append(f"single-ported with head-of-line blocking: clustered_factor {t[('clustered_factor', 'single')]} s "
               f"is not faster than linear {t[('linear', 'single')]} s")
if not t[("linear", "any")] < t[("clustered_factor", "any")]:
    bad.append("without head-of-line blocking linear should win on the regular layout")
if not t[("ring", "single")] < t[("clustered_factor", "single")]:
    bad.append(f"single-ported, MPICH's order: ring {t[('ring', 'single')]} s should beat clustered_factor "
               f"{t[('clustered_factor', 'single')]} s (issue 41's settling run)")
print("single-ported, 16 KiB: linear %.2f ms, clustered_factor %.2f ms (without head-of-line blocking "
      "%.2f / %.2f ms)" % tuple(1e3 * t[k] for k in (("linear", "single"), ("clustered_factor", "single"),
                                                    ("linear", "any"), ("clustered_factor", "any"))))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

echo "== packet model: --queue gives every link end that many packets"
python3 scripts/reproduce/topo2platform.py inputs/topologies/star4.topo "$TMP/star4.xml" \
  --hostfile "$TMP/star4.hosts" >/dev/null
for q in 100 4 100000; do
  scripts/simulate.sh --network packet --queue "$q" --tcp-log "$TMP/q$q.tcp" --platform "$TMP/star4.xml" \
    --hostfile "$TMP/star4.hosts" commbench --sizes 64K --reps 1 --warmup 0 --algo linear --skip-native \
    >"$TMP/q$q.log" 2>&1 || { tail -5 "$TMP/q$q.log"; fail "packet run with --queue $q failed"; }
  python3 scripts/tcp_log.py count "$TMP/q$q.tcp" --json "$TMP/q$q.tcp.json" || fail "tcp_log.py count (--queue $q)"
done
t100=$(awk '$1 == "alltoall" {print $6}' "$TMP/q100.log") t4=$(awk '$1 == "alltoall" {print $6}' "$TMP/q4.log")
echo "linear at 64 KiB on 4 machines: queues of 100 packets $t100 us, of 4 packets $t4 us"
# Three flows into every port overflow a 4-packet queue: losses cost at least one 200 ms timeout.
python3 -c "import sys; sys.exit(0 if float('$t4') > float('$t100') + 100000 else 1)" ||
  fail "--queue 4 did not slow linear down by a retransmission timeout: was the queue set?"
scripts/simulate.sh --network fluid --queue 4 commbench >/dev/null 2>&1 && fail "--queue accepted without --network packet"
scripts/simulate.sh --network fluid --tcp-log "$TMP/x" commbench >/dev/null 2>&1 &&
  fail "--tcp-log accepted without --network packet"
# The TCP log: a 4-packet FIFO makes timeouts fire (and counted as such, from ns-3's log); a
# FIFO deeper than anything in flight loses nothing, so no segment is ever sent twice.
python3 - "$TMP/q4.tcp.json" "$TMP/q100000.tcp.json" <<'PY' || fail "the TCP log's counts"
import json, sys
small, deep = (json.load(open(p)) for p in sys.argv[1:3])
print(f"--queue 4: {small['total']} over {small['connections']} connections; --queue 100000: {deep['total']}")
bad = []
if small["connections"] < 12 or small["segments"] < 12 * 65:
    bad.append(f"--queue 4: the log saw {small['connections']} connections and {small['segments']} segments")
if small["total"]["rto"] < 1:
    bad.append("--queue 4: no retransmission timeout in the log")
if any(deep["total"].values()) or deep["connections"] < 12:
    bad.append(f"--queue 100000: {deep['total']} over {deep['connections']} connections (nothing should drop)")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

((failures == 0)) || { echo "contention_claims.sh: $failures FAILED"; exit 1; }
echo "contention_claims.sh: PASS"
