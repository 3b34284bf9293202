#!/usr/bin/env python3
"""docs/results/auto.md from the records of scripts/reproduce/auto.sh (issue 33).

Every number and every verdict below comes from the JSON records in --records: for each
platform, rank count, operation and block size, the best single algorithm (native
included; an algorithm whose documented fallback ran is its fallback's row, not its own)
against auto under its three policies. The targets are the issue's: online within 5 % of
the best, model within 25 %.
  auto_report.py --records DIR [--dropin docs/results/dropin_apps.md]
"""
import argparse
import collections
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from native_records import selector_of  # noqa: E402

INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "inputs")  # platforms, tuning
ONLINE_LIMIT, MODEL_LIMIT = 1.05, 1.25
POLICIES = ("online", "model", "table", "uncalibrated")
LIMITS = {"online": ONLINE_LIMIT, "model": MODEL_LIMIT, "table": MODEL_LIMIT, "uncalibrated": MODEL_LIMIT}
# A simulated row's runs of their own, by record suffix: the policy each one times (its
# auto:model rows are uncalibrated's: the model without the platform's .model file).
OWN_RUNS = {"table": "table", "model": "model", "uncalibrated": "model"}
SUMMARY_POLICIES = ("online", "model", "uncalibrated")  # the summary's verdicts (uncalibrated: simulations)
OPS = ("alltoall", "allgather", "reduce_scatter", "alltoallv")
PLATFORM_TEXT = {
    "flat512": "flat512: one switch, 512 hosts (one rank each) on 1 Gbit/s links, the switch's backbone 10 Gbit/s "
               "shared by all (inputs/platforms/flat512.xml)",
    "tree16x16": "tree16x16: two-level fat tree, 16 leaf switches of 16 hosts (rank r on leaf r mod 16), each leaf "
                 "on 4 uplinks (inputs/platforms/tree16x16.xml)",
    "cluster64x8": "cluster64x8: 64 nodes of 8 cores (8 ranks a node, shared memory inside)",
}


MATRIX_RANKS = (16, 64, 256)  # the rank counts issue 33 asks for


def skipped_line(path, platform, np_, op):
    """A NAME.skipped record (its command, then what happened) as a line of the list."""
    cmd, _, what = open(path).read().strip().partition("\n")
    return f"- {platform}, {np_} ranks, {op}: {what.strip()}: `{cmd.strip()}`"


def unmeasured(records, measured):  # measured: {(platform, ranks, op): the record's metadata}
    """The platform, rank count and operation triples of the matrix without a record: a run
    stopped by auto.sh --sim-timeout or by hand (NAME.skipped: its command, then what happened),
    or none."""
    platforms = sorted({k[0] for k in measured})
    out = []
    for platform in platforms:
        for np_ in MATRIX_RANKS:
            for op in OPS:
                if (platform, np_, op) in measured:
                    continue
                path = os.path.join(records, f"sim_{platform}_np{np_}_{op}.skipped")
                if os.path.exists(path):
                    out.append(skipped_line(path, platform, np_, op))
                else:
                    out.append(f"- {platform}, {np_} ranks, {op}: not run")
    slots = {p: platform_slots(p) for p in platforms}
    for p in platforms:
        full = [n for n in MATRIX_RANKS if slots[p] == n]
        if full:
            runs = {op: meta for (q, np_, op), meta in measured.items() if q == p and np_ == full[0]}
            still = sorted(op for op, meta in runs.items() if not meta.get("arrival_skew"))
            how = ("its runs there vary by the ranks' arrival skew instead (commbench --arrival-skew)"
                   if not still else
                   f"{', '.join(still)} there repeat{'s' if len(still) == 1 else ''} exactly: run without the "
                   "ranks' arrival skew (commbench --arrival-skew), the variability such a platform can have" +
                   (f" ({', '.join(sorted(set(runs) - set(still)))} ran with it)" if len(still) < len(runs) else ""))
            out.append(f"- {p}, {full[0]} ranks: every core of the platform runs a rank, so no cross traffic can "
                       f"run beside them (commbench --cross-traffic needs hosts without a rank); {how}")
    beyond = [p for p in platforms if slots[p] is not None and slots[p] < 1024]
    if beyond:
        out.append("- 1024 ranks (issue 40 asks for alltoall and allgather on one platform): not run; at one rank "
                   "per core none of these platforms holds them (" +
                   ", ".join(f"{p} {slots[p]}" for p in beyond) + " cores, from inputs/platforms/PLATFORM.xml)")
    for path in sorted(glob.glob(os.path.join(records, "sim_*_np1024_*.skipped"))):
        m = re.match(r"sim_(\w+)_np1024_(\w+)\.skipped$", os.path.basename(path))
        out.append(skipped_line(path, m.group(1), 1024, m.group(2)))
    if not out:
        return []
    return ["Not measured (of " + ", ".join(platforms) + " at " + ", ".join(map(str, MATRIX_RANKS)) +
            " ranks, four operations each):", ""] + out + [""]


