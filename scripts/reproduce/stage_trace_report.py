#!/usr/bin/env python3
"""Where an all-to-all spends its time, from a stage trace (LIBCOMM_TRACE_STAGES=DIR,
libcomm/src/runtime/executor.cpp) of one run.

    stage_trace_report.py DIR TOPO RATE_MBPS [--run N] [--algorithm NAME] [--json FILE]
    stage_trace_report.py DIR --nodes SPEC [--rate MBPS] [--run N] [--algorithm NAME] [--json FILE]

Switch trees (paper 003), the first form. For the busiest link of the tree (the one that
bounds the all-to-all, paper 003 s. 3) it splits the run's time into
- ideal: the link's messages back to back at RATE (the peak bound's time),
- per-message overhead: how much longer those messages took to send than at RATE (TCP:
  handshake, slow start, headers and acknowledgements, the closing exchange),
- idle: the time no message of the link was being sent (waiting for synchronisation,
  phases whose senders were late).
A message counts from the time its stage was posted to the time the stage was done.

Multi-core nodes (paper 000), the second form: SPEC is a node map of consecutive ranks
(`file:inputs/nodes/x.nodes`, a .nodes path or `sizes=4,1,4`). For every node it splits the
run into what its processes were doing, in this order of precedence at each instant:
- network: a stage with a message to or from another node whose partner had posted its
  side too (the data can move),
- waiting: such a stage whose partner had not posted yet (the step waits for its partner:
  the schedule's synchronisation),
- intra: a stage with messages inside the node only,
- idle: no process of the node inside a stage with messages.
It also counts the most inter-node stages of the node in progress at once (1 under the
single-port discipline of paper 000) and, with --rate, the node's ideal network time: the
larger of its bytes out and in at RATE. A message is matched to its partner's step by
order per (sender, receiver), as MPI matches them.

--run N takes the N-th run each rank traced (default 0, the first), counting every run of
every plan in the order written: with 2 block sizes and 3 repetitions without warm-up,
runs 0-2 are the first size's and 3-5 the second's.

--json FILE writes the same figures as a JSON object (the result pages are written from
these records).
"""
import collections
import functools
import json
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
sys.path.insert(0, str(pathlib.Path(__file__).parent.parent))
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


def read_trace(folder, run, algorithm):
    """{rank: [(stage, posted, done, [(kind 's'|'r', peer, bytes or None for sync)])]} of
    the run-th run that each rank traced of the algorithm (the first algorithm found when
    none is named), counting runs in the order the rank wrote them: every run of every
    plan (each block size is a plan of its own), warm-up runs included."""
    stages = {}
    for f in sorted(pathlib.Path(folder).glob("stages.*.txt")):
        rank = int(f.stem.split(".")[1])
        seen, key = -1, None
        for line in f.read_text().splitlines():
            w = line.split()
            if algorithm and w[0] != algorithm:
                continue
            if (w[0], w[1]) != key or w[2] == "0":  # a new run starts
                key = (w[0], w[1])
                seen += 1
            if seen != run:
                continue
            algorithm = algorithm or w[0]
            ops = []
            for op in w[5:]:
                peer, nbytes = op[1:].split(":")
                ops.append((op[0], int(peer), None if nbytes == "." else int(nbytes)))
            stages.setdefault(rank, []).append((int(w[2]), float(w[3]), float(w[4]), ops))
    return algorithm, stages


def union_length(intervals, lo=None, hi=None):
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if lo is not None:
            a, b = max(a, lo), min(b, hi)
        if b <= a:
            continue
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def tree_report(folder, topo, rate, run, algorithm):
    ranks, path = tree_paths(topo)
    algorithm, stages = read_trace(folder, run, algorithm)
    sends = []  # (rank, peer, bytes, start, end)
    first, last = float("inf"), 0.0
    for rank, rows in stages.items():
        for _, t0, t1, ops in rows:
            first, last = min(first, t0), max(last, t1)
            sends += [(rank, peer, n, t0, t1) for kind, peer, n in ops if kind == "s" and n is not None]
    if not sends:
        sys.exit(f"stage_trace_report.py: no traced sends of run {run} in {folder}")
    per_link = collections.defaultdict(list)
    for s in sends:
        for link in path(ranks[s[0]], ranks[s[1]]):
            per_link[link].append(s)
    link, msgs = max(per_link.items(), key=lambda kv: sum(m[2] for m in kv[1]))
    total = last - first
    ideal = sum(m[2] for m in msgs) * 8 / rate
    busy = union_length([(m[3], m[4]) for m in msgs])
    durations = [m[4] - m[3] for m in msgs]
    eff = [m[2] * 8 / rate / (m[4] - m[3]) for m in msgs if m[4] > m[3]]
    out = {"algorithm": algorithm, "run": run, "total_s": total, "link": list(link), "messages": len(msgs),
           "bytes": sum(m[2] for m in msgs), "ideal_s": ideal, "overhead_s": busy - ideal,
           "idle_s": total - busy, "median_message_s": statistics.median(durations),
           "median_message_ideal_s": statistics.median(m[2] for m in msgs) * 8 / rate,
           "median_efficiency": statistics.median(eff),
           # messages as long as a retransmission timeout; not a count of timeouts (a 256 KiB
           # message can take that long with nothing lost): scripts/tcp_log.py counts those
           "messages_over_100ms": sum(1 for s in sends if s[4] - s[3] >= 0.1)}
    print(f"{algorithm}, run {run}: {total * 1e3:.1f} ms from the first stage posted to the last done")
    print(f"busiest link {link[0]} -> {link[1]}: {len(msgs)} messages, {out['bytes']} bytes")
    print(f"  ideal (back to back at {rate / 1e6:.0f} Mbit/s): {ideal * 1e3:.1f} ms = {ideal / total:.0%} of the run")
    print(f"  per-message overhead (sending slower than the link): {(busy - ideal) * 1e3:.1f} ms = "
          f"{(busy - ideal) / total:.0%}; median message {out['median_message_s'] * 1e3:.2f} ms "
          f"for {out['median_message_ideal_s'] * 1e3:.2f} ms of data "
          f"(median efficiency {out['median_efficiency']:.0%})")
    print(f"  idle (none of its messages being sent): {(total - busy) * 1e3:.1f} ms = {(total - busy) / total:.0%}")
    print(f"messages of any link that took 100 ms or more (not timeouts: tcp_log.py counts those): "
          f"{out['messages_over_100ms']}")
    return out


