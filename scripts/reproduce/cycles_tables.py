#!/usr/bin/env python3
"""Tables 6, 15 and 18 of paper 004, reproduced from the SimGrid runs of cycles.sh.

  cycles_tables.py RESULTS_DIR [PLOT_DIR]

RESULTS_DIR holds commbench JSON records named
  allgather_d<D>_<reorder>.json       (--op allgather, --reorder direct | staged)
  reduce_scatter_d<D>.json            (--op reduce_scatter)
Times are simulated (SimGrid); each is the minimum over the repetitions of the slowest
rank's time: the simulated network is deterministic, and only the local work charged
with the reordering pass (its CPU time, libcomm/sim.hpp) varies a little from run to run.
Prints, per block size:
  Table 6 style:  speed-up of ring and d_cycles over send_spread (all-to-all broadcast):
                  data motion only (direct placement, no local work charged), and
                  with the reordering pass (staged) and its local work charged;
  the local work charged per call (slot set-up and reordering pass, slowest rank);
  Table 15 style: speed-up of ring and d_cycles over reduce_spread (all-to-all reduction);
  Table 18 style: data motion rate per node, MB/s = bytes a node receives ((P-1) blocks
                  for the broadcast) / time;
and the ratio d_cycles / ring (speed) with reordering at the largest d. With PLOT_DIR,
writes cycles_broadcast.png, cycles_reduction.png and cycles_rate.png there (solid: data
motion only; dashed: with the reordering pass).
"""
import json
import pathlib
import re
import sys


def load(folder):
    """{(op, reorder, d): {(algo, block): min_s}}, {(op, reorder, d): {(algo, block): charged_s}}"""
    runs, charged = {}, {}
    for path in sorted(pathlib.Path(folder).glob("*.json")):
        m = re.fullmatch(r"(allgather|reduce_scatter)_d(\d+)(?:_(direct|staged))?", path.stem)
        if not m:
            continue
        rec = json.loads(path.read_text())
        if rec.get("validation") != "PASS":
            print(f"warning: {path.name}: validation {rec.get('validation')}", file=sys.stderr)
        key = (m.group(1), m.group(3) or "", int(m.group(2)))
        ok = [r for r in rec.get("results", []) if r["validation"] == "PASS"]
        runs[key] = {(r["algo"], r["block_bytes"]): r["min_s"] for r in ok}
        charged[key] = {(r["algo"], r["block_bytes"]): min(r["charged_local_work_s"])
                        for r in ok if r.get("charged_local_work_s")}
    return runs, charged


def speedup(base, t):
    return base / t if base and t else None


def fmt(x, width=9, prec=2):
    return f"{x:>{width}.{prec}f}" if x is not None else f"{'-':>{width}}"


