#!/usr/bin/env python3
"""Turns the stage traces of one commbench run on multi-core nodes (paper 000's layouts)
into the records the result pages are written from.

    hierarchical_traces.py TRACE_DIR RECORD.json OUT.json --nodes SPEC --rate MBPS
        [--warmup W] [--algorithms A,B] [--single-port OUT2.json [--calibration NAME:INTER:INTRA]...]
    hierarchical_traces.py TRACE_DIR RECORD.json OUT.json --exchange-times

RECORD.json is the commbench record of the run (its algorithms, block sizes and
repetitions say which traced run is which: per algorithm, every block size in order,
W warm-up runs and then the repetitions). OUT.json gets, for every traced algorithm and
block size, stage_trace_report.py's node breakdown of the first repetition. With
--single-port, OUT2.json gets hierarchical_single_port.py's replay of the same programs
on single-ported nodes of the Giganet cluster of paper 000 (its defaults), with head-of-line
blocking of whole messages (ports single), of packets (ports packet: 4 KiB chunks, link-level
flow control) and without it (any), and programs with synchronisations (the clustered
factor's hand-overs with one matching per step) also with those free (platform
giganet_free_handover: the order they impose without their cost); each --calibration adds a
replay without it
whose message times are the ones measured alone on a SimGrid model's platform: what the
schedule needs there when each node's link carries one exchange at a time and nothing
else waits ("the schedule alone").
"""
import argparse
import contextlib
import io
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from hierarchical_single_port import replay  # noqa: E402
from stage_trace_report import node_report, node_sizes, read_trace  # noqa: E402


# The replay's figures for paper 000's Giganet cluster (inputs/platforms/giganet6x4.xml).
PLATFORMS = {"giganet": dict(net_bw=105e6, net_lat=14e-6, mem_bw=300e6, mem_lat=2e-6, overhead=5e-6, chunk=4096)}


def exchange_times(trace, record):
    """{block: seconds} of a traced run of 2 ranks exchanging one block per size
    (ring_sendrecv): the longer of the two ranks' exchange stages, from posted to done (what
    one step costs on that platform when nothing else runs; commbench's own time of such a
    run also holds the call's set-up)."""
    rec = json.loads(pathlib.Path(record).read_text())
    sizes = sorted({r["block_bytes"] for r in rec["results"]})
    out = {}
    for i, b in enumerate(sizes):
        _, stages = read_trace(trace, i * rec["reps"], None)
        out[b] = max(t1 - t0 for rows in stages.values() for _, t0, t1, ops in rows
                     if any(n == b for _, _, n in ops))
    return out


def calibrated(inter_path, intra_path):
    """Replay figures whose message times are measured (exchange_times records of an
    exchange between two nodes and inside one). The overhead per message is 0: the measured
    stage holds it already."""
    durations = {}
    for kind, path in (("inter", inter_path), ("intra", intra_path)):
        for b, t in json.loads(pathlib.Path(path).read_text())["exchange_s"].items():
            durations[(kind, int(b))] = t
    return dict(PLATFORMS["giganet"], overhead=0.0, durations=durations)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("record")
    ap.add_argument("out")
    ap.add_argument("--algorithms", help="comma list: only these (default every traced one)")
    ap.add_argument("--nodes")
    ap.add_argument("--rate", type=float, help="network link, Mbit/s")
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--single-port")
    ap.add_argument("--calibration", action="append", default=[], metavar="NAME:INTER.json:INTRA.json",
                    help="also replay without head-of-line blocking with the message times measured "
                         "alone on a model's platform (commbench records of 2 ranks exchanging one "
                         "block, on two nodes and on one), as platform NAME")
    ap.add_argument("--exchange-times", action="store_true",
                    help="instead: write {block: seconds} of one exchange from a traced run of 2 ranks")
    a = ap.parse_args(argv[1:])
    if a.exchange_times:
        pathlib.Path(a.out).write_text(json.dumps(
            {"record": pathlib.Path(a.record).name, "exchange_s": exchange_times(a.trace, a.record)}, indent=1) + "\n")
        return 0
    rec = json.loads(pathlib.Path(a.record).read_text())
    reps = rec["reps"]
    sizes = sorted({r["block_bytes"] for r in rec["results"]})
    algos = list(dict.fromkeys(r["algo"] for r in rec["results"] if r["algo"] != "native"))
    if a.algorithms:
        algos = [x for x in algos if x in a.algorithms.split(",")]
    node_of = [n for n, k in enumerate(node_sizes(a.nodes)) for _ in range(k)]
    # ports none on the Giganet figures: the step programs' own dependency chain, every
    # message at its cost alone and no port shared (what the schedule needs before any wait).
    platforms = [("giganet", ports, PLATFORMS["giganet"]) for ports in ("single", "packet", "any", "none")]
    for spec in a.calibration:
        name, inter, intra = spec.split(":")
        platforms.append((name, "any", calibrated(inter, intra)))
        platforms.append((name, "none", calibrated(inter, intra)))
    breakdown, single = [], []
    for algo in algos:
        for i, b in enumerate(sizes):
            run = i * (reps + a.warmup) + a.warmup
            with contextlib.redirect_stdout(io.StringIO()):
                row = node_report(a.trace, a.nodes, a.rate * 1e6, run, algo)
            breakdown.append(row | {"block_bytes": b})
            if a.single_port:
                _, stages = read_trace(a.trace, run, algo)
                # Programs with synchronisations (the clustered factor's hand-overs with one
                # matching per step) are also replayed with them free: the order they impose
                # without their cost.
                syncs = any(n is None for rows in stages.values() for _, _, _, ops in rows for _, _, n in ops)
                extra = [("giganet_free_handover", ports, dict(PLATFORMS["giganet"], free_syncs=True))
                         for ports in ("single", "packet")] if syncs else []
                for platform, ports, figures in platforms + extra:
                    t, busy = replay(stages, node_of, ports, **figures)
                    row = {"algorithm": algo, "block_bytes": b, "platform": platform, "ports": ports,
                           "time_s": t, "busy_s": {str(k): v for k, v in sorted(busy.items())}}
                    if platform.startswith("giganet"):
                        # The model's ties broken 5 more ways (sends delayed by 0-1 ns): how much
                        # of a cell is which message a port happened to take first.
                        row["tie_breaks_s"] = [replay(stages, node_of, ports, jitter_seed=k, **figures)[0]
                                               for k in range(1, 6)]
                    single.append(row)
    pathlib.Path(a.out).write_text(json.dumps(breakdown, indent=1) + "\n")
    if a.single_port:
        pathlib.Path(a.single_port).write_text(json.dumps(
            {"platforms": PLATFORMS,
             "nodes": rec["nodes"], "results": single}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