def node_sizes(spec):
    from platform_hosts import layout_sizes  # noqa: E402
    return layout_sizes(spec)


def node_report(folder, spec, rate, run, algorithm):
    sizes = node_sizes(spec)
    node_of = [n for n, k in enumerate(sizes) for _ in range(k)]
    algorithm, stages = read_trace(folder, run, algorithm)
    if not stages:
        sys.exit(f"stage_trace_report.py: no traced stages of run {run} in {folder}")
    if max(stages) >= len(node_of):
        sys.exit(f"stage_trace_report.py: rank {max(stages)} traced, but the node map holds {len(node_of)} ranks")
    # Each message: the sender's and the receiver's step (posted, done), matched in order
    # per (sender, receiver).
    sent = collections.defaultdict(list)   # (src, dst) -> [(posted, done)]
    recvd = collections.defaultdict(list)  # (src, dst) -> [(posted, done)]
    first, last = float("inf"), 0.0
    for rank, rows in stages.items():
        for _, t0, t1, ops in rows:
            first, last = min(first, t0), max(last, t1)
            for kind, peer, n in ops:
                if n is None:
                    continue
                (sent if kind == "s" else recvd)[(rank, peer) if kind == "s" else (peer, rank)].append((t0, t1, n))
    network = collections.defaultdict(list)  # node -> intervals
    waiting = collections.defaultdict(list)
    intra = collections.defaultdict(list)
    inter_steps = collections.defaultdict(list)  # node -> (posted, done) of its stages with inter-node messages
    bytes_out = collections.Counter()
    bytes_in = collections.Counter()
    for (src, dst), sends in sent.items():
        recvs = recvd.get((src, dst), [])
        for k, (s0, s1, n) in enumerate(sends):
            r0, r1, _ = recvs[k] if k < len(recvs) else (s0, s1, n)
            if node_of[src] == node_of[dst]:
                intra[node_of[src]].append((s0, s1))
                intra[node_of[dst]].append((r0, r1))
                continue
            bytes_out[node_of[src]] += n
            bytes_in[node_of[dst]] += n
            start = max(s0, r0)  # both sides posted: the data can move
            for node, (a, b) in ((node_of[src], (s0, s1)), (node_of[dst], (r0, r1))):
                waiting[node].append((a, min(start, b)))
                network[node].append((start, b))
    for rank, rows in stages.items():
        for _, t0, t1, ops in rows:
            if any(n is not None and node_of[peer] != node_of[rank] for _, peer, n in ops):
                inter_steps[node_of[rank]].append((t0, t1))
    total = last - first
    out = {"algorithm": algorithm, "run": run, "total_s": total, "nodes": []}
    print(f"{algorithm}, run {run}: {total * 1e3:.3f} ms from the first stage posted to the last done")
    head = "node  size  network ms  waiting ms  intra ms  idle ms  most at once"
    if rate:
        head += "  ideal ms"
    print(head)
    for node, size in enumerate(sizes):
        # Precedence: network > waiting > intra > idle, as a partition of [first, last].
        net = union_length(network[node], first, last)
        net_or_wait = union_length(network[node] + waiting[node], first, last)
        any_step = union_length(network[node] + waiting[node] + intra[node], first, last)
        events = sorted([(a, 1) for a, b in inter_steps[node]] + [(b, -1) for a, b in inter_steps[node]],
                        key=lambda e: (e[0], e[1]))
        most = now = 0
        for _, d in events:
            now += d
            most = max(most, now)
        row = {"node": node, "size": size, "network_s": net, "waiting_s": net_or_wait - net,
               "intra_s": any_step - net_or_wait, "idle_s": total - any_step, "most_at_once": most,
               "bytes_out": bytes_out[node], "bytes_in": bytes_in[node]}
        line = (f"{node:4d}  {size:4d}  {net * 1e3:10.3f}  {row['waiting_s'] * 1e3:10.3f}  "
                f"{row['intra_s'] * 1e3:8.3f}  {row['idle_s'] * 1e3:7.3f}  {most:12d}")
        if rate:
            row["ideal_s"] = max(bytes_out[node], bytes_in[node]) * 8 / rate
            line += f"  {row['ideal_s'] * 1e3:8.3f}"
        out["nodes"].append(row)
        print(line)
    return out


def take(args, name, default=None, conv=str):
    if name in args:
        i = args.index(name)
        value = conv(args[i + 1])
        del args[i:i + 2]
        return value
    return default


def main(argv):
    args = list(argv[1:])
    run = take(args, "--run", 0, int)
    algorithm = take(args, "--algorithm")
    json_out = take(args, "--json")
    nodes = take(args, "--nodes")
    rate = take(args, "--rate", 0.0, float) * 1e6
    if nodes:
        if len(args) != 1:
            sys.exit(__doc__)
        out = node_report(args[0], nodes, rate, run, algorithm)
    else:
        if len(args) != 3:
            sys.exit(__doc__)
        out = tree_report(args[0], args[1], float(args[2]) * 1e6, run, algorithm)
    if json_out:
        pathlib.Path(json_out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
