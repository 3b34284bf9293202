#!/usr/bin/env python3
"""Tables (markdown, stdout) or PNG plots (--plots) of scripts/reproduce/irregular.sh.

  irregular_report.py RESULTS_DIR DOCS_DIR [--plots]

Reads the commbench JSON records NAME.json (NAME = PATTERN_pP_m1024, PATTERN_p64_mmax,
PATTERN_pP_m4096), their copy model (model_copy_gbs) and the calibration (calibrate.log, or
the summary in sp2_calibrated.txt): the tables depend on the records alone, so tests/pages
regenerates the committed ones from docs/results/irregular*/. Times are simulated milliseconds; beside each
the flat model's prediction for Table 1's SP2 (commbench --predict SP2). The verdict lines
check the paper's conclusions on every point of the grid, for the simulation and the model.
"""
import json
import os
import re
import sys

ALGOS = [("direct", "A1"), ("two_stage", "A2"), ("mesh", "A3"), ("four_stage", "A4")]
MODES = ["b", "n1", "n2"]
ELEM = 22
NA = "n/a (not a square)"


def is_square(p):
    q = int(round(p ** 0.5))
    return q * q == p


def load(results):
    """{(pattern, P, mmax): {"direct/b": (sim_ms, model_ms), ...}}"""
    runs = {}
    for name in sorted(os.listdir(results)):
        m = re.match(r"(pattern\d)_p(\d+)_(m\d+|mmax)\.json$", name)
        if not m:
            continue
        with open(os.path.join(results, name)) as f:
            j = json.load(f)
        for r in j.get("results", []):
            key = (m.group(1), j["ranks"], r["block_bytes"] // ELEM)
            runs.setdefault(key, {})[r["algo"]] = (r["median_s"] * 1e3, r.get("model_us", -1) / 1e3)
    return runs


def cell(runs, key, algo, which):
    if algo.startswith("mesh") and not is_square(key[1]):
        return NA
    v = runs.get(key, {}).get(algo)
    return "—" if v is None else f"{v[which]:.2f}"


def table(runs, keys, label, which, out):
    # A1-n2 is A1-n1 by construction (A1 sends from the user's buffer): not run.
    cols = [f"{a}/{m}" for a, _ in ALGOS for m in MODES if (a, m) != ("direct", "n2")]
    heads = [f"{short}-{m}" for a, short in ALGOS for m in MODES if (a, m) != ("direct", "n2")]
    out.append(f"| {label} | " + " | ".join(heads) + " |")
    out.append("|---:|" + "---:|" * len(cols))
    for k in keys:
        vals = [cell(runs, k, c, which) for c in cols]
        vals = ["n/a" if v == NA else v for v in vals]
        out.append(f"| {k[1] if label == 'P' else k[2]} | " + " | ".join(vals) + " |")


def best(row, algo, modes, which):
    vals = [row[f"{algo}/{m}"][which] for m in modes if f"{algo}/{m}" in row]
    return min(vals) if vals else None


def verdicts(runs, which):
    src = "simulation" if which == 0 else "model"
    lines = []
    # 1. A4 beats A1 and A2 in blocking mode (Figs. 15-18).
    held, failed = 0, []
    for k, row in sorted(runs.items()):
        if k[2] == 4096 and k[1] != 64:
            continue  # the Fig. 23 runs time only A3-n1 and A4-n2
        a1, a2, a4 = (row.get(f"{a}/b") for a in ("direct", "two_stage", "four_stage"))
        if None in (a1, a2, a4):
            continue
        if a4[which] < a1[which] and a4[which] < a2[which]:
            held += 1
        else:
            failed.append(f"{k[0]} P={k[1]} Mmax={k[2]}")
    lines.append(f"- [{src}] A4-b faster than A1-b and A2-b: {held} of {held + len(failed)} points"
                 + (f"; not at {', '.join(failed)}" if failed else ""))
    # 2. A3 wins only for small Mmax with Pattern1 (Figs. 19-22): best mode of A3 vs A4 at P = 64.
    for pattern in ("pattern1", "pattern2"):
        wins, losses = [], []
        for k, row in sorted(runs.items()):
            if k[0] != pattern or k[1] != 64 or "direct/b" not in row:
                continue
            a3, a4 = best(row, "mesh", MODES, which), best(row, "four_stage", MODES, which)
            if a3 is None or a4 is None:
                continue
            (wins if a3 < a4 else losses).append(str(k[2]))
        lines.append(f"- [{src}] {pattern}, P = 64, best mode of A3 faster than best mode of A4 "
                     f"at Mmax = {', '.join(wins) or 'none'}; A4 faster at {', '.join(losses) or 'none'}")
    # 3. A4-n2 beats A3-n1 for P from 25 to 100 (Fig. 23, Mmax = 4096).
    for pattern in ("pattern1", "pattern2"):
        wins, losses = [], []
        for k, row in sorted(runs.items(), key=lambda kv: kv[0][1]):
            if k[0] != pattern or k[2] != 4096 or "mesh/n1" not in row or "four_stage/n2" not in row:
                continue
            (wins if row["four_stage/n2"][which] < row["mesh/n1"][which] else losses).append(str(k[1]))
        lines.append(f"- [{src}] {pattern}, Mmax = 4096: A4-n2 faster than A3-n1 at P = "
                     f"{', '.join(wins) or 'none'}; slower at P = {', '.join(losses) or 'none'}")
    return lines


def copy_rate(results):
    """The --model-copy rate every record of the run was made with (0: none), or None
    when they differ."""
    rates = set()
    for name in os.listdir(results):
        if name.endswith(".json"):
            with open(os.path.join(results, name)) as f:
                rates.add(json.load(f).get("model_copy_gbs", 0) or 0)
    return rates.pop() if len(rates) == 1 else None


def calibration(results):
    """The calibration of the simulated platform from the records: commbench --calibrate's
    log when it is among them (calibrate.log), else the summary the calibrated platform file
    keeps in its header (sp2_calibrated.txt)."""
    log, platform = os.path.join(results, "calibrate.log"), os.path.join(results, "sp2_calibrated.txt")
    if os.path.exists(log):
        with open(log) as f:
            body = [l.rstrip() for l in f if l.strip() and not l.startswith("commbench")]
    elif os.path.exists(platform):
        with open(platform) as f:
            body = [l[2:].rstrip() for l in f if l.startswith("# ")]
    else:
        return []
    return ["## Calibration of the simulated platform (commbench --calibrate, 2 ranks)", "", "```"] + body + ["```", ""]


def tables(results):
    runs = load(results)
    rate = copy_rate(results)
    out = [f"Local copies of the staged engine charged at {rate:g} GB/s (--copy-gbs; commbench --model-copy).", ""] \
        if rate else []
    out += ["# Irregular all-to-all under SimGrid: tables (generated by scripts/reproduce/irregular.sh)",
           "",
           "Platform inputs/platforms/sp2_flat100.xml (Table 1's SP2: Ts = 44 us, tc + td = 0.035 us/byte),",
           "one rank per host, 22-byte elements. Times in simulated milliseconds, one deterministic run;",
           "`model` = the flat model's prediction for the SP2 preset (commbench --predict SP2).",
           "A3 (mesh) needs a square P: " + NA + " elsewhere (shown as n/a); — = not run",
           "(series Pbig runs the blocking mode only). A1-n2 is A1-n1 by construction (A1 sends",
           "straight from the user's buffer) and is not run.", ""]
    out += calibration(results)
    for pattern in ("pattern1", "pattern2"):
        pkeys = sorted(k for k in runs if k[0] == pattern and k[2] == 1024 and "direct/b" in runs[k])
        mkeys = sorted(k for k in runs if k[0] == pattern and k[1] == 64 and "direct/b" in runs[k])
        for keys, label, title in ((pkeys, "P", "M_max = 1024, P varies"),
                                   (mkeys, "M_max", "P = 64, M_max varies")):
            if not keys:
                continue
            for which, what in ((0, "simulated"), (1, "model")):
                out += [f"## {pattern}, {title}: {what} time (ms)", ""]
                table(runs, keys, label, which, out)
                out.append("")
        f23 = sorted((k for k in runs if k[0] == pattern and k[2] == 4096 and "mesh/n1" in runs[k]),
                     key=lambda k: k[1])
        if f23:
            out += [f"## {pattern}, Fig. 23: A3-n1 against A4-n2, M_max = 4096 (ms)", "",
                    "| P | A3-n1 | A4-n2 | A4-n2 / A3-n1 | model A3-n1 | model A4-n2 |", "|---:|---:|---:|---:|---:|---:|"]
            for k in f23:
                a3, a4 = runs[k]["mesh/n1"], runs[k]["four_stage/n2"]
                out.append(f"| {k[1]} | {a3[0]:.2f} | {a4[0]:.2f} | {a4[0] / a3[0]:.2f} | {a3[1]:.2f} | {a4[1]:.2f} |")
            out.append("")
    out += ["## The paper's conclusions, checked on every point", ""]
    out += verdicts(runs, 0) + verdicts(runs, 1)
    print("\n".join(out))


def plots(results, docs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = load(results)
    colours = {"direct": "tab:blue", "two_stage": "tab:orange", "mesh": "tab:green", "four_stage": "tab:red"}
    for pattern in ("pattern1", "pattern2"):
        for series, xlabel in (("p", "P (ranks)"), ("mmax", "M_max (elements of 22 B)")):
            if series == "p":
                keys = sorted(k for k in runs if k[0] == pattern and k[2] == 1024 and "direct/b" in runs[k])
                xs = [k[1] for k in keys]
            else:
                keys = sorted(k for k in runs if k[0] == pattern and k[1] == 64 and "direct/b" in runs[k])
                xs = [k[2] for k in keys]
            if not keys:
                continue
            fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
            for ax, mode in zip(axes, MODES):
                for algo, short in ALGOS:
                    pts = [(x, runs[k].get(f"{algo}/{mode}")) for x, k in zip(xs, keys)]
                    pts = [(x, v) for x, v in pts if v is not None]
                    if not pts:
                        continue
                    style = "o-" if algo != "mesh" else "s-"
                    ax.plot([x for x, _ in pts], [v[0] for _, v in pts], style, color=colours[algo],
                            label=f"{short} ({algo}) simulated")
                    ax.plot([x for x, _ in pts], [v[1] for _, v in pts], "--", color=colours[algo],
                            alpha=0.6, label=f"{short} model")
                ax.set_title(f"{pattern}, mode {mode}")
                ax.set_xlabel(xlabel)
                ax.set_yscale("log")
                if series == "mmax":
                    ax.set_xscale("log", base=2)
                ax.grid(True, which="both", alpha=0.3)
            axes[0].set_ylabel("time (simulated ms)")
            axes[0].legend(fontsize=7)
            title = "M_max = 1024" if series == "p" else "P = 64"
            fig.suptitle(f"Irregular all-to-all on the simulated SP2 (Table 1), {pattern}, {title}; "
                         "dashed: flat model")
            fig.tight_layout()
            fig.savefig(os.path.join(docs, f"irregular_{pattern}_{series}.png"), dpi=90)
            plt.close(fig)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, pattern in zip(axes, ("pattern1", "pattern2")):
        keys = sorted((k for k in runs if k[0] == pattern and k[2] == 4096 and "mesh/n1" in runs[k]),
                      key=lambda k: k[1])
        xs = [k[1] for k in keys]
        for algo, colour in (("mesh/n1", "tab:green"), ("four_stage/n2", "tab:red")):
            ax.plot(xs, [runs[k][algo][0] for k in keys], "o-", color=colour, label=f"{algo} simulated")
            ax.plot(xs, [runs[k][algo][1] for k in keys], "--", color=colour, alpha=0.6, label=f"{algo} model")
        ax.set_title(f"Fig. 23: {pattern}, M_max = 4096")
        ax.set_xlabel("P (squares)")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("time (simulated ms)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(docs, "irregular_fig23.png"), dpi=90)
    plt.close(fig)


def main():
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    if "--plots" in sys.argv[3:]:
        plots(sys.argv[1], sys.argv[2])
    else:
        tables(sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
