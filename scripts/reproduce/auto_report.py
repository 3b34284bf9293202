#!/usr/bin/env python3
"""Auto against the best single algorithm, from commbench JSON records.

usage: auto_report.py LABEL=RUN.json[+RUN2.json...][:TABLE.tune] [...]

Each record must time `auto` next to the other algorithms (commbench --algo all, or a
list holding auto). For every block size it prints the best single algorithm (the lowest
median among everything but auto, native included), the best libcomm algorithm / native,
what auto ran, auto / best,
auto / native and auto / direct (auto against the algorithm it ran, called by name in the
same run: the cost of deciding, "-" when that algorithm was not timed), then a summary
line per record. Prints Markdown. Several runs of one command joined by '+' count as one
record: each time is the median of the runs' medians.

With TABLE.tune (the table auto read), a column says which sizes tune measured: the
--sizes of its "# command:" lines and the sizes its --refine added for this rank count.
At a measured size a deterministic simulation makes auto / best 1 by construction, so the
summary also counts the sizes tune never measured.
"""
import json
import re
import statistics
import sys


def parse_size(text):
    m = re.fullmatch(r"(\d+)([KMG]?)(i?B)?", text.strip())
    if not m:
        sys.exit(f"cannot read size '{text}'")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def tuned_sizes(table, op, ranks):
    """Sizes the table's tune runs measured for this operation at this rank count: the
    sizes of its per-size median comments (whole bytes) and of its --refine comment. Tables
    written before tune printed medians name them only in the command's --sizes."""
    sizes, from_command, section = set(), set(), None
    units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    with open(table) as f:
        for line in f:
            m = re.search(r"--sizes (\S+)", line) if line.startswith("# command:") else None
            if m:
                from_command.update(parse_size(t) for t in m.group(1).split(","))
            m = re.match(r"# (\w+): (\d+) ranks", line)
            if m:
                section = (m.group(1), int(m.group(2)))
            if section != (op, ranks):
                continue
            m = re.match(r"# refined .*bytes:(.*)", line)
            if m:
                sizes.update(int(t) for t in m.group(1).split())
            m = re.match(r"#\s+([\d.]+) (B|KiB|MiB|GiB)\s+\w+\s+\|", line)
            if m and float(m.group(1)) * units[m.group(2)] == round(float(m.group(1)) * units[m.group(2)]):
                sizes.add(round(float(m.group(1)) * units[m.group(2)]))
    return sizes or from_command


def size(b):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div} {unit}"
    return f"{b} B"


def load_runs(paths):
    """One record from several runs of the same commbench command: each algorithm's time
    at a size is the median of its per-run medians (real machines are noisy; a simulation
    is one run)."""
    recs = []
    for path in paths:
        with open(path) as f:
            recs.append(json.load(f))
    rec = dict(recs[0])
    times = {}
    for r in recs:
        if (r["op"], r["ranks"]) != (rec["op"], rec["ranks"]):
            sys.exit(f"{paths}: the runs are not of one operation and rank count")
        for row in r["results"]:
            times.setdefault((row["block_bytes"], row["algo"]), []).append(row)
    rec["results"] = []
    for rows in times.values():
        merged = dict(rows[0])
        merged["median_s"] = statistics.median(x["median_s"] for x in rows)
        if any(x["ran"] != rows[0]["ran"] for x in rows):  # auto chose differently between runs
            merged["ran"] = "/".join(sorted({x["ran"] for x in rows}))
        rec["results"].append(merged)
    rec["runs"] = len(recs)
    if any(r["validation"] != rec["validation"] for r in recs):
        rec["validation"] = "/".join(r["validation"] for r in recs)
    return rec


def report(label, path, table=None):
    rec = load_runs(path.split("+"))
    tuned = tuned_sizes(table, rec["op"], rec["ranks"]) if table else None
    if not tuned:  # a table without comments names none
        tuned = None
    by_size = {}
    for r in rec["results"]:
        by_size.setdefault(r["block_bytes"], []).append(r)
    nodes = rec["nodes"] if len(rec["nodes"]) < 40 else rec["nodes"].split(":")[0]
    print(f"\n### {label}: {rec['op']}, {rec['ranks']} ranks ({nodes}), "
          f"{rec['reps']} reps" + (f" x {rec['runs']} runs (median of the run medians)" if rec["runs"] > 1 else "")
          + f", validation {rec['validation']}\n")
    print("| block | best single | best us | best libcomm / native | auto ran | auto us | auto / best "
          "| auto / native | auto / direct |" + (" tuned |" if tuned is not None else ""))
    print("|---|---|---:|---:|---|---:|---:|---:|---:|" + ("---|" if tuned is not None else ""))
    ratios, untuned, libcomm_best = [], [], []
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
        ours = min((r for r in singles if r["algo"].split("/")[0] != "native"), key=lambda r: r["median_s"])
        libcomm_best.append((b, ours["median_s"] / native["median_s"]))
        # "direct/b" (alltoallv's mode suffix) is the algorithm auto/b ran as "direct".
        direct = [r for r in rows if r["algo"] == auto["ran"] or r["algo"].split("/")[0] == auto["ran"]]
        ratio = auto["median_s"] / best["median_s"]
        ratios.append(ratio)
        if tuned is not None and b not in tuned:
            untuned.append(ratio)
        print(f"| {size(b)} | {best['algo']} | {best['median_s'] * 1e6:.1f} | "
              f"{ours['median_s'] / native['median_s']:.2f} ({ours['algo']}) | {auto['ran']} | "
              f"{auto['median_s'] * 1e6:.1f} | {ratio:.2f} | {auto['median_s'] / native['median_s']:.2f} | "
              + (f"{auto['median_s'] / direct[0]['median_s']:.2f} |" if direct else "- |")
              + ((" yes |" if b in tuned else " no |") if tuned is not None else ""))
    # The bar of the one-executor issue: the best libcomm algorithm at most 1.00x native from
    # 64 KiB and 1.05x below.
    met = sum(1 for b, r in libcomm_best if r <= (1.00 if b >= 65536 else 1.05))
    print(f"\nbest libcomm algorithm <= 1.05x native below 64 KiB and <= 1.00x from 64 KiB at {met} of "
          f"{len(libcomm_best)} sizes; worst {max(r for _, r in libcomm_best):.2f}")
    within = sum(1 for r in ratios if r <= 1.05)
    print(f"auto within 5 % of the best at {within} of {len(ratios)} sizes; "
          f"worst auto / best {max(ratios):.2f}")
    if untuned:
        print(f"at the {len(untuned)} sizes tune did not measure: within 5 % at "
              f"{sum(1 for r in untuned if r <= 1.05)}; worst {max(untuned):.2f}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for arg in sys.argv[1:]:
        label, _, rest = arg.partition("=")
        path, _, table = rest.partition(":")
        report(label, path, table or None)


if __name__ == "__main__":
    main()
