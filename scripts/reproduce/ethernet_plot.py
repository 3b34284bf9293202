#!/usr/bin/env python3
"""PNG plots of the SimGrid Ethernet runs (aggregate throughput against block size, the
peak bound and the paper's generated routine alongside), like Figs. 6-8 (b) of paper 003.

    ethernet_plot.py RESULTS_DIR OUT_DIR [--network packet]     (needs matplotlib)

With --network packet it plots the per-algorithm records of the ns-3 runs
({topo}_packet_{algo}.json) into ethernet_packet_{topo}.png.
"""
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from ethernet_report import PAPER, aggregate_mbps, load_of, network_arg  # noqa: E402

SHOW = ["tree_scheduled", "tree_scheduled_barrier", "linear", "ring", "ring_sendrecv", "pairwise", "native"]


def packet_record(folder, topo):
    """The per-algorithm records of a packet-level run merged into one."""
    results = []
    for algo in SHOW:
        path = folder / f"{topo}_packet_{algo}.json"
        if path.exists():
            results += json.loads(path.read_text())["results"]
    return {"results": results} if results else None


def main(folder, out, network="fluid", suffix=""):
    folder, out = pathlib.Path(folder), pathlib.Path(out)
    if network == "packet" and not suffix:
        # the runs under the paper's conditions (ethernet.sh --queue N) sit in queueN/
        for sub in sorted(folder.glob("queue[0-9]*")):
            main(sub, out, network, f"_{sub.name}")
    for topo in ("fig5a", "fig5b", "fig5c"):
        if network == "packet":
            rec = packet_record(folder, topo)
            if rec is None:
                continue
        else:
            lib = folder / f"{topo}_libcomm.json"
            if not lib.exists():
                continue
            rec = json.loads(lib.read_text())
        m, load = load_of(f"inputs/topologies/{topo}.topo")
        fig, ax = plt.subplots(figsize=(7, 4.5))
        sizes = sorted({r["block_bytes"] for r in rec["results"]})
        for algo in SHOW:
            pts = [(r["block_bytes"], aggregate_mbps(m, r["block_bytes"], r["median_s"]))
                   for r in rec["results"] if r["algo"] == algo]
            if pts:
                ax.plot([p[0] // 1024 for p in pts], [p[1] for p in pts], marker="o", label=algo)
        for path in sorted(folder.glob(f"{topo}_simgrid_*.json")):
            r2 = json.loads(path.read_text())
            pts = [(r["block_bytes"], aggregate_mbps(m, r["block_bytes"], r["median_s"]))
                   for r in r2["results"]]
            ax.plot([p[0] // 1024 for p in pts], [p[1] for p in pts], linestyle=":",
                    label="simgrid:" + path.stem.split("_simgrid_")[1])
        paper = PAPER[topo]
        ks = sorted(paper)
        ax.plot(ks, [aggregate_mbps(m, k * 1024, paper[k][2] / 1e3) for k in ks], "k--",
                marker="s", label="paper: generated routine")
        ax.axhline(m * (m - 1) * 100 / load, color="red", label="peak bound (100 Mbit/s)")
        p2p = folder / f"{topo}_p2p.json"
        if p2p.exists():
            r = json.loads(p2p.read_text())["results"][0]
            beff = r["block_bytes"] * 8 / r["median_s"] / 1e6
            ax.axhline(m * (m - 1) * beff / load, color="red", linestyle="--",
                       label=f"effective bound ({beff:.1f} Mbit/s links)")
        ax.set_xscale("log", base=2)
        ax.set_xticks([s // 1024 for s in sizes], [f"{s // 1024}K" for s in sizes])
        ax.set_xlabel("block size")
        ax.set_ylabel("aggregate throughput (Mbit/s)")
        model = "ns-3 TCP (packets)" if network == "packet" else "SimGrid"
        if suffix:
            model += f", {suffix[len('_queue'):]}-packet FIFOs"
        ax.set_title(f"Paper 003 topology ({topo[-1]}), {m} machines, {model}")
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        name = f"ethernet_packet{suffix}_{topo}.png" if network == "packet" else f"ethernet_{topo}.png"
        fig.savefig(out / name, dpi=110)
        print(f"wrote {out / name}")


if __name__ == "__main__":
    args, net = network_arg(sys.argv[1:])
    main(args[0], args[1], net)
