#!/usr/bin/env python3
"""Runs a command and passes only when it ends as the test says it must.

  expect.py [--exit N] [--expect REGEX]... [--forbid REGEX]... [--error-line PROGRAM MESSAGE]
            [--env NAME=VALUE]... -- COMMAND [ARGS...]

The checks, all of them required:
  --exit N        the command's exit status is N (default 0). A command killed by a signal
                  never passes, whatever N is.
  --expect REGEX  the output matches REGEX somewhere. The output is stdout followed by
                  stderr, each captured whole: mpiexec forwards the two streams of every
                  rank in chunks, so merged into one pipe a line of one could be cut by
                  the other. As in CTest's PASS_REGULAR_EXPRESSION, `.` also matches a
                  newline; (?m) makes ^ and $ match at line ends.
  --forbid REGEX  the output does not match REGEX (e.g. a route that must not be `pmpi`).
  --error-line PROGRAM MESSAGE
                  bad input: the output holds the whole line "PROGRAM: error: MESSAGE"
                  (MESSAGE a regular expression matched to the end of the line), every other
                  line that says "error" is that same line (one error, however many ranks
                  print it), and --exit defaults to 2.
  --env NAME=VALUE  set in the command's environment.

CTest's PASS_REGULAR_EXPRESSION ignores the exit status: a program that printed
"validation: PASS" and then crashed, hung in MPI_Finalize (until the test's timeout) or
exited 1 would pass. This driver checks both, and prints the command's output followed
by one line saying what failed, so that `ctest --output-on-failure` shows why.
"""
import os
import re
import signal
import subprocess
import sys


def parse(argv):
    opts = {"exit": None, "expect": [], "forbid": [], "error_line": None, "env": {}}
    i = 0
    while i < len(argv) and argv[i] != "--":
        a = argv[i]
        need = 2 if a == "--error-line" else 1
        if a not in ("--exit", "--expect", "--forbid", "--error-line", "--env") or i + need >= len(argv):
            sys.exit(f"expect.py: bad arguments near '{a}' (see the header of {__file__})")
        if a == "--exit":
            opts["exit"] = int(argv[i + 1])
        elif a == "--error-line":
            opts["error_line"] = (argv[i + 1], argv[i + 2])
        elif a == "--env":
            name, _, value = argv[i + 1].partition("=")
            opts["env"][name] = value
        else:
            opts[a[2:]].append(argv[i + 1])
        i += 1 + need
    command = argv[i + 1:]
    if not command:
        sys.exit("expect.py: no command after --")
    if opts["exit"] is None:
        opts["exit"] = 2 if opts["error_line"] else 0
    return opts, command


def status_text(code):
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "an unknown signal"
        return f"was killed by signal {-code} ({name})"
    return f"exited with {code}"


def problems(opts, code, out):
    found = []
    if code != opts["exit"] or code < 0:
        found.append(f"the command {status_text(code)}, want exit status {opts['exit']}")
    for pattern in opts["expect"]:
        if not re.search(pattern, out, re.DOTALL):
            found.append(f"the output lacks /{pattern}/")
    for pattern in opts["forbid"]:
        m = re.search(pattern, out, re.DOTALL)
        if m:
            found.append(f"the output holds /{pattern}/: '{m.group(0)[:200]}'")
    if opts["error_line"]:
        program, message = opts["error_line"]
        line = re.compile(re.escape(program) + r": error: (?:" + message + r")\Z")
        lines = [l for l in out.splitlines() if re.search(r"\berror\b", l, re.IGNORECASE)]
        if not any(line.match(l) for l in lines):
            found.append(f"no line '{program}: error: {message}'")
        others = [l for l in lines if not line.match(l)]
        if others:
            found.append(f"other error lines besides the expected one: {others[:3]}")
    return found


# Open MPI's launcher sometimes cannot make its session directory under /tmp while other
# jobs start and end beside it (a busy machine, ctest -j): "orte_init failed ...
# orte_session_dir failed". The program did not run as the test meant, so the command runs
# again, at most twice more; any other failure counts at once.
LAUNCHER_FAILED = "orte_session_dir failed"
LAUNCH_ATTEMPTS = 3


def run(command, env):
    """(exit status, output) of one run: stdout followed by stderr."""
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    streams = [p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")]
    return p.returncode, "".join(text if text.endswith("\n") or not text else text + "\n" for text in streams)


def main():
    opts, command = parse(sys.argv[1:])
    env = dict(os.environ, **opts["env"])
    for attempt in range(1, LAUNCH_ATTEMPTS + 1):
        try:
            code, out = run(command, env)
        except OSError as e:
            print(f"expect.py: FAIL: cannot run {command[0]}: {e}")
            return 1
        sys.stdout.write(out)
        found = problems(opts, code, out)
        if not found or LAUNCHER_FAILED not in out or attempt == LAUNCH_ATTEMPTS:
            break
        print(f"expect.py: Open MPI's launcher failed ({LAUNCHER_FAILED}); running the command again")
    if found:
        for f in found:
            print(f"expect.py: FAIL: {f}")
        return 1
    print(f"expect.py: PASS ({status_text(code)}, {len(opts['expect'])} pattern(s) found"
          + (", the error line" if opts["error_line"] else "") + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