def platform_slots(platform):
    """Cores of the platform file's clusters (radical ranges times core=), or None."""
    path = os.path.join(INPUTS, "platforms", platform + ".xml")
    if not os.path.exists(path):
        return None
    total = 0
    for m in re.finditer(r"<cluster\b[^>]*>", open(path).read()):
        tag = m.group(0)
        cores = re.search(r'core="(\d+)"', tag)
        for part in re.search(r'radical="([^"]+)"', tag).group(1).split(","):
            lo, _, hi = part.partition("-")
            total += (int(hi or lo) - int(lo) + 1) * (int(cores.group(1)) if cores else 1)
    return total


def model_text(platform):
    """What the platform's calibration says about the network between its nodes."""
    path = os.path.join(INPUTS, "tuning", platform + ".model")
    try:
        text = open(path).read()
    except OSError:
        return ""
    ranks = re.search(r"--calibrate on (\d+) ranks", text)
    links = re.search(r"^network_links = ([0-9.eE+-]+)", text, re.M)
    nodes = re.search(r"node map (\d+) nodes", text)
    where = f" (commbench --calibrate on {ranks.group(1)} ranks)" if ranks else ""
    if links and float(links.group(1)) > 0:
        return f"; the model's network carries {float(links.group(1)):.1f} nodes' links at once{where}"
    if links and nodes and int(nodes.group(1)) >= 3:
        return f"; the model's network keeps up with all {nodes.group(1)} nodes' links{where}"
    return f"; the model has no network limit (its calibration could not see one{where})"


def size_text(b):
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k} {unit}"
    return f"{b} B"


def load(paths):
    """{block: {algo: (median_s, ran, row)}}: medians over the runs of one command."""
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    meta = None
    for p in paths:
        with open(p) as f:
            j = json.load(f)
        meta = meta or j
        for r in j["results"]:
            times[r["block_bytes"]][r["algo"]].append((r["median_s"], r["ran"], r))
    out = {}
    for b, algos in times.items():
        out[b] = {}
        for a, runs in algos.items():
            med = statistics.median(t for t, _, _ in runs)
            out[b][a] = (med, runs[0][1], [r for _, _, r in runs])
    return meta, out


def base(algo):
    return algo.split("/")[0]


def evaluate(rows):
    """Per block: best single (name, s), and for each auto policy (ran, ratio, rows)."""
    table = {}
    for b in sorted(rows):
        d = rows[b]
        singles = {a: v[0] for a, v in d.items() if not a.startswith("auto") and base(v[1]) == base(a)}
        if not singles:
            continue
        best = min(singles, key=singles.get)
        entry = {"best": (best, singles[best])}
        for pol in POLICIES:
            hits = [a for a in d if base(a) == "auto:" + pol]
            if hits:
                t, ran, runs = d[hits[0]]
                entry[pol] = (ran, t / singles[best], runs)
        table[b] = entry
    return table


def fmt_ratio(pol, r):
    mark = "" if r <= LIMITS[pol] else " **"
    return f"{r:.2f}{mark}"


def policy_cells(e, policies):
    """What each policy ran and its ratio to the best, '-' where it has no row."""
    cells = []
    for pol in policies:
        cells += [e[pol][0], fmt_ratio(pol, e[pol][1])] if pol in e else ["-", "-"]
    return cells


def ratio_table(ev, policies, extra=()):
    """One run's table: each size's best single algorithm, then what each policy ran and its
    ratio to the best; `extra`: (header, cell(block)) pairs for last columns."""
    header = "| block | best single | us | " + " | ".join(f"{p} ran | {p} / best" for p in policies)
    align = "|---:|---|---:|" + "---|---:|" * len(policies)
    for title, _ in extra:
        header += " | " + title
        align += "---:|"
    lines = [header + " |", align]
    for b, e in ev.items():
        name, t = e["best"]
        cells = policy_cells(e, policies) + [cell(b) for _, cell in extra]
        lines.append(f"| {size_text(b)} | {name} | {t * 1e6:.1f} | " + " | ".join(cells) + " |")
    return lines


SUMMARY_RUNS = []  # one run_summary per run, simulated then real, filled by the sections
CALIBRATED_RUNS = []  # (ranks, operation, model ratios) of the real runs on a calibration


