"""The rule every reproduction verdict of the contention pages follows (issue 41): a verdict
compares our figure with the paper's own figure for the same cell, within a band the page
states.

    reproduced         ours inside the band around the paper's figure;
    exceeds the paper  ours above the band (the effect larger than the paper measured);
    not reproduced     ours below the band, or above it where the paper's own figure has the
                       competitor ahead (there the paper did not find the effect at all).

Paper 000 gives its claim as a range of bandwidth gains; paper 003 as measured times, so
there the figure is the speed ratio of the generated routine to the fastest competitor.
"""
import statistics

REPRODUCED, EXCEEDS, NOT_REPRODUCED = "reproduced", "exceeds the paper", "not reproduced"

# Paper 000, section 4: "never performs worse and achieves at least 10% and sometimes up to
# 20% higher bandwidth when the number of active processes per SMP varies". The figure is
# [+10 %, +20 %] of bandwidth gain on uneven layouts and [0, +20 %] on the regular one (no
# gain is claimed there, and none above the experiment's 20 %); the band adds 5 points on
# each side.
P000_RANGE_UNEVEN = (0.10, 0.20)
P000_RANGE_REGULAR = (0.0, 0.20)
P000_TOLERANCE = 0.05
# Paper 003: our speed ratio (fastest other's time / the generated routine's) within 10 % of
# the paper's own ratio at that cell (Figs. 6-8).
P003_BAND = 0.10
# A model that is chaotic (ns-3's packets) gives a figure as the median of at least this many
# repetitions: a "median" of two is their mean, and no verdict rests on one.
MIN_RUNS = 3


def runs(result):
    """How many repetitions a commbench result holds."""
    return len(result.get("times_s") or [result["median_s"]])


def too_few(results):
    """The names of the results, {name: commbench result}, with fewer than MIN_RUNS
    repetitions, sorted."""
    return sorted(name for name, r in results.items() if runs(r) < MIN_RUNS)


def banded(value, lo, hi, competitor_ahead=False):
    """The verdict on `value` against the band [lo, hi] around the paper's figure."""
    if value < lo:
        return NOT_REPRODUCED
    if value > hi:
        return NOT_REPRODUCED if competitor_ahead else EXCEEDS
    return REPRODUCED


def p000_band(uneven):
    lo, hi = P000_RANGE_UNEVEN if uneven else P000_RANGE_REGULAR
    return lo - P000_TOLERANCE, hi + P000_TOLERANCE


def p000_cell(gain, uneven):
    return banded(gain, *p000_band(uneven))


def p000_layout(gains, uneven):
    """(verdict, how many cells below / inside / above the band) over a layout's gains
    (None: not run)."""
    got = [g for g in gains if g is not None]
    counts = {v: sum(1 for g in got if p000_cell(g, uneven) == v) for v in (NOT_REPRODUCED, REPRODUCED, EXCEEDS)}
    if not got:
        return "not run", counts
    if counts[NOT_REPRODUCED]:
        return NOT_REPRODUCED, counts
    if counts[EXCEEDS]:
        return EXCEEDS, counts
    return REPRODUCED, counts


def p003_cell(ours_s, other_s, paper_ours_ms, paper_other_ms):
    """(verdict, our speed ratio, the paper's) for one cell: ratio = the fastest other's time
    / the generated routine's (above 1: the routine is faster)."""
    ours, paper = other_s / ours_s, paper_other_ms / paper_ours_ms
    lo, hi = paper * (1 - P003_BAND), paper * (1 + P003_BAND)
    return banded(ours, lo, hi, competitor_ahead=paper < 1), ours, paper


def median_of(values):
    return statistics.median(values) if values else None
