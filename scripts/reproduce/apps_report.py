#!/usr/bin/env python3
"""Writes the application-level reproduction page from the records of apps.sh.

  apps_report.py RECORDS_DIR DOCS_DIR

RECORDS_DIR holds one NAME.json and NAME.txt per simulation (scripts/reproduce/apps.sh);
DOCS_DIR gets apps.md and the plots apps_cpmd.png, apps_cube.png, apps_redistribute.png.
Every table puts the paper's number, ours and the verdict side by side; a part whose
records are missing is listed as not run.
"""
import glob
import json
import os
import re
import sys

PAPER_CPMD = 33.0  # paper 002, s. 6.2: CPMD up to 33 % faster on 16 x 8 (Fig. 13(a))
GOAL_CPMD = 25.0   # issue 21's goal for the transform
# The flat (node-unaware) algorithms, native included: what a library without the paper's
# schemes could pick at best.
# Paper 004, Table 19, 256 nodes: Mflop/s of the matrix-vector and vector-matrix products.
TABLE19_MV = {1024: 304, 2048: 723, 4096: 1190, 8192: 1382}
TABLE19_VM = {1024: 344, 2048: 799, 4096: 1370, 8192: 1846}
# docs/results/irregular.md, "Results", Pattern1, M_max = 1024, blocking: commbench's
# collective alone, ms (A1 direct, A2 two_stage, A3 mesh, A4 four_stage).
IRREGULAR_MD_PATTERN1_B = {16: (6.58, 6.66, 5.31, 5.47), 36: (8.56, 8.05, 7.48, 7.42),
                           64: (16.36, 11.86, 10.80, 10.50), 100: (21.79, 16.71, 12.54, 13.28)}
FLAT = ("native", "linear", "ring", "ring_sendrecv", "pairwise", "factor", "bruck")


def load(d, name):
    path = os.path.join(d, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        data = json.load(f)
    text = ""
    if os.path.exists(os.path.join(d, name + ".txt")):
        with open(os.path.join(d, name + ".txt")) as f:
            text = f.read()
    data["_text"] = text
    return data


def rows(data):
    return {r["algo"]: r for r in data.get("results", [])} if data else {}


def block_of(data):
    m = re.search(r"\((\d+) B blocks", data["_text"]) if data else None
    return int(m.group(1)) if m else None


def pct(ratio):
    """Time saved against native, in percent (positive: faster)."""
    return 100.0 * (1.0 - ratio)


def fmt_ms(s):
    return f"{1e3 * s:.3f}"


def new_figure(ncols=1, size=(7, 4)):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt.subplots(1, ncols, figsize=size)


def save_figure(fig, out, name, alt):
    """Saves the plot into `out` and returns its markdown lines."""
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=110)
    return [f"![{alt}]({name})", ""]


