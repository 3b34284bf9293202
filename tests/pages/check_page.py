#!/usr/bin/env python3
"""Regenerates pages of docs/results from their records and compares them byte for byte.

  check_page.py REGISTRY SOURCE_DIR [--page PAGE] [--python PYTHON]

REGISTRY holds one line per page, "PAGE | COMMAND | RECORDS" (tests/pages/pages.txt says
more). For each line (or the one whose PAGE is --page): every RECORDS path exists and is
named in COMMAND; COMMAND, run in SOURCE_DIR with {out} a fresh directory and {python} the
interpreter, exits 0 and writes {out}/NAME, NAME being PAGE's file name; that file equals
PAGE. Prints "check_page: PASS: PAGE" per page that regenerates, the difference otherwise;
exits 0 only when every page does.
"""
import argparse
import difflib
import os
import subprocess
import sys
import tempfile


def entries(registry):
    with open(registry) as f:
        for number, line in enumerate(f, 1):
            if line.strip() and not line.startswith("#"):
                parts = [p.strip() for p in line.split(" | ")]
                if len(parts) != 3:
                    sys.exit(f"check_page: {registry}:{number}: not 'PAGE | COMMAND | RECORDS'")
                yield parts[0], parts[1], parts[2].split()


def check(source, page, command, records, python):
    problems = [f"records {r} do not exist" for r in records if not os.path.exists(os.path.join(source, r))]
    problems += [f"records {r} are not named in the command" for r in records if r not in command]
    if problems:
        return problems
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(command.replace("{out}", out).replace("{python}", python), shell=True, cwd=source,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        made = os.path.join(out, os.path.basename(page))
        if run.returncode != 0:
            return [f"the command exited with {run.returncode}:\n{run.stdout[-2000:]}"]
        if not os.path.exists(made):
            return [f"the command wrote no {os.path.basename(page)}"]
        with open(made, encoding="utf-8") as f:
            new = f.read()
    with open(os.path.join(source, page), encoding="utf-8") as f:
        old = f.read()
    if new == old:
        return []
    diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True), page, "regenerated", n=1)
    return ["the page differs from what its records give (regenerate it with its reproduce script):\n" +
            "".join(list(diff)[:80])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("registry")
    ap.add_argument("source")
    ap.add_argument("--page")
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    pages = [e for e in entries(a.registry) if a.page in (None, e[0])]
    if not pages:
        print(f"check_page: FAIL: no page {a.page or ''} in {a.registry}")
        return 1
    failed = 0
    for page, command, records in pages:
        problems = check(a.source, page, command, records, a.python)
        if problems:
            failed += 1
            print(f"check_page: FAIL: {page}:")
            for p in problems:
                print("  " + p)
        else:
            print(f"check_page: PASS: {page} regenerates byte for byte from {', '.join(records)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
