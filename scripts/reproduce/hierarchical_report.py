#!/usr/bin/env python3
"""Tables and plots for scripts/reproduce/hierarchical.sh (issue: hierarchical all-to-all).

  hierarchical_report.py RESULTS_DIR OUT_MD
  hierarchical_report.py --network packet RESULTS_DIR OUT_MD

With --network packet it reads one record per experiment and algorithm
(p000_<layout>_<algo>.json, p002_<N>x<K>_<algo>.json: each its own ns-3 simulation) and
sets the gains beside the paper's and the fluid model's.

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
    for path in sorted(folder.glob("multicore_64x8_np*.json")):
        multicore_one(path, out_dir, lines)


def multicore_one(path, out_dir, lines):
    rec, t, sizes, algos, ran = load(path)
    flat = "auto"
    lines += [
        f"## Paper 002: send-aggregate, receive-distribute and leader, {rec['ranks']} ranks of 64 x 8",
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
    png = out_dir / f"hierarchical_64x8_np{rec['ranks']}.png"
    if plot(png, f"all-to-all, {rec['ranks']} ranks of 64 x 8 (SimGrid)", "block size per destination (bytes)",
            "time (simulated us)", {a: [t[(a, b)] * 1e6 for b in sizes] for a in algos}, sizes):
        lines += [f"![64 x 8]({png.name})", ""]


def percent(x):
    return "-" if x is None else f"{x:+.0%}"


def uneven_row(layout, rec, b, t, spread=None, extra=()):
    """One row of an uneven-layout table at block b: the bandwidth (bytes that cross between
    nodes / time, MB/s) of linear, clustered_factor, clustered_factor_fill and native, with
    half the spread of the repetitions when `spread` is given ('-' for one not run), the
    gains of the two clustered factor variants over linear, then the `extra` cells. Returns
    the line and the clustered_factor gain in % (nan when not run)."""
    node_sizes = [int(x) for x in rec["nodes"].split("sizes ")[1].split(",")]
    p = sum(node_sizes)
    inter = sum(n * (p - n) for n in node_sizes)  # messages that cross nodes
    bw = {a: inter * b / time / 1e6 for (a, size), time in t.items() if size == b}

    def cell(a):
        if a not in bw:
            return "-"
        return f"{bw[a]:.1f}" + (f" ±{spread[(a, b)] / 2:.0%}" if spread is not None else "")

    def gain(a):
        return bw[a] / bw["linear"] - 1 if a in bw and "linear" in bw else None

    g, gf = gain("clustered_factor"), gain("clustered_factor_fill")
    mark = "**" if spread is not None else ""
    cells = [cell(a) for a in ("linear", "clustered_factor", "clustered_factor_fill", "native")]
    cells += [f"{mark}{percent(g)}{mark}", percent(gf), *extra]
    line = f"| {layout} ({rec['nodes'].split('sizes ')[1]}) | {fmt_size(b)} | " + " | ".join(cells) + " |"
    return line, float("nan") if g is None else g * 100


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
        gains = []
        for b in sizes:
            line, gain = uneven_row(layout, rec, b, t)
            lines.append(line)
            gains.append(gain)
        series[layout] = gains
        all_sizes = sizes
    lines.append("")
    png = out_dir / "hierarchical_uneven.png"
    if plot(png, "clustered_factor vs linear, 6 x 4 (SimGrid)", "block size (bytes)",
            "bandwidth gain over linear (%)", series, all_sizes, logy=False):
        lines += [f"![uneven layouts]({png.name})", ""]


ALGO_ORDER = ["auto", "linear", "pairwise", "bruck", "leader", "send_aggregate", "recv_distribute",
              "clustered_factor", "clustered_factor_fill", "native"]


def experiment_of(stem, prefix):
    """'p000_organ_pipe_18_clustered_factor' -> 'organ_pipe_18'."""
    stem = stem.removeprefix(prefix)
    for algo in sorted(ALGO_ORDER, key=len, reverse=True):
        if stem.endswith("_" + algo):
            return stem[: -len(algo) - 1]
    return stem


def load_split(folder, prefix):
    """Merges the per-algorithm records prefix_<algo>.json: (first record, times, sizes,
    algos, ran, spread) with spread[(algo, b)] = (max - min) / median of the repetitions."""
    t, ran, spread, algos, sizes, first = {}, {}, {}, [], set(), None
    for path in sorted(folder.glob(f"{prefix}_*.json")):
        if experiment_of(path.stem, prefix.split("_")[0] + "_") != prefix.split("_", 1)[1]:
            continue
        rec = json.loads(path.read_text())
        first = first or rec
        for r in rec["results"]:
            key = (r["algo"], r["block_bytes"])
            t[key] = r["median_s"]
            ts = r.get("times_s") or [r["median_s"]]
            spread[key] = (max(ts) - min(ts)) / r["median_s"] if r["median_s"] > 0 else 0
            ran[r["algo"]] = r["ran"]
            sizes.add(r["block_bytes"])
            if r["algo"] not in algos:
                algos.append(r["algo"])
    algos.sort(key=lambda a: ALGO_ORDER.index(a) if a in ALGO_ORDER else len(ALGO_ORDER))
    return first, t, sorted(sizes), algos, ran, spread


def packet_main(folder, out):
    lines = ["# Hierarchical all-to-all on packets: papers 000 and 002 on Ethernet with ns-3's TCP", "",
             "Written by `scripts/reproduce/hierarchical.sh --network packet` (the discussion is in "
             "`docs/results/hierarchical.md`). SimGrid 3.32 with its ns-3 binding "
             "(`scripts/simulate.sh --network packet`, README \"Packet-level model\"): one switch, "
             "100 Mbit/s network links of 10 us; every node a router of its own with one host per "
             "core on a memory link (`topo2platform.py --cores`), so messages inside a node also "
             "cost TCP over the memory links and messages leaving it share the node's one network "
             "link. Every algorithm runs in a simulation of its own, 3 repetitions, median of the "
             "slowest rank; ± is half the spread of the 3.", ""]
    layouts = sorted({experiment_of(p.stem, "p000_") for p in folder.glob("p000_*.json")})
    if layouts:
        lines += [
            "## Paper 000, section 4: clustered factor against the trivial algorithm, 6 x up to 4",
            "",
            "Memory links of 300 Mbit/s against 100 Mbit/s network links: the paper's Giganet "
            "cluster's 300 MB/s memory bus to 105 MB/s NIC. Bandwidth = bytes that cross between "
            "nodes / time (MB/s); gain = clustered_factor bandwidth / linear bandwidth - 1. The "
            "paper: never worse, 10-20 % more when the number of processes per node varies. The "
            "fluid column is the same gain in SimGrid's flow model on the Giganet-like platform "
            "(docs/results/hierarchical/uneven_<layout>.json).",
            "",
            "| layout | block | linear MB/s | clustered_factor MB/s | clustered_factor_fill MB/s | native MB/s "
            "| gain | fill gain | fluid gain |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        series, all_sizes = {}, None
        for layout in layouts:
            rec, t, sizes, algos, ran, spread = load_split(folder, f"p000_{layout}")
            fluid_path = pathlib.Path("docs/results/hierarchical") / f"uneven_{layout}.json"
            fluid = load(fluid_path)[1] if fluid_path.exists() else {}
            gains = []
            for b in sizes:
                fg = (fluid[("linear", b)] / fluid[("clustered_factor", b)] - 1
                      if ("linear", b) in fluid and ("clustered_factor", b) in fluid else None)
                line, gain = uneven_row(layout, rec, b, t, spread, extra=[percent(fg)])
                lines.append(line)
                gains.append(gain)
            series[layout] = gains
            all_sizes = sizes
        lines.append("")
        png = out.parent / "hierarchical_packet_uneven.png"
        if plot(png, "clustered_factor vs linear, 6 x 4 (ns-3 TCP)", "block size (bytes)",
                "bandwidth gain over linear (%)", series, all_sizes, logy=False):
            lines += [f"![uneven layouts on packets]({png.name})", ""]
    shapes = sorted({experiment_of(p.stem, "p002_") for p in folder.glob("p002_*.json")})
    for shape in shapes:
        rec, t, sizes, algos, ran, spread = load_split(folder, f"p002_{shape}")
        n, k = shape.split("x")
        flat = [a for a in ("auto", "linear", "pairwise", "bruck") if a in algos]
        lines += [
            f"## Paper 002 on packets: leader, send-aggregate, receive-distribute on {n} x {k}",
            "",
            "Memory links of 1 Gbit/s. Times in ms (slowest rank, median of 3). `best flat` is the "
            "fastest of " + ", ".join(flat) + " at that size; the gain is best flat time / SA time - 1 "
            "(paper 002 on InfiniPath: SA 55 % faster than the flat algorithm at 512 B on 512 ranks, "
            "aggregation better up to 2 KiB). `auto` ran: "
            + ", ".join(sorted({ran.get('auto', '?')})) + ".",
            "",
            "| block | " + " | ".join(algos) + " | best flat | SA vs best flat | RD vs SA |",
            "|---|" + "---|" * (len(algos) + 3),
        ]
        series = {a: [] for a in algos}
        for b in sizes:
            cells = [f"{t[(a, b)] * 1e3:.2f}" if (a, b) in t else "-" for a in algos]
            for a in algos:
                series[a].append(t.get((a, b), float("nan")) * 1e3)
            best = min(flat, key=lambda a: t.get((a, b), 1e9))
            sa, rd = t.get(("send_aggregate", b)), t.get(("recv_distribute", b))
            g = t[(best, b)] / sa - 1 if sa else None
            r = rd / sa - 1 if sa and rd else None
            lines.append(f"| {fmt_size(b)} | " + " | ".join(cells) + f" | {best} | "
                         f"**{'-' if g is None else f'{g:+.0%}'}** | {'-' if r is None else f'{r:+.0%}'} |")
        lines.append("")
        png = out.parent / f"hierarchical_packet_{shape}.png"
        if plot(png, f"paper 002 on packets, {n} x {k} (ns-3 TCP)", "block size (bytes)", "time (ms)",
                series, sizes):
            lines += [f"![paper 002 on packets {shape}]({png.name})", ""]
    out.write_text("\n".join(lines) + "\n")
    return 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--network" and sys.argv[2] == "packet":
        return packet_main(pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4]))
    if len(sys.argv) != 3:
        sys.exit("usage: hierarchical_report.py [--network packet] RESULTS_DIR OUT_MD")
    folder, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    lines = ["# Hierarchical all-to-all: simulated reproduction", "",
             "Written by `scripts/reproduce/hierarchical.sh`; do not edit by hand "
             "(the discussion is in `docs/results/hierarchical.md`).", ""]
    multicore(folder, out.parent, lines)
    uneven(folder, out.parent, lines)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
