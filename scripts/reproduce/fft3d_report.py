#!/usr/bin/env python3
"""Table and plot for scripts/reproduce/fft3d.sh (fft3d under SimGrid, paper 002 s. 6.2).

  fft3d_report.py RESULTS_DIR OUT_MD [--png FILE]

Reads the fft3d JSON records (one per case, fft3d_<case>.json) and writes a Markdown
table per case: forward time per transform, its stages, the communication share and
the ratio to native and to auto. With matplotlib, also a PNG of stacked stage times.
The discussion in docs/results/fft3d_sim.md is written by hand around these tables;
this script only produces the numbers.
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import native_records  # noqa: E402


def load(path):
    rec = json.loads(path.read_text())
    rows = []
    for r in rec["results"]:
        stages = r["fft_s"] + r["pack_s"] + r["comm_s"]
        rows.append({
            "decomp": r["decomp"], "grid": r["proc_grid"], "algo": r["algo"], "ran": r["ran"],
            "fwd_ms": r["median_s"] * 1e3, "bwd_ms": r["backward_median_s"] * 1e3,
            "fft_ms": r["fft_s"] * 1e3, "pack_ms": r["pack_s"] * 1e3,
            "comm_ms": r["comm_s"] * 1e3,
            "share": r["comm_s"] / stages if stages > 0 else 0.0,
            "valid": r["validation"]})
    return rec, rows


def work(rec):
    w = rec.get("local_work", "measured")
    if isinstance(w, dict):
        return f"modelled ({w['model_fft_gflops']:g} GFlop/s FFT, {w['model_copy_gbs']:g} GB/s copies)"
    return "measured by SMPI"


def table(rec, rows):
    by_algo = {r["algo"]: r for r in rows}
    native = by_algo.get("native", rows[0])["fwd_ms"]
    auto = by_algo.get("auto", by_algo.get("native", rows[0]))["fwd_ms"]
    out = [f"**{rec['grid']} {rec['transform']}, {rows[0]['decomp']} {rows[0]['grid']}, "
           f"{rec['ranks']} ranks ({rec['nodes']})**, {rec['reps']} timed repetitions, "
           f"check {rec['check']}, validation {rec['validation']}, local work {work(rec)}", "",
           "| algo | ran | forward ms | backward ms | fft ms | pack ms | comm ms "
           "| comm share | / native | / auto | valid |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['algo']} | {r['ran']} | {r['fwd_ms']:.2f} | {r['bwd_ms']:.2f} "
                   f"| {r['fft_ms']:.2f} | {r['pack_ms']:.2f} | {r['comm_ms']:.2f} "
                   f"| {100 * r['share']:.0f} % | {r['fwd_ms'] / native:.2f} "
                   f"| {r['fwd_ms'] / auto:.2f} | {r['valid']} |")
    return out


def plot(path, cases):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, len(cases), figsize=(6.2 * len(cases), 4.4), squeeze=False)
    for ax, (rec, rows) in zip(axes[0], cases):
        names = [r["algo"] for r in rows]
        x = range(len(rows))
        bottom = [0.0] * len(rows)
        for key, label in (("fft_ms", "FFT"), ("pack_ms", "pack/unpack"),
                           ("comm_ms", "all-to-all")):
            vals = [r[key] for r in rows]
            ax.bar(x, vals, bottom=bottom, label=label)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.plot(list(x), [r["fwd_ms"] for r in rows], "k_", markersize=18,
                label="forward (slowest rank)")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, rotation=35, ha="right")
        ax.set_ylabel("simulated ms per forward transform")
        ax.set_title(f"{rec['grid']} {rows[0]['decomp']} {rows[0]['grid']}, "
                     f"{rec['ranks']} ranks of 64x8")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def before_lines(old, rows):
    """The case's forward times against the page before native ran under Open MPI's decision
    (before_ompi.json), and whether the fastest algorithm changed."""
    if not old:
        return []
    now = {r["algo"]: r for r in rows}
    common = [a for a in now if a in old]
    if not common:
        return []
    out = ["Before (SMPI's default selector, `before_ompi.json`) and now, forward ms:", "",
           "| algo | before | now | now / before |", "|---|---:|---:|---:|"]
    for a in common:
        b, n = old[a]["forward_ms"], now[a]["fwd_ms"]
        out.append(f"| {a} | {b:.2f} | {n:.2f} | {n / b:.2f} |")
    fb = ", ".join(native_records.fastest({a: old[a]["forward_ms"] for a in common}))
    fn = ", ".join(native_records.fastest({a: now[a]["fwd_ms"] for a in common}))
    out += ["", (f"Fastest (within 0.5 %): {fb} before, {fn} now." if fb != fn else
                 f"Fastest (within 0.5 %) before and now: {fn}."), ""]
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    folder, out_md = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    png = pathlib.Path(argv[argv.index("--png") + 1]) if "--png" in argv else None
    paths = sorted(folder.glob("fft3d_*.json"))
    if not paths:
        print(f"fft3d_report.py: no fft3d_*.json in {folder}", file=sys.stderr)
        return 1
    cases = [load(p) for p in paths]
    lines = ["<!-- generated by scripts/reproduce/fft3d_report.py -->", ""]
    lines += [native_records.selector_sentence(
        [rec for rec, _ in cases], "`native`, and the library all-to-alls inside the hierarchical schemes, are"), ""]
    before = folder / "before_ompi.json"
    old = json.loads(before.read_text())["cases"] if before.exists() else {}
    for p, (rec, rows) in zip(paths, cases):
        lines += [f"From `{p.name}`:", ""] + table(rec, rows) + [""]
        lines += before_lines(old.get(p.stem[len("fft3d_"):], {}), rows)
    out_md.write_text("\n".join(lines))
    print("\n".join(lines))
    if png is not None and plot(png, cases):
        print(f"plot: {png}")
    return 0 if all(rec["validation"] == "PASS" for rec, _ in cases) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
