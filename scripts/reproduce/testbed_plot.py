#!/usr/bin/env python3
"""PNG plots of the testbed runs of paper 003 (scripts/reproduce/testbed_ethernet.sh):
fraction of the peak bound against block size per algorithm, with the paper's three
routines and SimGrid's tree_scheduled alongside (fractions compare across link rates).

    testbed_plot.py RESULTS_DIR OUT_DIR      (needs matplotlib: /usr/bin/python3)
"""
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from ethernet_report import PAPER, load_of  # noqa: E402
from testbed_report import ALGOS, TOPOLOGIES, latest_run, rate_mbit, simgrid_fractions  # noqa: E402


def main(folder, out):
    folder, out = pathlib.Path(folder), pathlib.Path(out)
    sim = simgrid_fractions(pathlib.Path("docs/results/ethernet.md"))
    for topo in TOPOLOGIES:
        path, rate = latest_run(folder, topo)
        if path is None:
            continue
        m, load = load_of(f"inputs/topologies/{topo}.topo")
        bound = m * (m - 1) * rate_mbit(rate) / load
        pbound = m * (m - 1) * 100.0 / load
        res = json.loads(path.read_text())["results"]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for algo in ALGOS:
            pts = sorted((r["block_bytes"] // 1024, m * (m - 1) * r["block_bytes"] * 8 / r["median_s"] / 1e6 / bound)
                         for r in res if r["algo"] == algo)
            if pts:
                ax.plot(*zip(*pts), marker="o", label=f"testbed: {algo}")
        for i, name in enumerate(("LAM", "MPICH", "generated") if topo in PAPER else ()):
            ks = sorted(PAPER[topo])
            ax.plot(ks, [m * (m - 1) * k * 1024 * 8 / (PAPER[topo][k][i] / 1e3) / 1e6 / pbound for k in ks],
                    "k" + ("--", ":", "-.")[i], marker="s", markersize=3, label=f"paper: {name}")
        s = sim.get(topo, {})
        ks = sorted(k for (a, k) in s if a == "tree_scheduled")
        if ks:
            ax.plot(ks, [s[("tree_scheduled", k)] / pbound for k in ks], color="grey", linestyle=":",
                    label="SimGrid: tree_scheduled")
        ax.axhline(1.0, color="red", label="peak bound")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.1)
        ax.set_xlabel("block size (KiB)")
        ax.set_ylabel("aggregate throughput / peak bound")
        ax.set_title(f"Paper 003 {topo}, {m} machines, emulated links of {rate}")
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(out / f"testbed_ethernet_{topo}.png", dpi=110)
        print(f"wrote {out / f'testbed_ethernet_{topo}.png'}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