def main(folder, plot_dir=None):
    runs, charged = load(folder)
    if not runs:
        print(f"cycles_tables: no records in {folder}", file=sys.stderr)
        return 1
    ds = sorted({d for (_, _, d) in runs})
    blocks = sorted({b for v in runs.values() for (_, b) in v})
    series = {}  # for the plots
    summary = {}
    for block in blocks:
        words = block // 8
        print(f"\n=== {block} B per node = {words} 64-bit words (SimGrid binary d-cube, simulated time)")
        print("\nTable 6 style: all-to-all broadcast, speed-up over send_spread (= 1)")
        print(f"{'nodes':>6} {'d':>3} | {'ring':>9} {'d_cycles':>9} {'d_cyc_im':>9} | {'ring':>9} {'d_cycles':>9}"
              f" {'d_cyc_im':>9} | {'dcyc/ring':>9} {'dcyc/ring':>9}")
        print(f"{'':>6} {'':>3} | {'data motion only':^29} | {'+ reorder pass, local work':^29} | {'direct':>9} {'staged':>9}")
        for d in ds:
            row = []
            for reorder in ("direct", "staged"):
                r = runs.get(("allgather", reorder, d), {})
                base = r.get(("send_spread", block))
                sp = [speedup(base, r.get((a, block))) for a in ("ring", "d_cycles", "d_cycles_im")]
                row += sp
                for a, s in zip(("ring", "d_cycles", "d_cycles_im"), sp):
                    series.setdefault(("bcast", reorder, a, block), []).append((1 << d, s))
            ratios = []
            for reorder in ("direct", "staged"):
                r = runs.get(("allgather", reorder, d), {})
                ratios.append(speedup(r.get(("ring", block)), r.get(("d_cycles", block))))
            summary[(block, d)] = ratios
            print(f"{1 << d:>6} {d:>3} | {fmt(row[0])} {fmt(row[1])} {fmt(row[2])} | {fmt(row[3])} {fmt(row[4])}"
                  f" {fmt(row[5])} | {fmt(ratios[0])} {fmt(ratios[1])}")
        print("(d_cyc_im has no data-motion-only run: its moved indices always need the reordering pass)")
        print("\nLocal work charged with the reordering pass, us per call (slowest rank, min over reps),"
              "\nand its share of the d_cycles time")
        print(f"{'nodes':>6} {'d':>3} | {'ring':>9} {'d_cycles':>9} {'d_cyc_im':>9} | {'share':>7}")
        for d in ds:
            key = ("allgather", "staged", d)
            cw = [charged.get(key, {}).get((a, block)) for a in ("ring", "d_cycles", "d_cycles_im")]
            t = runs.get(key, {}).get(("d_cycles", block))
            share = f"{100 * cw[1] / t:>6.1f}%" if cw[1] is not None and t else f"{'-':>7}"
            print(f"{1 << d:>6} {d:>3} | " + " ".join(fmt(x * 1e6 if x is not None else None, 9, 1) for x in cw)
                  + f" | {share}")
        print("\nTable 15 style: all-to-all reduction, speed-up over reduce_spread (= 1), data motion only")
        print(f"{'nodes':>6} {'d':>3} | {'ring':>9} {'d_cycles':>9} | {'dcyc/ring':>9}")
        for d in ds:
            r = runs.get(("reduce_scatter", "", d), {})
            base = r.get(("reduce_spread", block))
            sp = [speedup(base, r.get((a, block))) for a in ("ring", "d_cycles")]
            for a, s in zip(("ring", "d_cycles"), sp):
                series.setdefault(("reduce", "", a, block), []).append((1 << d, s))
            print(f"{1 << d:>6} {d:>3} | {fmt(sp[0])} {fmt(sp[1])} | "
                  f"{fmt(speedup(r.get(('ring', block)), r.get(('d_cycles', block))))}")
        print("\nTable 18 style: all-to-all broadcast data motion rate per node, MB/s")
        algos = ("send_spread", "ring", "d_cycles", "d_cycles_im")
        print(f"{'nodes':>6} | " + " ".join(f"{a:>11}" for a in algos) + " | " +
              " ".join(f"{a + '+r':>13}" for a in algos[1:]))
        for d in ds:
            p = 1 << d
            moved = (p - 1) * block
            cells = []
            for reorder, names in (("direct", algos), ("staged", algos[1:])):
                r = runs.get(("allgather", reorder, d), {})
                for a in names:
                    t = r.get((a, block))
                    rate = moved / t / 1e6 if t else None
                    cells.append(fmt(rate, 11 if reorder == "direct" else 13, 1))
                    series.setdefault(("rate", reorder, a, block), []).append((p, rate))
            print(f"{p:>6} | " + " ".join(cells[:4]) + " | " + " ".join(cells[4:]))
    last = ds[-1]
    for block in blocks:
        direct, staged = summary.get((block, last), (None, None))
        print(f"\nd = {last}, {block} B per node: d_cycles / ring speed = {fmt(staged, 0)} with reordering "
              f"and local work, {fmt(direct, 0)} data motion only; d = {last} cycles bound: {last}")
    if plot_dir:
        plot(series, blocks, pathlib.Path(plot_dir))
    return 0


def plot(series, blocks, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out.mkdir(parents=True, exist_ok=True)
    block = blocks[-1]
    specs = [
        ("cycles_broadcast.png", "All-to-all broadcast: speed-up over send_spread",
         [("bcast", r, a) for r in ("direct", "staged") for a in ("ring", "d_cycles", "d_cycles_im")],
         "speed-up"),
        ("cycles_reduction.png", "All-to-all reduction: speed-up over reduce_spread",
         [("reduce", "", a) for a in ("ring", "d_cycles")], "speed-up"),
        ("cycles_rate.png", "All-to-all broadcast: data motion rate per node",
         [("rate", "direct", a) for a in ("send_spread", "ring", "d_cycles", "d_cycles_im")] +
         [("rate", "staged", a) for a in ("ring", "d_cycles", "d_cycles_im")],
         "MB/s per node"),
    ]
    for name, title, keys, ylabel in specs:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for kind, reorder, algo in keys:
            pts = [(p, v) for p, v in series.get((kind, reorder, algo, block), []) if v is not None]
            if not pts:
                continue
            label = algo + ({"direct": " (data motion)", "staged": " (with reorder)"}.get(reorder, ""))
            ax.plot([p for p, _ in pts], [v for _, v in pts], marker="o",
                    linestyle="--" if reorder == "staged" else "-", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes (binary d-cube, SimGrid)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}\n{block} B ({block // 8} doubles) per node, paper 004")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        print(f"wrote {out / name}")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