def conditions(metas, detail):
    """What the verdicts below rest on, counted from the runs' commands and records (metas:
    each run's record, as sim_section loaded it): online's warm-up, repetitions, and whether
    anything varied between the timings online chose from and those it is scored on."""
    n = len(detail)
    after0 = sum(1 for _, _, paths, _ in detail if "LIBCOMM_ONLINE_AFTER=0" in (cmd_of(paths["main"]) or ""))
    few = sum(1 for key, _, _, _ in detail if (metas[key].get("reps") or 0) < 3)
    traffic, skew = collections.Counter(), collections.Counter()
    still = 0  # runs with neither: a simulation that repeats exactly
    for key, _, _, _ in detail:
        ct, sk = metas[key].get("cross_traffic"), metas[key].get("arrival_skew")
        if ct:
            traffic[f"{ct['pairs']} pairs, seed {ct['seed']}, {ct['mean_bytes'] / 1024:g} KiB mean messages, "
                    f"{ct['gap_us']:g} us mean gaps"] += 1
        if sk:
            skew[f"seed {sk['seed']}, uniform 0-{2 * sk['mean_us']:g} us"] += 1
        still += not ct and not sk
    listed = lambda c: "; ".join(f"{k}: {v} runs" if v > 1 else f"{k}: 1 run" for k, v in sorted(c.items()))
    out = [f"What these verdicts rest on: {after0} of {n} runs set LIBCOMM_ONLINE_AFTER=0 (online measured from "
           f"the first call, not after its default warm-up); {few} of {n} ran fewer than 3 repetitions; "
           f"{sum(traffic.values())} of {n} ran with cross traffic (commbench --cross-traffic: "
           + (listed(traffic) if traffic else "none") + ")"]
    if skew:
        out[0] += (f"; {sum(skew.values())} of {n} with the ranks reaching every call apart (commbench "
                   f"--arrival-skew: {listed(skew)})")
    together = [key for key, _, _, _ in detail if "synchronized_start" in metas[key]]
    if together:
        late = sum(metas[key]["synchronized_start"].get("late_starts", 0) for key in together)
        named = ", ".join(f"{k[0]} {k[1]} ranks {k[2]}" for k in together) if len(together) < n else "all of them"
        out[0] += (f"; {len(together)} of {n} time every call from one agreed instant after the barrier "
                   f"(commbench --synchronized-start: {named}; {late} late starts)" +
                   (", the others from each rank's own exit from the barrier" if len(together) < n else ""))
    out[0] += "."
    if still:
        which = "with neither" if skew else "without it"
        out[0] += ((f" The {still} runs {which} repeat exactly" if still > 1 else
                    f" The run {which} repeats exactly") + ", so online was scored there on the very "
                   "timings it chose from.")
    return out + [""]


def cmd_mismatch(cmd, path):
    """Why the command printed for a record cannot have made it, or None: the record's own
    command line (commbench's "command", in records made since it is written), else its
    repetitions and number of block sizes against the command's --reps and --sizes."""
    with open(path) as f:
        j = json.load(f)
    args = cmd.split(" commbench ", 1)[1] if " commbench " in cmd else None
    if "command" in j:
        return None if args is None or args.strip() == j["command"].strip() else \
            f"the record's own command line is `{j['command']}`"
    m_sizes, m_reps = re.search(r"--sizes (\S+)", cmd), re.search(r"--reps (\d+)", cmd)
    n = len({r["block_bytes"] for r in j["results"]})
    if m_sizes and len(m_sizes.group(1).split(",")) != n or m_reps and int(m_reps.group(1)) != j.get("reps"):
        return (f"the record holds {n} sizes x {j.get('reps')} repetition(s), the command asks for "
                f"{len(m_sizes.group(1).split(',')) if m_sizes else '?'} x {m_reps.group(1) if m_reps else '?'}: "
                "the command that made it was not kept")
    return None


def cmd_of(path):
    cmd = os.path.splitext(path)[0] + ".cmd"
    if os.path.exists(cmd):
        with open(cmd) as f:
            return f.read().strip().replace(os.getcwd() + "/", "")
    return None


