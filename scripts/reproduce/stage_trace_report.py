#!/usr/bin/env python3
"""Where a scheduled all-to-all on a switch tree spends its time, from a stage trace
(LIBCOMM_TRACE_STAGES=DIR, libcomm/src/core/executor.cpp) of one run.

    stage_trace_report.py DIR TOPO RATE_MBPS [--run N] [--algorithm NAME]

For the busiest link of the tree (the one that bounds the all-to-all, paper 003 s. 3) it
splits the run's time into
- ideal: the link's messages back to back at RATE (the peak bound's time),
- per-message overhead: how much longer those messages took to send than at RATE (TCP:
  handshake, slow start, headers and acknowledgements, the closing exchange),
- idle: the time no message of the link was being sent (waiting for synchronisation,
  phases whose senders were late).
A message counts from the time its stage was posted to the time the stage was done.
"""
import collections
import functools
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from topo2platform import parse  # noqa: E402


def tree_paths(topo):
    switches, machines, links, ranks = parse(topo)
    adj = collections.defaultdict(list)
    for u, v in links:
        adj[u].append(v)
        adj[v].append(u)

    @functools.lru_cache(maxsize=None)
    def parents(a):  # the tree hung from a: each node's neighbour towards a (one search per source)
        prev, todo = {a: None}, [a]
        while todo:
            x = todo.pop()
            for y in adj[x]:
                if y not in prev:
                    prev[y] = x
                    todo.append(y)
        return prev

    def path(a, b):
        prev = parents(a)
        out, x = [], b
        while prev[x] is not None:
            out.append((prev[x], x))  # a directed link
            x = prev[x]
        return out[::-1]

    return ranks, path


def main(argv):
    args = list(argv[1:])
    run, algorithm = 0, None
    if "--run" in args:
        i = args.index("--run")
        run = int(args[i + 1])
        del args[i:i + 2]
    if "--algorithm" in args:
        i = args.index("--algorithm")
        algorithm = args[i + 1]
        del args[i:i + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    folder, topo, rate = pathlib.Path(args[0]), args[1], float(args[2]) * 1e6
    ranks, path = tree_paths(topo)
    sends = []  # (rank, peer, bytes, start, end)
    first, last = float("inf"), 0.0
    for f in sorted(folder.glob("stages.*.txt")):
        rank = int(f.stem.split(".")[1])
        for line in f.read_text().splitlines():
            w = line.split()
            if int(w[1]) != run or (algorithm and w[0] != algorithm):
                continue
            algorithm = algorithm or w[0]
            t0, t1 = float(w[3]), float(w[4])
            first, last = min(first, t0), max(last, t1)
            for op in w[5:]:
                if op[0] == "s" and not op.endswith(":."):
                    peer, nbytes = op[1:].split(":")
                    sends.append((rank, int(peer), int(nbytes), t0, t1))
    if not sends:
        sys.exit(f"stage_trace_report.py: no traced sends of run {run} in {folder}")
    per_link = collections.defaultdict(list)
    for s in sends:
        for link in path(ranks[s[0]], ranks[s[1]]):
            per_link[link].append(s)
    link, msgs = max(per_link.items(), key=lambda kv: sum(m[2] for m in kv[1]))
    total = last - first
    ideal = sum(m[2] for m in msgs) * 8 / rate
    busy_intervals = sorted((m[3], m[4]) for m in msgs)
    busy, end = 0.0, first
    for a, b in busy_intervals:  # union of the intervals in which one of them was sending
        if b > end:
            busy += b - max(a, end)
            end = b
    durations = [m[4] - m[3] for m in msgs]
    eff = [m[2] * 8 / rate / (m[4] - m[3]) for m in msgs if m[4] > m[3]]
    print(f"{algorithm}, run {run}: {total * 1e3:.1f} ms from the first stage posted to the last done")
    print(f"busiest link {link[0]} -> {link[1]}: {len(msgs)} messages, {sum(m[2] for m in msgs)} bytes")
    print(f"  ideal (back to back at {rate / 1e6:.0f} Mbit/s): {ideal * 1e3:.1f} ms = {ideal / total:.0%} of the run")
    print(f"  per-message overhead (sending slower than the link): {(busy - ideal) * 1e3:.1f} ms = "
          f"{(busy - ideal) / total:.0%}; median message {statistics.median(durations) * 1e3:.2f} ms "
          f"for {statistics.median(m[2] for m in msgs) * 8 / rate * 1e3:.2f} ms of data "
          f"(median efficiency {statistics.median(eff):.0%})")
    print(f"  idle (none of its messages being sent): {(total - busy) * 1e3:.1f} ms = {(total - busy) / total:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
