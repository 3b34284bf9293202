#!/usr/bin/env python3
"""No function in the apps longer than a screen: every function definition in the C++
sources below DIR has at most LIMIT lines, from its first line to its closing brace
(lambdas count with the function they are in; comments and string contents are blanked
first, so braces inside them do not count).

  function_length.py DIR LIMIT [--exclude SUBDIR]...

Prints every function over the limit and "function_length: PASS (N functions, longest L
lines)" or "function_length: FAIL (...)"; exits 0 only on PASS.
"""
import argparse
import os
import re
import sys

HEADER_END = re.compile(r"\)\s*(?:const|noexcept|override|final|mutable|->\s*[\w:<>,\s*&]+|\s)*$")


def blank(src):
    """The source with comments, string and character literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        else:
            raw = re.match(r'R"([^(\s]*)\(', src[i:i + 20])
            if raw:
                end = ")" + raw.group(1) + '"'
                j = src.find(end, i + raw.end())
                j = n if j < 0 else j + len(end)
            elif src[i] in "\"'" and not (src[i] == "'" and i > 0 and src[i - 1].isalnum()):
                j = i + 1
                while j < n and src[j] != src[i]:
                    j += 2 if src[j] == "\\" else 1
                j += 1
            else:
                out.append(src[i])
                i += 1
                continue
        out.append(re.sub(r"[^\n]", " ", src[i:j]))
        i = j
    return "".join(out)


def functions(path):
    """(lines, first line, name) of every function defined at namespace or class scope."""
    s = blank(open(path, encoding="utf-8").read())
    stack, found, start = [], [], 0
    for i, c in enumerate(s):
        if c == "{":
            head = s[start:i].strip()
            inside_function = any(kind == "function" for kind, _, _ in stack)
            is_function = (not inside_function and HEADER_END.search(head) is not None
                           and not head.endswith("=") and not head.startswith("#"))
            first = start + len(s[start:i]) - len(s[start:i].lstrip())
            stack.append(("function" if is_function else "block", first, head))
            start = i + 1
        elif c == "}":
            if stack:
                kind, first, head = stack.pop()
                if kind == "function":
                    a, b = s.count("\n", 0, first) + 1, s.count("\n", 0, i) + 1
                    names = re.findall(r"([~\w:]+)\s*\(", head)
                    found.append((b - a + 1, a, names[0] if names else head[:40]))
            start = i + 1
        elif c == ";":
            start = i + 1
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("limit", type=int)
    ap.add_argument("--exclude", action="append", default=[])
    a = ap.parse_args()
    count, longest, over = 0, 0, []
    for root, dirs, files in os.walk(a.dir):
        dirs[:] = sorted(d for d in dirs if os.path.relpath(os.path.join(root, d), a.dir) not in a.exclude)
        for f in sorted(files):
            if not f.endswith((".cpp", ".hpp", ".h", ".cc")):
                continue
            path = os.path.join(root, f)
            for lines, first, name in functions(path):
                count += 1
                longest = max(longest, lines)
                if lines > a.limit:
                    over.append(f"  {os.path.relpath(path, a.dir)}:{first}: {name}: {lines} lines")
    for line in over:
        print(line)
    if count == 0:
        print(f"function_length: FAIL (no function found below {a.dir})")
        return 1
    verdict = "PASS" if not over else "FAIL"
    print(f"function_length: {verdict} ({count} functions, longest {longest} lines, {len(over)} over {a.limit})")
    return 0 if not over else 1


if __name__ == "__main__":
    sys.exit(main())
