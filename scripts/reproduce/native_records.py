"""What the simulated pages share about native: whose decision rules chose its algorithm, as
the records say (commbench's and the mini-apps' native_selector, written since
scripts/simulate.sh --native-selector; a record without it ran SMPI's own default), and the
comparisons of a rerun with the records made before (ties within TIE count as equal)."""

TIE = 0.005  # runs that differ by less than 0.5 % are taken as equal


def selector_of(meta, unrecorded="smpi (unrecorded)"):
    """The selector a record names (with the algorithm a --cfg smpi/<op>:ALGO forced, if
    any), `unrecorded` when it names none; "-" without a record."""
    if meta is None:
        return "-"
    sel = meta.get("native_selector")
    if sel is None:
        return unrecorded
    forced = meta.get("native_forced")
    return f"{sel} ({meta.get('op', '')}: {forced})" if forced else sel


def selector_sentence(records, subject):
    """'<subject> SMPI's MPI_Alltoall as the <selectors> selector decides (...).' over the
    records' selectors; `smpi` stands for a record that names none."""
    named = sorted({r.get("native_selector") or "smpi" for r in records})
    return (f"{subject} SMPI's MPI_Alltoall as the {', '.join(named) or 'recorded'} selector decides "
            "(`smpi/coll-selector`, as the records say"
            + ("; `smpi` is SMPI's own default, which posts every message at once" if "smpi" in named else "")
            + ").")


def fastest(times):
    """The keys of `times` within TIE of the least time, in their order."""
    if not times:
        return []
    best = min(times.values())
    return [k for k, t in times.items() if t <= best * (1 + TIE)]


def moved(before, now, keys):
    """(key, now / before) for the keys whose time moved by more than TIE, in `keys`' order."""
    return [(k, now[k] / before[k]) for k in keys if before[k] > 0 and abs(now[k] / before[k] - 1) > TIE]
