#!/usr/bin/env python3
"""Bad input for every option of every program: each must exit non-zero with one error
line that names the option, never run on, hang or crash.

The options come from each program's own --help (CLI11's table), so a new option is
covered the day it is added. The bad values follow from the type CLI11 prints (an integer
gets empty, non-numeric, fractional, huge and out-of-range values; a choice gets an unknown
name; a file to write gets a path that cannot be written); free-text options get the values
in FREE_TEXT below, and an option missing from that table fails the test, so that no
option goes unchecked. Every program is also given an unknown option.

  bad_input.py [--jobs N] NAME=PROGRAM [NAME=PROGRAM ...]

Programs run as MPI singletons (no mpiexec), one bad value per run, with a timeout.
"""
import argparse
import concurrent.futures
import re
import subprocess
import sys

TIMEOUT = 60  # s per run: a busy machine starts MPI slowly; a bad value must not start work

# Free-text options (CLI11 type TEXT without a list of choices): the bad values of each.
# Key: option name, the same for every program that has it.
SIZE_VALUES = ["", "abc", "-8", "8,,16", "1Q", "99999999999999999999999"]
FILE_OUT = ["", "/nonexistent-dir/out"]
FILE_IN = ["", "/nonexistent-dir/in"]
FREE_TEXT = {
    "--algo": ["", "nosuch", "ring,nosuch"],
    "--min": SIZE_VALUES,
    "--max": SIZE_VALUES,
    "--sizes": SIZE_VALUES,
    "--nodes": ["", "nosuch", "ppn=0", "ppn=abc", "sizes=0", "map=x"],
    "--json": FILE_OUT,
    "--calibrate": FILE_OUT,
    "--save-learned": FILE_OUT,
    "--output": FILE_OUT,
    "--emit-cpp": FILE_OUT,
    "--topology": FILE_IN,
    "--inter": ["", "nosuch", "leader"],
    "--modes": ["", "x", "b,,n1"],
    "--predict": ["", "nosuch", "file:/nonexistent-dir/p"],
    "--ops": ["", "alltoal", "alltoall,,allgather"],
    "--decomp": ["", "cube", "slab,,pencil"],
    "--n": ["", "abc", "-4", "4x", "99999999999999999999999"],
    "--grid": ["", "abc", "0x2", "2x"],
    "--layouts": ["", "diagonal"],
    "--platform": [],  # a free label printed in the table's header: any text is valid
    "--size": ["", "abc", "-8", "1Q", "12x", "0x4x4"],  # fft3d NXxNYxNZ, linkcheck a size
    "--chunk": SIZE_VALUES,
    "--op": ["", "nosuch", "matvec,,rank1"],
    "--layout": ["", "diagonal", "rows,,cols"],
    "--order": ["", "nosuch"],
    "--mode": ["", "n3"],
    "--alltoallv": ["", "nosuch", "pairwise"],
    "--alltoallv-mode": ["", "n3"],
    "--write-topology": FILE_OUT,
    "--function": ["", "1abc", "a-b"],
    "--regular": ["", "abc", "0", "4,,2"],
    "--check": ["", "sometimes"],
    "--plan": ["", "guess"],
    "--tcp": [],
}


def options_of(help_text):
    """(name, type) for every option of a CLI11 --help table; type "" for flags."""
    found = []
    for line in help_text.splitlines():
        # "  --reps INT:INT in [1 - 1000000]=5", "  -o,--output TEXT", "  --list   list ...":
        # the type is an upper-case word (a description starts otherwise)
        m = re.match(r"^\s{2}(?:-\w,)?(--[\w-]+)(?:,-\w)?(?:\s+([A-Z][A-Z0-9_]*(?:[:=\[{][^\s]*)?)(?=\s|$))?", line)
        if not m or m.group(1) in ("--help",):
            continue
        found.append((m.group(1), m.group(2) or ""))
    return found


def bad_values(name, kind):
    """The values `name` of CLI11 type `kind` must refuse; None when the table lacks it."""
    if kind == "":
        return []  # a flag: covered by the unknown-option and value-to-flag cases
    base = kind.split("=")[0]
    if base.startswith("TEXT:{"):
        return ["", "nosuch"]
    if base.startswith("TEXT") or base.startswith("[TEXT"):
        if name not in FREE_TEXT:
            return None
        return FREE_TEXT[name]
    values = ["", "abc"]
    low = None
    rng = re.search(r"in \[(-?[\d.e+]+) - (-?[\d.e+]+)\]", base)
    if rng:
        low, high = float(rng.group(1)), float(rng.group(2))
        values.append(repr(high * 10 + 1) if "FLOAT" in base else str(int(high) * 10 + 1))
        values.append(str(int(low) - 1) if "FLOAT" not in base else repr(low - 1))
    if "POSITIVE" in base:
        values += ["0", "-1"]
    elif "NONNEGATIVE" in base or base.startswith("UINT"):
        values += ["-1"]
    if "INT" in base:
        values += ["1.5", "99999999999999999999999"]
    if "FLOAT" in base:
        values += ["1e999", "nan"]
    return values


def run(program, args):
    try:
        p = subprocess.run([program] + args, capture_output=True, text=True, timeout=TIMEOUT)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"") + (e.stderr or b"")
        return None, out.decode(errors="replace") if isinstance(out, bytes) else out


# Arguments a program needs before an option's value is looked at (schedgen needs a tree).
BASE_ARGS = {"schedgen": ["--random", "8"]}


def check(name, program, option, value):
    """None when the program refused the value as it should, else what went wrong."""
    args = [option, value] if value is not None else [option]
    if option.split("=")[0] not in ("--random", "--regular"):
        args = BASE_ARGS.get(name, []) + args
    code, out = run(program, args)
    shown = f"{name} {' '.join(repr(a) for a in args)}"
    if code is None:
        return f"{shown}: still running after {TIMEOUT} s (a bad value must be refused before any work)"
    if code == 0:
        return f"{shown}: exit code 0 (accepted)"
    if code < 0 or code > 2:
        return f"{shown}: exit code {code} (want 2: refused, not crashed or aborted)\n{out[-600:]}"
    errors = [l for l in out.splitlines() if re.search(r"\berror\b", l, re.I)]
    if len(errors) != 1:
        return f"{shown}: {len(errors)} error lines, want one:\n{out[-600:]}"
    if option.split("=")[0] not in errors[0]:
        return f"{shown}: the error line does not name {option}: {errors[0]}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("programs", nargs="+", metavar="NAME=PROGRAM")
    a = ap.parse_args()
    cases, problems = [], []
    for spec in a.programs:
        name, _, program = spec.partition("=")
        code, help_text = run(program, ["--help"])
        if code != 0 or "Options:" not in help_text:
            problems.append(f"{name} --help: exit code {code}, no option table")
            continue
        options = options_of(help_text)
        if not options:
            problems.append(f"{name} --help: no options found")
        for option, kind in options:
            values = bad_values(option, kind)
            if values is None:
                problems.append(f"{name} {option} ({kind}): no bad values in bad_input.py's FREE_TEXT table")
                continue
            cases += [(name, program, option, v) for v in values]
            if kind == "":
                cases.append((name, program, option + "=nosuch", None))  # a flag given a value
        cases.append((name, program, "--no-such-option", None))
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(lambda c: check(*c), cases))
    problems += [r for r in results if r]
    programs = len(a.programs)
    print(f"bad_input: {len(cases)} bad values and unknown options over {programs} programs, "
          f"{len(problems)} not refused as they should be")
    for p in problems:
        print("  " + p)
    print("bad_input: PASS" if not problems else "bad_input: FAIL")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