def sim_section(records):
    found = collections.defaultdict(dict)
    for p in glob.glob(os.path.join(records, "sim_*_np*_*.json")):
        m = re.match(r"sim_(\w+?)_np(\d+)_(\w+?)(\.table|\.model|\.uncalibrated)?\.json$", os.path.basename(p))
        if not m:
            continue
        key = (m.group(1), int(m.group(2)), m.group(3))
        found[key][m.group(4)[1:] if m.group(4) else "main"] = p
    if not found:
        return [], []
    lines, summary = [], []
    worst = {pol: (0, None) for pol in POLICIES}
    detail, metas = [], {}
    for key in sorted(found, key=lambda k: (k[0], k[1], OPS.index(k[2]) if k[2] in OPS else 9)):
        platform, np_, op = key
        paths = found[key]
        if "main" not in paths:
            continue
        meta, rows = load([paths["main"]])
        metas[key] = meta
        for pol, timed in OWN_RUNS.items():  # a policy's own run (deterministic: runs compare)
            if pol not in paths:
                continue
            _, prow = load([paths[pol]])
            for b, d in prow.items():
                if b not in rows:
                    continue
                for a in [a for a in rows[b] if base(a) == "auto:" + pol]:
                    del rows[b][a]
                for a, v in d.items():
                    if base(a) == "auto:" + timed:
                        rows[b]["auto:" + pol + a[len(base(a)):]] = v
        ev = evaluate(rows)
        per = {pol: max((e[pol][1] for e in ev.values() if pol in e), default=None) for pol in POLICIES}
        for pol in POLICIES:
            if per[pol] is not None and per[pol] > worst[pol][0]:
                worst[pol] = (per[pol], key)
        summary.append((key, per, len(ev), selector_of(meta)))
        varies = what_varies(meta)
        SUMMARY_RUNS.append(run_summary(platform, np_, op, selector_of(meta), ev, rows, varies))
        detail.append((key, ev, paths, rows))
    lines.append("## SimGrid: auto / best single algorithm")
    lines.append("")
    lines.append("Worst ratio over the sizes 8 B - 1 MiB of each run (the detail tables below give every size; "
                 "`**` marks a ratio above the target: online 1.05, model, table and uncalibrated 1.25; "
                 "uncalibrated: the model without the platform's .model file, on the network the platform declares, "
                 "'-' where that run was not made).")
    lines.append("")
    lines.append("| platform | ranks | operation | native's selector | sizes | " + " | ".join(POLICIES) + " |")
    lines.append("|---|---:|---|---|---:|" + "---:|" * len(POLICIES))
    for (platform, np_, op), per, n, sel in summary:
        cells = [fmt_ratio(pol, per[pol]) if per[pol] is not None else "-" for pol in POLICIES]
        lines.append(f"| {platform} | {np_} | {op} | {sel} | {n} | " + " | ".join(cells) + " |")
    lines.append("")
    sels = collections.Counter(sel for _, _, _, sel in summary)
    lines.append("Native's selector (scripts/simulate.sh --native-selector; smpi/coll-selector): "
                 + ", ".join(f"{sel} in {n} of {len(summary)} runs" for sel, n in sorted(sels.items())) + "."
                 + (" \"smpi (unrecorded)\" marks a record made before simulate.sh chose and recorded a "
                 "selector: native there is SMPI's own default, not Open MPI's decision." if "smpi (unrecorded)" in sels else ""))
    lines.append("")
    lines += unmeasured(records, metas)
    lines += conditions(metas, detail)
    for pol in POLICIES:
        r, key = worst[pol]
        if key is None:
            continue
        within = sum(1 for _, ev, _, _ in detail for e in ev.values() if pol in e and e[pol][1] <= LIMITS[pol])
        total = sum(1 for _, ev, _, _ in detail for e in ev.values() if pol in e)
        verdict = "within its target" if within == total else "misses its target"
        lines.append(f"- **{pol}** {verdict} ({LIMITS[pol]:.2f}) where measured: within it at {within} of {total} sizes; "
                     f"its worst ratio is {r:.2f} ({key[0]}, {key[1]} ranks, {key[2]}).")
    lines.append("")
    misses = []
    for (platform, np_, op), ev, paths, rows in detail:
        for b, e in ev.items():
            if "model" not in e or e["model"][1] <= MODEL_LIMIT:
                continue
            best, tb = e["best"]
            best, pick = base(best), base(e["model"][0])  # (alltoallv's rows name their mode: mesh/b)
            singles = {base(a): v for a, v in rows.get(b, {}).items() if not a.startswith("auto")}
            # The model run's own predictions (its parameters may be newer than the main run's).
            model_row = e["model"][2][0] if e["model"][2] else {}
            weighed = model_row.get("auto_model_all_s", {})
            pred = {n: weighed.get(n, singles[n][2][0].get("auto_model_s")) for n in (best, pick) if n in singles}
            if op == "alltoallv" and "auto_model_mean_bytes" not in model_row:
                misses.append(f"- {platform}, {np_} ranks, {op}, {size_text(b)}: the model ran {pick} and {best} was "
                              f"fastest; they took {singles[pick][0] * 1e6:.0f} and {tb * 1e6:.0f} us (the record's "
                              "predictions price every message at M_max, not the pattern's mean: not printed).")
                continue
            if None in pred.values() or len(pred) < 2:
                continue
            misses.append(f"- {platform}, {np_} ranks, {op}, {size_text(b)}: the model predicted {pick} "
                          f"{pred[pick] * 1e6:.0f} us and {best} {pred[best] * 1e6:.0f} us; they took "
                          f"{singles[pick][0] * 1e6:.0f} and {tb * 1e6:.0f} us.")
    if misses:
        lines.append("Where the model misses by more than 25 %, what it predicted and what was measured "
                     "(each algorithm's own row of the run):")
        lines.append("")
        lines += misses
        lines.append("")
    mismatched, details = [], []
    for (platform, np_, op), ev, paths, _ in detail:
        details.append(f"### {platform}, {np_} ranks, {op}")
        details.append("")
        sel = selector_of(load([paths["main"]])[0])
        details.append(f"Native: SMPI's {op} as the {sel} selector decides." if sel != "smpi (unrecorded)" else
                       f"Native: SMPI's own default {op} (the record names no selector: it was made before "
                       "simulate.sh recorded one).")
        details.append("")
        for which in ("main", *OWN_RUNS):
            c = cmd_of(paths[which]) if which in paths else None
            if c:
                why = cmd_mismatch(c, paths[which])
                if why:
                    mismatched.append(f"- {platform}, {np_} ranks, {op} ({which} run): {why}.")
                details.append(f"    {c}" + (f"\n\n(This command does not match its record: {why}.)\n" if why else ""))
        details.append("")
        details += ratio_table(ev, POLICIES)
        details.append("")
        details += before_rerun(paths["main"], ev)
    if mismatched:
        lines.append("Commands that do not match their records (the detail tables print them with the same remark):")
        lines.append("")
        lines += mismatched
        lines.append("")
    lines += details
    return lines, summary


