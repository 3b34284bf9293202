#!/usr/bin/env python3
"""A page's code listings are the files they show: for every FILE given, the page holds a
fenced block right after the line `<!-- listing: BASENAME -->` whose text is FILE's, byte
for byte, and every example file is under 100 lines.

  listing_matches.py PAGE FILE...
"""
import os
import re
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    page = open(sys.argv[1], encoding="utf-8").read()
    problems = []
    for path in sys.argv[2:]:
        name = os.path.basename(path)
        text = open(path, encoding="utf-8").read()
        m = re.search(r"<!-- listing: " + re.escape(name) + r" -->\n```[a-z+]*\n(.*?)```\n", page, re.DOTALL)
        if not m:
            problems.append(f"{name}: no listing after '<!-- listing: {name} -->'")
        elif m.group(1) != text:
            problems.append(f"{name}: the listing differs from {path}")
        if text.count("\n") >= 100:
            problems.append(f"{name}: {text.count(chr(10))} lines, the template promises under 100")
    for p in problems:
        print("  " + p)
    print("listing_matches: " + ("PASS" if not problems else "FAIL") + f" ({len(sys.argv) - 2} listings)")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
