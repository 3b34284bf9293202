#!/usr/bin/env python3
"""Turns the stage traces of one commbench run on multi-core nodes (paper 000's layouts)
into the records the result pages are written from.

    hierarchical_traces.py TRACE_DIR RECORD.json --nodes SPEC --rate MBPS OUT.json
        [--warmup W] [--single-port OUT2.json]

RECORD.json is the commbench record of the run (its algorithms, block sizes and
repetitions say which traced run is which: per algorithm, every block size in order,
W warm-up runs and then the repetitions). OUT.json gets, for every traced algorithm and
block size, stage_trace_report.py's node breakdown of the first repetition. With
--single-port, OUT2.json gets hierarchical_single_port.py's replay of the same programs
on single-ported nodes, with head-of-line blocking (ports single) and without (any).
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


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("record")
    ap.add_argument("out")
    ap.add_argument("--nodes", required=True)
    ap.add_argument("--rate", type=float, required=True, help="network link, Mbit/s")
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--single-port")
    a = ap.parse_args(argv[1:])
    rec = json.loads(pathlib.Path(a.record).read_text())
    reps = rec["reps"]
    sizes = sorted({r["block_bytes"] for r in rec["results"]})
    algos = list(dict.fromkeys(r["algo"] for r in rec["results"] if r["algo"] != "native"))
    node_of = [n for n, k in enumerate(node_sizes(a.nodes)) for _ in range(k)]
    breakdown, single = [], []
    for algo in algos:
        for i, b in enumerate(sizes):
            run = i * (reps + a.warmup) + a.warmup
            with contextlib.redirect_stdout(io.StringIO()):
                row = node_report(a.trace, a.nodes, a.rate * 1e6, run, algo)
            breakdown.append(row | {"block_bytes": b})
            if a.single_port:
                _, stages = read_trace(a.trace, run, algo)
                for ports in ("single", "any"):
                    t, busy = replay(stages, node_of, ports)
                    single.append({"algorithm": algo, "block_bytes": b, "ports": ports, "time_s": t,
                                   "busy_s": {str(k): v for k, v in sorted(busy.items())}})
    pathlib.Path(a.out).write_text(json.dumps(breakdown, indent=1) + "\n")
    if a.single_port:
        pathlib.Path(a.single_port).write_text(json.dumps(
            {"model": "hierarchical_single_port.py defaults (inputs/platforms/giganet6x4.xml's figures)",
             "nodes": rec["nodes"], "results": single}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