def before_rerun(path, ev):
    """Where a run was redone under Open MPI's decision and its record from before is kept
    (before_ompi/NAME.json beside it): the best single algorithm and online's pick per size
    then and now, and which changed."""
    before = os.path.join(os.path.dirname(path), "before_ompi", os.path.basename(path))
    if not os.path.exists(before):
        return []
    meta, rows = load([before])
    old = evaluate(rows)
    out = [f"Before this rerun (before_ompi/{os.path.basename(path)}; native there: {selector_of(meta)}, "
           f"{meta.get('reps')} repetition(s)):", "",
           "| block | best single then | us | best single now | us | online ran then | online ran now |",
           "|---:|---|---:|---|---:|---|---|"]
    moved, compared = [], 0
    for b, e in ev.items():
        if b not in old:
            continue
        compared += 1
        (n0, t0), (n1, t1) = old[b]["best"], e["best"]
        o0 = old[b]["online"][0] if "online" in old[b] else "-"
        o1 = e["online"][0] if "online" in e else "-"
        out.append(f"| {size_text(b)} | {n0} | {t0 * 1e6:.1f} | {n1} | {t1 * 1e6:.1f} | {o0} | {o1} |")
        if base(n0) != base(n1):
            moved.append(size_text(b))
    out.append("")
    out.append(f"The best single algorithm changed at {len(moved)} of {compared} sizes"
               + (f" ({', '.join(moved)})." if moved else "."))
    return out + [""]


def warm_of(rows, b, e):
    """The warm-up of online's first measuring row at block b: (calls, seconds, the winner's
    seconds per call), or None (commbench's `all` puts `auto`, the default policy, before
    `auto:online`, which then finds the class decided)."""
    if "online" not in e:
        return None
    first = [r for a, v in rows[b].items() if base(a) in ("auto", "auto:online") for r in v[2]]
    if not first:
        return None
    most = max(r.get("warmup_calls", 0) for r in first)
    rs = [r for r in first if r.get("warmup_calls", 0) == most]
    return (statistics.median(r.get("warmup_calls", 0) for r in rs),
            statistics.median(r.get("warmup_s", 0.0) for r in rs), e["online"][1] * e["best"][1])


def what_varies(meta):
    """What differs between a simulated run's calls: its cross traffic, its arrival skew, or
    nothing (a simulation repeats exactly)."""
    ct, sk = meta.get("cross_traffic"), meta.get("arrival_skew")
    parts = ([f"cross traffic ({ct['pairs']} pairs)"] if ct else []) + \
            ([f"arrival skew (0-{2 * sk['mean_us']:g} us)"] if sk else [])
    return ", ".join(parts) if parts else "nothing: repeats exactly"


def run_summary(where, np_, op, sel, ev, rows, varies):
    """One row of the page's summary: a run's sizes, what varied between its timings, each
    policy's sizes within target and worst ratio, and online's warm-up (median calls over
    the sizes, the most time beyond as many calls of the winner)."""
    out = {"where": where, "np": np_, "op": op, "sel": sel, "sizes": len(ev), "varies": varies}
    for pol in SUMMARY_POLICIES:
        rs = [e[pol][1] for e in ev.values() if pol in e]
        out[pol] = (sum(1 for r in rs if r <= LIMITS[pol]), len(rs), max(rs) if rs else None)
    warms = [w for b, e in ev.items() for w in [warm_of(rows, b, e)] if w]
    out["calls"] = statistics.median(w[0] for w in warms) if warms else None
    out["extra_ms"] = max((w[1] - w[0] * w[2]) * 1e3 for w in warms) if warms else None
    return out


