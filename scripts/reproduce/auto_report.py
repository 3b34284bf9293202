#!/usr/bin/env python3
"""Auto against the best single algorithm, from commbench JSON records.

usage: auto_report.py LABEL=RUN.json [LABEL=RUN.json ...]

Each record must time `auto` next to the other algorithms (commbench --algo all, or a
list holding auto). For every block size it prints the best single algorithm (the lowest
median among everything but auto, native included), what auto ran, auto / best,
auto / native and auto / direct (auto against the algorithm it ran, called by name in the
same run: the cost of deciding, "-" when that algorithm was not timed), then a summary
line per record. Prints Markdown.
"""
import json
import sys


def size(b):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div} {unit}"
    return f"{b} B"


def report(label, path):
    with open(path) as f:
        rec = json.load(f)
    by_size = {}
    for r in rec["results"]:
        by_size.setdefault(r["block_bytes"], []).append(r)
    nodes = rec["nodes"] if len(rec["nodes"]) < 40 else rec["nodes"].split(":")[0]
    print(f"\n### {label}: {rec['op']}, {rec['ranks']} ranks ({nodes}), "
          f"{rec['reps']} reps, validation {rec['validation']}\n")
    print("| block | best single | best us | auto ran | auto us | auto / best | auto / native "
          "| auto / direct |")
    print("|---|---|---:|---|---:|---:|---:|---:|")
    ratios = []
    for b in sorted(by_size):
        rows = by_size[b]
        auto = [r for r in rows if r["algo"].split("/")[0] == "auto"]
        if not auto:
            sys.exit(f"{path}: no auto row at {b} B")
        auto = auto[0]
        # A fallback (pairwise -> ring_sendrecv) is not the algorithm it names.
        singles = [r for r in rows if r["algo"].split("/")[0] != "auto" and r["ran"] == r["algo"]]
        best = min(singles, key=lambda r: r["median_s"])
        native = [r for r in rows if r["algo"] == "native"][0]
        direct = [r for r in rows if r["algo"] == auto["ran"]]
        ratio = auto["median_s"] / best["median_s"]
        ratios.append(ratio)
        print(f"| {size(b)} | {best['algo']} | {best['median_s'] * 1e6:.1f} | {auto['ran']} | "
              f"{auto['median_s'] * 1e6:.1f} | {ratio:.2f} | {auto['median_s'] / native['median_s']:.2f} | "
              + (f"{auto['median_s'] / direct[0]['median_s']:.2f} |" if direct else "- |"))
    within = sum(1 for r in ratios if r <= 1.05)
    print(f"\nauto within 5 % of the best at {within} of {len(ratios)} sizes; "
          f"worst auto / best {max(ratios):.2f}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for arg in sys.argv[1:]:
        label, _, path = arg.partition("=")
        report(label, path)


if __name__ == "__main__":
    main()
