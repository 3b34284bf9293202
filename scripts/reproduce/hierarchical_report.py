#!/usr/bin/env python3
"""Tables and plots for scripts/reproduce/hierarchical.sh (issue: hierarchical all-to-all).

  hierarchical_report.py RESULTS_DIR OUT_MD

Reads the commbench JSON records the script wrote (multicore_64x8.json and
uneven_<layout>.json) and writes a Markdown report with the paper's claims beside the
simulated numbers, plus one PNG per experiment next to OUT_MD (when matplotlib exists).
"""
import json
import pathlib
import sys


def load(path):
    rec = json.loads(path.read_text())
    times = {}
    for r in rec["results"]:
        times[(r["algo"], r["block_bytes"])] = r["median_s"]
    sizes = sorted({r["block_bytes"] for r in rec["results"]})
    algos = list(dict.fromkeys(r["algo"] for r in rec["results"]))
    ran = {r["algo"]: r["ran"] for r in rec["results"]}
    return rec, times, sizes, algos, ran


def fmt_size(b):
    return f"{b // 1024} KiB" if b >= 1024 and b % 1024 == 0 else f"{b} B"


def plot(path, title, xlabel, ylabel, series, sizes, logy=True):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, ys in series.items():
        ax.plot(sizes, ys, marker="o", label=name)
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def multicore(folder, out_dir, lines):
    path = folder / "multicore_64x8.json"
    if not path.exists():
        return
    rec, t, sizes, algos, ran = load(path)
    flat = "auto"
    lines += [
        "## Paper 002: send-aggregate, receive-distribute and leader on 64 x 8",
        "",
        f"SimGrid platform `inputs/platforms/cluster64x8.xml`, {rec['ranks']} ranks "
        f"({rec['nodes']}). `auto` is the flat size-based choice of MVAPICH-PSM that the "
        "paper calls `orig` (Bruck up to 256 B, Isend/Irecv up to 32 KiB, pairwise); "
        "the hierarchical schemes use the same choice for their inter-node step. Times are "
        "simulated microseconds. The reduction column is 1 - SA / flat (the paper reports "
        "55 % at 512 B).",
        "",
        "| block | " + " | ".join(algos) + " | SA vs flat | RD vs flat |",
        "|---|" + "---|" * (len(algos) + 2),
    ]
    for b in sizes:
        cells = [f"{t[(a, b)] * 1e6:.1f}" for a in algos]
        sa = 1 - t[("send_aggregate", b)] / t[(flat, b)]
        rd = 1 - t[("recv_distribute", b)] / t[(flat, b)]
        lines.append(f"| {fmt_size(b)} | " + " | ".join(cells) + f" | {sa:+.0%} | {rd:+.0%} |")
    lines.append("")
    png = out_dir / "hierarchical_64x8.png"
    if plot(png, "all-to-all on 64 x 8 (SimGrid)", "block size per destination (bytes)",
            "time (simulated us)", {a: [t[(a, b)] * 1e6 for b in sizes] for a in algos}, sizes):
        lines += [f"![64 x 8]({png.name})", ""]


def uneven(folder, out_dir, lines):
    paths = sorted(folder.glob("uneven_*.json"))
    if not paths:
        return
    lines += [
        "## Paper 000: clustered factor against the trivial algorithm on 6 x 4, uneven nodes",
        "",
        "SimGrid platform `inputs/platforms/giganet6x4.xml`; the layouts of "
        "`inputs/nodes/`. Bandwidth = bytes that cross between nodes / time, in MB/s. "
        "The gain column is clustered_factor bandwidth / linear bandwidth - 1 (the paper: "
        "never worse, at least +10 % and up to +20 % when node sizes vary). "
        "`clustered_factor_fill` is the section 4 improvement.",
        "",
        "| layout | block | linear MB/s | clustered_factor MB/s | clustered_factor_fill MB/s | native MB/s | gain | fill gain |",
        "|---|---|---|---|---|---|---|---|",
    ]
    series, all_sizes = {}, None
    for path in paths:
        rec, t, sizes, algos, ran = load(path)
        layout = path.stem.removeprefix("uneven_")
        node_sizes = [int(x) for x in rec["nodes"].split("sizes ")[1].split(",")]
        p = sum(node_sizes)
        inter = sum(n * (p - n) for n in node_sizes)  # messages that cross nodes
        gains = []
        for b in sizes:
            bw = {a: inter * b / t[(a, b)] / 1e6 for a in algos}
            g = bw["clustered_factor"] / bw["linear"] - 1
            gf = bw["clustered_factor_fill"] / bw["linear"] - 1
            gains.append(g * 100)
            lines.append(f"| {layout} ({rec['nodes'].split('sizes ')[1]}) | {fmt_size(b)} | "
                         f"{bw['linear']:.1f} | {bw['clustered_factor']:.1f} | "
                         f"{bw['clustered_factor_fill']:.1f} | {bw['native']:.1f} | {g:+.0%} | {gf:+.0%} |")
        series[layout] = gains
        all_sizes = sizes
    lines.append("")
    png = out_dir / "hierarchical_uneven.png"
    if plot(png, "clustered_factor vs linear, 6 x 4 (SimGrid)", "block size (bytes)",
            "bandwidth gain over linear (%)", series, all_sizes, logy=False):
        lines += [f"![uneven layouts]({png.name})", ""]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: hierarchical_report.py RESULTS_DIR OUT_MD")
    folder, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    lines = ["# Hierarchical all-to-all: simulated reproduction", "",
             "Written by `scripts/reproduce/hierarchical.sh`; do not edit by hand "
             "(the discussion is in `docs/results/hierarchical.md`).", ""]
    multicore(folder, out.parent, lines)
    uneven(folder, out.parent, lines)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