def summary_section(runs):
    if not runs:
        return []
    lines = ["## Summary: simulated and real runs side by side", ""]
    lines.append("One row per run: where it ran, native's selector (simulations), the sizes, what varied "
                 "between the timings online chose from and those it is scored on, for online "
                 "and model the sizes within target (online 1.05, model 1.25; `**` marks a worst ratio "
                 "beyond it) and the worst ratio to the best single algorithm, and online's warm-up: the "
                 "median number of calls over the sizes before it settled, and the most time those calls "
                 "took beyond as many calls of what it then ran (simulated time in a simulation). The model "
                 "of a simulated row is on the platform's calibration (inputs/tuning/PLATFORM.model), that of a "
                 "real row on the library's defaults"
                 + ("; the simulated bullet below adds the model without the calibration (uncalibrated)"
                    if any(r["uncalibrated"][1] for r in runs) else "")
                 + ". What the simulated verdicts rest on is said under the SimGrid section's table.")
    lines.append("")
    lines.append("| where | ranks | operation | native's selector | sizes | what varies | online within | "
                 "online worst | model within | model worst | warm-up calls | warm-up beyond the winner, ms |")
    lines.append("|---|---:|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in runs:
        cells = []
        for pol in ("online", "model"):
            w, n, worst = r[pol]
            cells += [f"{w} of {n}", fmt_ratio(pol, worst) if worst is not None else "-"]
        calls = f"{r['calls']:.0f}" if r["calls"] is not None else "-"
        extra = f"{r['extra_ms']:.2f}" if r["extra_ms"] is not None else "-"
        lines.append(f"| {r['where']} | {r['np']} | {r['op']} | {r['sel']} | {r['sizes']} | {r['varies']} | "
                     + " | ".join(cells)
                     + f" | {calls} | {extra} |")
    lines.append("")
    for kind, label in (("sim", "Simulated"), ("real", "On this machine")):
        rs = [r for r in runs if (r["where"] == "this machine") == (kind == "real")]
        if not rs:
            continue
        parts = []
        for pol in SUMMARY_POLICIES:
            w = sum(r[pol][0] for r in rs)
            n = sum(r[pol][1] for r in rs)
            worst = max((r for r in rs if r[pol][2] is not None), key=lambda r: r[pol][2], default=None)
            if worst is None:
                continue
            parts.append(f"{pol} is within its target at {w} of {n} sizes, worst {worst[pol][2]:.2f} "
                         f"({worst['where']}, {worst['np']} ranks, {worst['op']})")
        warm = [r for r in rs if r["extra_ms"] is not None]
        if warm:
            most = max(warm, key=lambda r: r["extra_ms"])
            parts.append(f"the warm-up's median calls per run range from "
                         f"{min(r['calls'] for r in warm):.0f} to {max(r['calls'] for r in warm):.0f}, and cost at most "
                         f"{most['extra_ms']:.2f} ms beyond the winner's time ({most['where']}, {most['np']} ranks, "
                         f"{most['op']})")
        lines.append(f"- {label} ({len(rs)} runs): " + "; ".join(parts) + ".")
    if CALIBRATED_RUNS:
        ratios = [r for _, _, rs in CALIBRATED_RUNS for r in rs]
        worst = max(CALIBRATED_RUNS, key=lambda c: max(c[2], default=0))
        lines.append(f"- On this machine with its own parameters (`commbench --calibrate`; the model alone, "
                     f"{len(CALIBRATED_RUNS)} commands, each scored against its own runs' best single algorithm): "
                     f"model is within its target at {sum(1 for r in ratios if r <= LIMITS['model'])} of "
                     f"{len(ratios)} sizes, worst {max(ratios):.2f} ({worst[0]} ranks, {worst[1]}).")
    lines.append("")
    return lines


def real_section(records):
    runs = collections.defaultdict(list)
    for p in glob.glob(os.path.join(records, "real_np*_*.run*.json")):
        m = re.match(r"real_np(\d+)_(\w+)\.run\d+\.json$", os.path.basename(p))
        if m:
            runs[(int(m.group(1)), m.group(2))].append(p)
    if not runs:
        return [], []
    lines = ["## This machine: real ranks", ""]
    lines.append("The library's defaults (online after 16 native calls, 3 timed runs per candidate, 12 up to 1 KiB; model with its "
                 "default parameters, no calibration file); each command "
                 "run several times, every figure the median of the runs' medians. \"native's spread\" is the "
                 "largest over the smallest of native's run medians: the machine's noise at that size, which a "
                 "ratio within it cannot beat. \"online ran\" is what the first run's online chose."
                 + (" The last two columns: the model on this machine's own parameters (`commbench "
                    "--calibrate`, the .model file beside the records) in runs of their own, as many, scored "
                    "against those runs' best single algorithm."
                    if glob.glob(os.path.join(records, "real_np*_*.calibrated.run*.json")) else ""))
    lines.append("")
    warm = []
    for key in sorted(runs, key=lambda k: (k[0], OPS.index(k[1]) if k[1] in OPS else 9)):
        np_, op = key
        paths = sorted(runs[key])
        meta, rows = load(paths)
        ev = evaluate(rows)
        nodes = meta.get("nodes", "")
        lines.append(f"### {np_} ranks ({nodes}), {op}: medians of {len(paths)} runs")
        lines.append("")
        c = cmd_of(paths[0])
        if c:
            lines.append(f"    {c}")
            lines.append("")
        def spread(b):
            native_runs = [r["median_s"] for r in rows[b].get("native", (0, "", []))[2]]
            ratio = max(native_runs) / min(native_runs) if native_runs and min(native_runs) > 0 else float("nan")
            return f"{ratio:.2f}"

        # The model on this machine's calibration, in runs of its own (scored against their
        # own best single algorithm).
        cal_paths = sorted(glob.glob(os.path.join(records, f"real_np{np_}_{op}.calibrated.run*.json")))
        cal = evaluate(load(cal_paths)[1]) if cal_paths else {}
        def calibrated(b, what):
            e = cal.get(b, {}).get("model")
            return "-" if e is None else e[0] if what == "ran" else fmt_ratio("model", e[1])

        extra = [("native's spread", spread)]
        if cal:
            extra += [("calibrated model ran", lambda b: calibrated(b, "ran")),
                      ("calibrated model / best", lambda b: calibrated(b, "ratio"))]
            CALIBRATED_RUNS.append((np_, op, [e["model"][1] for e in cal.values() if "model" in e]))
        lines += ratio_table(ev, ("online", "model"), extra)
        if cal_paths and cmd_of(cal_paths[0]):
            lines += ["", "Calibrated (the parameters from the first command, then the second "
                      f"{len(cal_paths)} times):", "",
                      f"    {cmd_of(os.path.join(records, f'real_np{np_}.calibrate.json'))}",
                      f"    {cmd_of(cal_paths[0])}"]
        SUMMARY_RUNS.append(run_summary("this machine", np_, op, "-", ev, rows, "the machine itself"))
        for b, e in ev.items():
            t = e["best"][1]
            if "online" in e:
                # The first online row of a size measured (commbench's `all` puts `auto`, the
                # default policy, before `auto:online`, which then finds the class decided).
                first = [r for a, v in rows[b].items() if base(a) in ("auto", "auto:online") for r in v[2]]
                most = max(r.get("warmup_calls", 0) for r in first)
                rs = [r for r in first if r.get("warmup_calls", 0) == most]
                calls = statistics.median(r.get("warmup_calls", 0) for r in rs)
                spent = statistics.median(r.get("warmup_s", 0.0) for r in rs)
                per_call = e["online"][1] * t
                warm.append((np_, op, b, calls, spent, per_call))
        lines.append("")
        within = sum(1 for e in ev.values() if "online" in e and e["online"][1] <= ONLINE_LIMIT)
        total = sum(1 for e in ev.values() if "online" in e)
        lines.append(f"online within 5 % of the best at {within} of {total} sizes.")
        lines.append("")
    return lines, warm


def warmup_section(warm):
    if not warm:
        return []
    lines = ["## Warm-up: what online costs an application", ""]
    lines.append("The online policy runs native for the first LIBCOMM_ONLINE_AFTER calls of a size class "
                 "(default 16), then times each candidate LIBCOMM_ONLINE_REPS times (default 3, and 12 for a class "
                 "of 1 KiB or less), agrees on "
                 "the winner with one MPI_Allreduce and runs it from then on. From the real runs above "
                 "(commbench's auto:online row: the calls before its timed ones, their total time, and "
                 "the same number of calls of what online then ran):")
    lines.append("")
    lines.append("| ranks | operation | block | warm-up calls | warm-up ms | as many calls of the winner, ms | extra ms |")
    lines.append("|---:|---|---:|---:|---:|---:|---:|")
    extra_max = (0.0, None)
    for np_, op, b, calls, spent, per_call in warm:
        base_ms = calls * per_call * 1e3
        extra = spent * 1e3 - base_ms
        if extra > extra_max[0]:
            extra_max = (extra, (np_, op, b, calls))
        lines.append(f"| {np_} | {op} | {size_text(b)} | {calls:.0f} | {spent * 1e3:.2f} | {base_ms:.2f} | {extra:.2f} |")
    lines.append("")
    if extra_max[1] is not None:
        np_, op, b, calls = extra_max[1]
        lines.append(f"The most the warm-up cost beyond the winner's own time is {extra_max[0]:.2f} ms "
                     f"({op}, {size_text(b)} blocks, {np_} ranks, {calls:.0f} calls): once per size class and "
                     "communicator. An application with fewer calls than LIBCOMM_ONLINE_AFTER in a class runs "
                     "native for all of them and pays a lookup per call (its candidates are predicted only "
                     "when it starts measuring).")
        lines.append("")
    return lines


DROPIN_ROW = re.compile(r"^\| (?P<app>[^|]+) \| (?P<np>\d+) \|(?:[^|]*\|){5} (?P<ratio>[0-9.]+) \|")


def dropin_section(path):
    if not path or not os.path.exists(path):
        return []
    rows, load = [], None
    with open(path) as f:
        for line in f:
            lm = re.search(r"load average at the start: ([0-9. ]+)\)", line)
            if lm:
                load = lm.group(1).strip()
            m = DROPIN_ROW.match(line)
            if m:
                rows.append((m.group("app").strip(), int(m.group("np")), float(m.group("ratio"))))
    if not rows:
        return []
    lines = ["## The drop-in at its default (online)", ""]
    lines.append(f"From [{os.path.basename(path)}]({os.path.basename(path)}) "
                 "(`scripts/reproduce/dropin_apps.sh`): time preloaded / plain MPI "
                 "(hpcc: Gflop/s plain / preloaded), medians over alternating rounds" +
                 (f"; the machine's load average when the runs started: {load} (2 cores)." if load else "."))
    lines.append("")
    lines.append("| application | ranks | preloaded / plain | within 2 % |")
    lines.append("|---|---:|---:|---|")
    for app, np_, r in rows:
        lines.append(f"| {app} | {np_} | {r:.3f} | {'yes' if r <= 1.02 else 'no'} |")
    lines.append("")
    slow = [(a, n, r) for a, n, r in rows if r > 1.02]
    if slow:
        lines.append("Slower than plain MPI by more than 2 %: " +
                     "; ".join(f"{a} at {n} ranks ({r:.3f})" for a, n, r in slow) + ".")
    else:
        lines.append("No application is slower preloaded than plain by more than 2 %.")
    lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", required=True, help="directory of auto.sh's records")
    ap.add_argument("--dropin", help="docs/results/dropin_apps.md (the drop-in's table)")
    a = ap.parse_args()
    out = ["# Auto against the best single algorithm", ""]
    out.append("Generated by `scripts/reproduce/auto.sh` (scripts/reproduce/auto_report.py) from the records in "
               "[auto/](auto/). Each row: the best single algorithm at that block size (native included; an "
               "algorithm whose fallback ran counts as its fallback), and auto under its three policies "
               "(LIBCOMM_AUTO; in a simulation online runs beside the algorithms, table and model each in a run of "
               "their own, which compare because a simulation repeats exactly; under cross traffic the separate runs see the same seeded traffic, though not at the same moments of their calls): **online** times the candidates in place on the first calls, agrees on the "
               "winner and keeps it (its time is after the warm-up); **model** picks by the cost formulas "
               "(docs/algorithms.md, \"Cost formulas\") with the platform's parameters from `commbench "
               "--calibrate` (inputs/tuning/PLATFORM.model); **table** is a later run that starts from the "
               "table online learned (`--save-learned`, then LIBCOMM_TUNING) and measures nothing; "
               "**uncalibrated** (simulations) is the model again in a run of its own without that file, as on a "
               "platform nobody calibrated: its parameters then come from the network the simulated platform "
               "declares (the route's latency and bandwidth under SMPI's factors, read, not measured: "
               "libcomm's default_cost_params).")
    out.append("")
    sim, summary = sim_section(a.records)
    if sim:
        platforms = sorted({k[0] for k, _, _, _ in summary})
        out.append("Simulated platforms (SMPI, `--simulated-payload --model-copy 1`; every algorithm timed "
                   "after one untimed call; online's warm-up and repetitions as each run's command under its "
                   "table sets them, counted under the SimGrid section's table):")
        out.append("")
        for p in platforms:
            out.append(f"- {PLATFORM_TEXT.get(p, p)}{model_text(p)}")
        out.append("")
    real, warm = real_section(a.records)
    out += summary_section(SUMMARY_RUNS)
    out += sim
    out += real
    out += warmup_section(warm)
    out += dropin_section(a.dropin)
    print("\n".join(out).rstrip() + "\n", end="")


if __name__ == "__main__":
    main()