def cpmd_section(d, out, plots):
    lines = ["## Paper 002: CPMD's 3-D FFT on 16 x 8 and 64 x 8 cores (s. 6.2, Fig. 13)", ""]
    cases = [("0.35", "cpmd16x8_r0.35"), ("0.5", "cpmd16x8_r0.5"), ("0.7", "cpmd16x8_r0.7"), ("full slab", "cpmd16x8_full")]
    have = [(label, load(d, name)) for label, name in cases]
    have = [(label, data) for label, data in have if data]
    if not have:
        return lines + ["Not run (`apps.sh --only cpmd`).", ""]
    lines += [
        "`fft3d --decomp slab --sphere R` on `cluster64x8` (`--ppn 8`: 16 nodes of 8 cores for 128",
        "ranks), grid 128^3 c2c. Only the x lines whose (ky, kz) lie inside the cutoff sphere's",
        "disk of radius R (a fraction of N/2) travel, dealt round-robin over the ranks and padded",
        "to the largest count: one regular all-to-all of blocks about pi R^2 / 4 of the full",
        "slab's, as CPMD transposes only the columns inside its cutoff sphere. FFT stages at",
        "2 GFlop/s, packing and the algorithms' copies at 1 GB/s (docs/results/fft3d_sim.md).",
        "Forward transform, simulated ms; saved = time saved against native's transform.",
        "",
        "| cutoff radius R | block | native ms | best algorithm: ms (saved) | auto: ran, ms (saved) | send_aggregate | recv_distribute | leader | best scheme vs best flat algorithm | paper (Fig. 13(a)) | verdict |",
        "|---|---:|---:|---|---|---:|---:|---:|---|---:|---|",
    ]
    plot_rows = []
    for label, data in have:
        r = rows(data)
        nat = r["native"]["median_s"]
        ours = {a: x for a, x in r.items() if a not in ("native", "auto")}
        best = min(ours.values(), key=lambda x: x["median_s"])
        auto = r.get("auto")
        sa, rd, le = (r.get(a) for a in ("send_aggregate", "recv_distribute", "leader"))
        fmt = lambda x: f"{fmt_ms(x['median_s'])} ({pct(x['ratio_to_native']):+.0f} %)" if x else "-"
        best_saved = pct(best["ratio_to_native"])
        auto_saved = pct(auto["ratio_to_native"]) if auto else None
        met = best_saved >= GOAL_CPMD and (auto_saved is not None and auto_saved >= GOAL_CPMD)
        verdict = ("goal met: >= 25 % with the best algorithm and auto" if met else
                   "goal not met" + (f": auto {auto_saved:+.0f} %" if auto_saved is not None else ""))
        if label == "full slab":
            verdict = "no sphere: " + ("aggregation still pays" if best_saved > 5 else "aggregation does not pay at these blocks")
        flat = [x for a, x in r.items() if a in FLAT]
        bflat = min(flat, key=lambda x: x["median_s"]) if flat else None
        scheme = min((x for x in (sa, rd, le) if x), key=lambda x: x["median_s"], default=None)
        vs_flat = (f"{pct(scheme['median_s'] / bflat['median_s']):+.0f} % against {bflat['algo']}"
                   if scheme and bflat else "-")
        lines.append(
            f"| {label} | {block_of(data)} B | {fmt_ms(nat)} | {best['algo']}: {fmt(best)} | "
            f"{auto['ran'] if auto else '-'}: {fmt(auto)} | {fmt(sa)} | {fmt(rd)} | {fmt(le)} | {vs_flat} | 33 % | {verdict} |")
        plot_rows.append((label, block_of(data), best_saved, auto_saved, *(pct(x["ratio_to_native"]) if x else 0 for x in (sa, rd, le))))
    lines.append("")
    main = load(d, "cpmd16x8_r0.5")
    if main:
        lines += ["Breakdown at R = 0.5 (forward stages, ms averaged over ranks; the all-to-all's own copies",
                  "are inside comm):", "",
                  "| algorithm | ran | forward | fft | pack | comm | / native |", "|---|---|---:|---:|---:|---:|---:|"]
        for a, x in rows(main).items():
            lines.append(f"| {a} | {x['ran']} | {fmt_ms(x['median_s'])} | {fmt_ms(x['fft_s'])} | {fmt_ms(x['pack_s'])} | "
                         f"{fmt_ms(x['comm_s'])} | {x['ratio_to_native']:.2f} |")
        lines.append("")
    # Fig. 13(b): one problem, more nodes.
    scale = [(np, load(d, f"cpmd_scale_np{np}")) for np in (128, 256, 512)]
    scale = [(np, s) for np, s in scale if s]
    if scale:
        lines += ["### One problem on 16, 32 and 64 nodes (Fig. 13(b))", "",
                  "Grid 512 x 128 x 128 (a slab needs a plane per rank at 512 ranks), R = 0.5. Paper: the",
                  "gain grows with the system size, and at 64 x 8 the messages are small enough that the",
                  "leader scheme does about as well as SA / RD.", "",
                  "| nodes x cores | block | native ms | auto (ran) | send_aggregate | recv_distribute | leader | pairwise | bruck |",
                  "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
        for np, s in scale:
            r = rows(s)
            g = lambda a: f"{r[a]['ratio_to_native']:.2f}" if a in r else "-"
            lines.append(f"| {np // 8} x 8 | {block_of(s)} B | {fmt_ms(r['native']['median_s'])} | "
                         f"{g('auto')} ({r['auto']['ran'] if 'auto' in r else '-'}) | {g('send_aggregate')} | "
                         f"{g('recv_distribute')} | {g('leader')} | {g('pairwise')} | {g('bruck')} |")
        lines += ["", "(ratios: transform time / native's)", ""]
        best = [(np, min(v["ratio_to_native"] for a, v in rows(x).items() if a in ("leader", "send_aggregate", "recv_distribute")))
                for np, x in scale]
        grows = all(b[1] >= c[1] for b, c in zip(best, best[1:]))
        last = rows(scale[-1][1])
        le, sa = last.get("leader"), last.get("send_aggregate")
        lines.append("**Verdict:** the best scheme saves " + ", ".join(f"{pct(b):.0f} % at {np // 8} x 8" for np, b in best) +
                     (": the gain grows with the system size, as in the paper." if grows else
                      ": the gain does not grow monotonically with the system size, unlike the paper's."))
        if le and sa:
            lines.append(f"At {scale[-1][0] // 8} x 8 leader takes {le['ratio_to_native']:.2f} of native's time and "
                         f"send_aggregate {sa['ratio_to_native']:.2f}: " +
                         ("leader is at least as good, as the paper found (its messages are the fewest when the "
                          "blocks are this small)." if le["median_s"] <= 1.1 * sa["median_s"] else
                          "leader is behind, unlike the paper."))
        lines.append("")
    cold = load(d, "cpmd16x8_r0.5_cold")
    if cold and main:
        r0, r1 = rows(main), rows(cold)
        lines += ["### SA against RD: cold copies of received data (s. 3, Fig. 5)", "",
                  "The paper measured receive-side distribution's copies to cost more than send-side",
                  "aggregation's on the PIO InfiniPath NIC (data arriving from the network is not in the",
                  "core's cache) and chose SA for it. Its text gives no number; here the copies of received",
                  "data are charged at 0.5 GB/s instead of 1 (`--model-copy-cold 0.5`), an assumption.",
                  "", "| algorithm | copies all at 1 GB/s | received data at 0.5 GB/s |", "|---|---:|---:|"]
        for a in ("send_aggregate", "recv_distribute", "leader"):
            if a in r0 and a in r1:
                lines.append(f"| {a} | {fmt_ms(r0[a]['median_s'])} | {fmt_ms(r1[a]['median_s'])} |")
        if all(a in r1 for a in ("send_aggregate", "recv_distribute")):
            sa1, rd1 = r1["send_aggregate"]["median_s"], r1["recv_distribute"]["median_s"]
            lines += ["", f"**Verdict:** with cold copies RD takes {100 * (rd1 / sa1 - 1):.1f} % longer than SA "
                      "(the paper: SA at least 10 % ahead beyond 256 B on InfiniPath, Fig. 8); without them the two are "
                      "equal, so in this model the difference is the cold-copy rate alone, whose value the paper does "
                      "not give."]
        lines.append("")
    intra = [(k, load(d, f"intra16x8_{k}")) for k in ("shared", "messages")]
    if all(x for _, x in intra):
        lines += ["### Intra-node steps: shared window against messages (commbench, 16 x 8)", "",
                  "The same schemes with the intra-node exchange through the node's MPI-3 window (one copy in,",
                  "a barrier, one copy out) and through the earlier intra-node all-to-all (`--intra messages`,",
                  "kept as the fallback where memory is not shared). Median us of one all-to-all:", "",
                  "| block | algorithm | shared window | messages |", "|---:|---|---:|---:|"]
        sh, ms = (rows_by_size(x) for _, x in intra)
        for key in sorted(sh):
            if key in ms:
                lines.append(f"| {key[1]} B | {key[0]} | {sh[key]:.1f} | {ms[key]:.1f} |")
        faster = [k for k in sh if k in ms and k[0] != "native" and ms[k] < sh[k]]
        lines += ["", "**Verdict:** " + ("the message form was never faster, so it stays the fallback for nodes "
                                          "that do not share memory, not an algorithm of its own." if not faster else
                                          "the message form was faster for " + ", ".join(f"{a} at {b} B" for a, b in faster) + ".")]
        lines.append("")
    if plots and plot_rows:
        fig, ax = new_figure()
        names = ["best", "auto", "send_aggregate", "recv_distribute", "leader"]
        width = 0.15
        for k, n in enumerate(names):
            ax.bar([i + k * width for i in range(len(plot_rows))], [row[2 + k] or 0 for row in plot_rows], width, label=n)
        ax.axhline(PAPER_CPMD, color="k", linestyle="--", label="paper: CPMD 33 %")
        ax.axhline(GOAL_CPMD, color="grey", linestyle=":", label="goal 25 %")
        ax.set_xticks([i + 2 * width for i in range(len(plot_rows))])
        ax.set_xticklabels([f"R={row[0]}\n{row[1]} B" for row in plot_rows])
        ax.set_ylabel("transform time saved vs native (%)")
        ax.set_title("fft3d CPMD-like slab, 16 x 8 cores (cluster64x8, SimGrid)")
        ax.legend(fontsize=7)
        lines += save_figure(fig, out, "apps_cpmd.png", "CPMD-like transform: time saved against native")
    return lines


def rows_by_size(data):
    out = {}
    for r in data.get("results", []):
        if r.get("validation") == "PASS" and "block_bytes" in r:
            out[(r["algo"], r["block_bytes"])] = r["median_us"] if "median_us" in r else 1e6 * r["median_s"]
    return out


def cube_section(d, out, plots):
    lines = ["## Paper 004: matrix-vector products and direct N-body on a binary d-cube", ""]
    mv = {k: load(d, f"matvec_d{k}") for k in range(1, 9)}
    nb = {k: load(d, f"nbody_d{k}") for k in range(1, 9)}
    mv = {k: v for k, v in mv.items() if v}
    nb = {k: v for k, v in nb.items() if v}
    if not mv and not nb:
        return lines + ["Not run (`apps.sh --only matvec,nbody`).", ""]
    lines += [
        "2^d simulated nodes with d bidirectional links each (scripts/reproduce/hypercube_platform.py,",
        "100 MB/s and 1 us per one-way link, ideal links as in cycles.sh). Local products, N-body",
        "interactions (20 flops each) and the reduce-scatter's combines (one flop per element) are",
        "charged at 0.5 GFlop/s per node (`--model-flops 0.5`): about the CM-200's ratio of node flops",
        "to link bandwidth (a few flops per byte), an assumption, not a figure of the paper.",
        "",
        "The paper gives the collective speed-ups (Table 6: d_cycles 1.27-2.08 over send-and-spread",
        "for broadcast; Table 15: 5-8 for reduction) and CMSSL's application rates (Table 19: a",
        "4096 x 4096 matrix-vector product at 1190 Mflop/s on 256 CM-200 nodes), not a speed-up inside",
        "the application. Below: the application's time with d_cycles against send_spread (broadcast",
        "layouts) and reduce_spread (reduction layouts), and the share of it that is communication.",
        "",
    ]
    if mv:
        lines += ["| nodes (d) | layout | op | send_spread ms | d_cycles ms | app speed-up | comm speed-up | comm share (d_cycles) | native ms | Mflop/s (d_cycles) |",
                  "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        plot = {}
        for k in sorted(mv):
            for r_ss in mv[k]["results"]:
                if r_ss["algo"] != "send_spread":
                    continue
                same = [r for r in mv[k]["results"] if r["case"] == r_ss["case"]]
                by = {r["algo"]: r for r in same}
                dc, nat = by.get("d_cycles"), by.get("native")
                if not dc:
                    continue
                app = r_ss["median_s"] / dc["median_s"]
                comm = r_ss["comm_s"] / dc["comm_s"] if dc["comm_s"] > 0 else float("nan")
                share = dc["comm_s"] / dc["median_s"] if dc["median_s"] > 0 else 0
                lines.append(f"| {2 ** k} ({k}) | {r_ss['layout']} {r_ss['grid']} | {r_ss['op']} | {fmt_ms(r_ss['median_s'])} | "
                             f"{fmt_ms(dc['median_s'])} | {app:.2f} | {comm:.2f} | {100 * share:.0f} % | "
                             f"{fmt_ms(nat['median_s']) if nat else '-'} | {dc['mflops']:.0f} |")
                plot.setdefault((r_ss["layout"], r_ss["op"]), []).append((k, app, comm))
        lines.append("")
        flat_pts = [(app, k, layout, op, comm) for (layout, op), pts in plot.items() for k, app, comm in pts]
        if flat_pts:
            top = max(flat_pts)
            low = min(flat_pts)
            lines += [f"**Verdict:** inside the application d_cycles is at most {top[0]:.2f}x faster than the spread "
                      f"algorithm ({top[3]} on {top[2]}, d = {top[1]}, where communication is {top[4]:.2f}x faster); "
                      f"the local product dominates up to d = 5. The collective speed-ups of Tables 6 and 15 were "
                      f"measured with 256 words per node; here a node holds N / 2^d elements of each vector (16 at "
                      f"d = 8), where the 2^d - 1 steps of the cycles cost more than the d steps of the tree algorithms: "
                      f"the worst case is {low[0]:.2f}x ({low[3]} on {low[2]}, d = {low[1]}). Paper 004's own Table 9 "
                      f"says the same: the cycles pay only above a per-node data size that grows with d.", ""]
        if plots and plot:
            fig, axes = new_figure(2, (10, 4))
            for (layout, op), pts in sorted(plot.items()):
                pts.sort()
                axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{op} {layout}")
                axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=f"{op} {layout}")
            axes[0].set_title("matvec: application speed-up, d_cycles / spread")
            axes[1].set_title("communication only")
            axes[1].axhspan(1.27, 2.08, color="grey", alpha=0.2, label="paper Table 6 (broadcast)")
            axes[1].axhspan(5, 8, color="orange", alpha=0.2, label="paper Table 15 (reduction)")
            for ax in axes:
                ax.set_xlabel("cube dimension d")
                ax.legend(fontsize=6)
            lines += save_figure(fig, out, "apps_cube.png", "matvec on the d-cube")
    t19 = {n: load(d, f"matvec_t19_n{n}") for n in (1024, 2048, 4096, 8192)}
    t19 = {n: v for n, v in t19.items() if v}
    if t19:
        lines += ["Table 19's shape on 256 nodes (d = 8, 16 x 16 column-major grid, d_cycles): the rate as the",
                  "matrix grows, beside CMSSL's on 256 CM-200 nodes. Absolute rates differ by the node speed",
                  "(ours is modelled), so the columns to compare are the rates relative to the 8192 row.", "",
                  "| N | matvec Mflop/s | / at 8192 | paper M-V Mflop/s | / at 8192 | vecmat Mflop/s | / at 8192 | paper V-M | / at 8192 |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        def rate(n, op):
            for r in t19[n]["results"]:
                if r["op"] == op and r["algo"] == "d_cycles":
                    return r["mflops"]
            return None
        top = max(t19)
        for n in sorted(t19):
            mv_r, vm_r = rate(n, "matvec"), rate(n, "vecmat")
            pm, pv = TABLE19_MV.get(n), TABLE19_VM.get(n)
            rel = lambda a, b: f"{a / b:.2f}" if a and b else "-"
            lines.append(f"| {n} | {mv_r:.0f} | {rel(mv_r, rate(top, 'matvec'))} | {pm or '-'} | {rel(pm, TABLE19_MV[8192])} | "
                         f"{vm_r:.0f} | {rel(vm_r, rate(top, 'vecmat'))} | {pv or '-'} | {rel(pv, TABLE19_VM[8192])} |")
        lines.append("")
        if top == 8192 and 1024 in t19:
            ours, theirs = rate(1024, "matvec") / rate(8192, "matvec"), TABLE19_MV[1024] / TABLE19_MV[8192]
            lines += [f"**Verdict:** the rate rises with the matrix as in Table 19: N = 1024 reaches {ours:.2f} of the "
                      f"N = 8192 rate here and {theirs:.2f} on the CM-200 (matrix-vector), the communication's share "
                      "falling as the local products grow.", ""]
    if nb:
        lines += ["Direct N-body (one step: kick, drift, all-to-all broadcast of positions and masses,",
                  "interactions, kick; ms of the slowest rank):", "",
                  "| nodes (d) | bodies | send_spread | ring | d_cycles | systolic ring | native | d_cycles / send_spread | comm share (send_spread) |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for k in sorted(nb):
            by = {r["algo"]: r for r in nb[k]["results"]}
            g = lambda a: fmt_ms(by[a]["median_s"]) if a in by else "-"
            ss, dc = by.get("send_spread"), by.get("d_cycles")
            nbodies = by["native"]["block_bytes"] // 32 if "native" in by else "-"
            lines.append(f"| {2 ** k} ({k}) | {nbodies} | {g('send_spread')} | {g('ring')} | {g('d_cycles')} | {g('systolic')} | "
                         f"{g('native')} | {ss['median_s'] / dc['median_s']:.3f} | {100 * ss['comm_s'] / ss['median_s']:.1f} % |")
        lines.append("")
        k = max(nb)
        by = {r["algo"]: r for r in nb[k]["results"]}
        if all(a in by for a in ("d_cycles", "send_spread", "systolic")):
            fastest = min(by.values(), key=lambda r: r["median_s"])
            lines += [f"**Verdict:** at d = {k} a step with d_cycles takes {by['send_spread']['median_s'] / by['d_cycles']['median_s']:.2f}x "
                      f"less time than with send_spread; the fastest is {fastest['algo']} "
                      f"({fmt_ms(fastest['median_s'])} ms), the systolic ring hiding its shifts behind the interactions. "
                      "The paper names direct N-body as a use of all-to-all broadcast but measures none.", ""]
    return lines


def redistribute_section(d, out, plots):
    lines = ["## Paper 001: the redistribution inside a sample sort, at scale", ""]
    recs = {}
    for path in glob.glob(os.path.join(d, "redistribute_*_p*_*.json")):
        m = re.match(r"redistribute_(\w+)_p(\d+)_(\w+)\.json", os.path.basename(path))
        data = load(d, os.path.basename(path)[:-5])
        recs[(m.group(1), int(m.group(2)), m.group(3))] = data
    if not recs:
        return lines + ["Not run (`apps.sh --only redistribute`).", ""]
    lines += [
        "`redistribute` on the SP2 platform of docs/results/irregular.md (`sp2_flat100.xml`, Table 1's",
        "Ts = 44 us), one rank per node, 1024 records of 22 bytes per rank (sort: the bucket",
        "exchange of a sample sort of random keys; pattern: Pattern1 with M_max = 1024). The whole",
        "redistribution is composition (bucketing, charged at 0.1 GB/s), the counts' MPI_Alltoall, the",
        "alltoallv and decomposition (the local sort: n log2 n at 0.1 GFlop/s, and its copy); the",
        "collective alone is the `communicate` column, comparable with irregular.md's tables.",
        "Paper 001: A4 (four_stage) beats A1-A3 as P grows (Figs. 15-18, 23).",
        "",
        "| case | P | mode | whole redistribution ms: direct / two_stage / mesh / four_stage / native | best | collective only: direct / two_stage / mesh / four_stage | irregular.md, collective only |",
        "|---|---:|---|---|---|---|---|",
    ]
    plot = {}
    for (kase, p, mode) in sorted(recs, key=lambda k: (k[0], k[1], ["b", "n1", "n2"].index(k[2]))):
        data = recs[(kase, p, mode)]
        by = {}
        for r in data.get("results", []):
            a = r["algo"].split("/")[0]
            whole = r["median_s"] + r["compose_median_s"] + r["decompose_median_s"]
            by[a] = (whole, r["median_s"])
        order = ["direct", "two_stage", "mesh", "four_stage", "native"]
        cells = " / ".join(f"{1e3 * by[a][0]:.2f}" if a in by else "-" for a in order)
        best = min(by, key=lambda a: by[a][0])
        coll = " / ".join(f"{1e3 * by[a][1]:.2f}" if a in by else "-" for a in order[:4])
        paper_md = (" / ".join(f"{x:.2f}" for x in IRREGULAR_MD_PATTERN1_B[p])
                    if kase == "pattern" and mode == "b" and p in IRREGULAR_MD_PATTERN1_B else "")
        lines.append(f"| {kase} | {p} | {mode} | {cells} | {best} | {coll} | {paper_md} |")
        if mode == "b":
            for a, (w, _) in by.items():
                plot.setdefault((kase, a), []).append((p, 1e3 * w))
    lines.append("")
    big = max(p for _, p, _ in recs)
    for kase in ("sort", "pattern"):
        if (kase, big, "b") in recs:
            by = {r["algo"].split("/")[0]: r for r in recs[(kase, big, "b")]["results"]}
            staged = {a: by[a]["median_s"] for a in ("two_stage", "mesh", "four_stage") if a in by}
            if "direct" in by and staged:
                b = min(staged, key=staged.get)
                lines.append(f"**{kase}, P = {big}, blocking:** four_stage (A4) takes "
                             f"{staged.get('four_stage', float('nan')) / by['direct']['median_s']:.2f}x direct's (A1) "
                             f"collective time, the best staged algorithm ({b}) {staged[b] / by['direct']['median_s']:.2f}x"
                             + (f", SMPI's MPI_Alltoallv {by['native']['median_s'] / by['direct']['median_s']:.2f}x" if "native" in by else "") + ".")
    lines += ["", "Paper 001's blocking-mode claim (A4 ahead of A1 and A2 as P grows) holds inside the",
              "application where the ratios above are below 1; A3 (mesh) ahead of A4 on these square P is",
              "what irregular.md found for the collective too. In n1 / n2 every message of A1 is posted at",
              "once, and A1 is the fastest libcomm algorithm at every P, as in irregular.md's n1 tables.",
              "In the sample sort every message holds about 10 records, and A4's two distribution stages",
              "deal them out one record per bucket: each run is a single 22-byte record behind its 24-byte",
              "header (`libcomm::simulate_alltoallv` with 10 records between every pair at P = 100: four_stage",
              "receives 88,000 B of payload and 96,000 B of headers per rank, mesh 44,000 and 4,800). That is",
              "why four_stage trails direct in the sort and leads it in Pattern1.", ""]
    if plots and plot:
        fig, axes = new_figure(2, (10, 4))
        for (kase, a), pts in sorted(plot.items()):
            ax = axes[0 if kase == "sort" else 1]
            pts.sort()
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=a)
        for ax, kase in zip(axes, ("sample sort", "Pattern1")):
            ax.set_title(f"{kase}: whole redistribution, mode b")
            ax.set_xlabel("P")
            ax.set_ylabel("simulated ms")
            ax.legend(fontsize=7)
        lines += save_figure(fig, out, "apps_redistribute.png", "redistribution at scale")
    return lines


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    d, out = args
    os.makedirs(out, exist_ok=True)
    plots = True
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        plots = False
    lines = ["# The papers' application speed-ups, reproduced by the mini-apps", "",
             "Written by `scripts/reproduce/apps.sh` (`apps_report.py " + d + " " + out + "`) from the records in",
             f"`{d}/`. Every run is a SimGrid simulation with the local work charged by a cost model,",
             "so it is deterministic: one timed repetition after a validated warm-up. Every run's",
             "validation passed (apps.sh fails otherwise).", ""]
    if not plots:
        lines += ["(No plots: this Python cannot import matplotlib.)", ""]
    for section in (cpmd_section, cube_section, redistribute_section):
        lines += section(d, out, plots)
    with open(os.path.join(out, "apps.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"apps_report.py: wrote {os.path.join(out, 'apps.md')}")


if __name__ == "__main__":
    main()
