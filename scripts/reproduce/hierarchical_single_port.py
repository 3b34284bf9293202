#!/usr/bin/env python3
"""Replays the step programs of a traced all-to-all on multi-core nodes whose network
interface carries one message at a time in each direction: paper 000's machine model
("each node ... can participate in only one communication operation with another node at
a time", abstract and section 1), which neither SimGrid model has (both share a link
among every flow crossing it).

    hierarchical_single_port.py TRACE_DIR --nodes SPEC --run N [--ports MODEL] [--chunk BYTES]
        [--net-bw MBPS] [--net-lat US] [--mem-bw MBPS] [--mem-lat US]
        [--overhead US] [--eager BYTES] [--json FILE]

TRACE_DIR holds a stage trace (LIBCOMM_TRACE_STAGES=DIR) of any run of the algorithm:
the library's own step programs, rank by rank and stage by stage, with every message
they post (stage_trace_report.py reads the same files; --run counts runs as it does).
Only the programs are taken from it, not its times: this replays them on the model below.

The model (defaults: paper 000's Giganet cluster as inputs/platforms/giganet6x4.xml
describes it):
- a rank runs its stages in order; a stage posts its receives, then its sends (a
  synchronisation is a message of 0 bytes), each send
  costing --overhead of the rank's processor (so does each receive when it completes),
  and ends when all its messages are complete (the executor's rule);
- a message of at most --eager bytes may move once its send is posted, a larger one once
  its receive is posted too (rendezvous);
- inside a node a message takes mem-lat + bytes / mem-bw, with no limit on how many move
  at once (shared memory);
- between nodes a message takes net-lat + bytes / net-bw and, under --ports:
    single  (default) holds its sender node's outgoing port and its receiver node's
            incoming port for that long; a node's outgoing messages wait in one queue in
            the order they became ready, and the first in the queue waits for its
            receiver's port while those behind it wait too (head-of-line blocking: on a
            cut-through network with link-level flow control, a message that cannot
            enter its receiver holds the sender's link); an incoming port serves the
            senders in the order they asked;
    packet  head-of-line blocking at packet granularity: a message crosses as chunks of
            --chunk bytes (default 4096), each holding its sender's outgoing port and its
            receiver's incoming port for its own time only (the first one also for the
            latency). A node's interface still sends its queued messages in order, the
            first one chunk after chunk, and waits with the rest of its queue whenever that
            chunk's receiver is busy (link-level flow control holds the link packet by
            packet); an incoming port takes the waiting chunks in the order they asked (a
            message's first chunk from when it was queued, as `single` orders messages, each
            later one from the end of the one before), so the senders of one receiver take
            turns chunk by chunk. With --chunk at least the largest message it is `single`;
    any     the same ports, but a node's interface may start any queued message whose
            receiver is free (no head-of-line blocking);
    none    no port limits at all: each message only waits for its own two sides (the
            schedule's dependency bound).
Prints the time of the all-to-all (first stage begun to last stage done) and, per node,
how long its ports were busy.
"""
import argparse
import collections
import heapq
import json
import pathlib
import random
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from stage_trace_report import node_sizes, read_trace  # noqa: E402


class Message:
    __slots__ = ("src", "dst", "bytes", "send_ready", "recv_posted", "ready", "start", "end",
                 "send_owner", "recv_owner", "queued_at", "order", "arrived", "sent", "asked", "piece", "free")

    def __init__(self, src, dst):
        self.src, self.dst = src, dst
        self.bytes = None
        self.send_ready = self.recv_posted = self.ready = self.start = self.end = None
        self.send_owner = self.recv_owner = None
        self.queued_at = None
        self.order = 0
        self.arrived = False
        self.sent = 0  # ports "packet": bytes through so far, the chunk on the wire, when
        self.asked = self.piece = None  # its next chunk asked for the receiver's port
        self.free = False  # a synchronisation that costs nothing (free_syncs)


def replay(stages, node_of, ports="single", net_bw=105e6, net_lat=14e-6, mem_bw=300e6, mem_lat=2e-6,
           overhead=5e-6, eager=65536, durations=None, jitter_seed=None, chunk=4096, free_syncs=False):
    """Simulated seconds of the programs `stages` ({rank: [(stage, _, _, ops)]}) under the
    model of the module docstring, and per node the busy time of its two ports.
    `durations` {("inter" | "intra", bytes): seconds}, when given, replaces the formulas for
    the sizes it holds (a message measured alone on the platform being modelled).
    `jitter_seed` delays every send by a pseudo-random 0-1 ns: the same model with its ties
    (messages ready at the same instant) broken another way. `chunk`: the packet size of
    ports "packet". `free_syncs`: synchronisations still order the programs but cost nothing
    (no overhead, no latency): what a hand-over costs, apart from the order it imposes."""
    rng = random.Random(jitter_seed) if jitter_seed is not None else None
    # Time runs in integer picoseconds: the model has many ties (every rank posts at the same
    # instants), and which message a port takes first must not depend on how a parameter was
    # written (14e-6 and 14 * 1e-6 differ in the last bit).
    ps = 1e12
    durations = {k: round(v * ps) for k, v in (durations or {}).items()}
    net_lat, mem_lat, overhead = round(net_lat * ps), round(mem_lat * ps), round(overhead * ps)
    net_ps_per_byte, mem_ps_per_byte = ps / net_bw, ps / mem_bw
    ranks = sorted(stages)
    programs = {r: [ops for _, _, _, ops in sorted(stages[r], key=lambda s: s[0])] for r in ranks}
    events = []  # (time, seq, kind, payload)
    seq = [0]

    def at(t, kind, payload):
        seq[0] += 1
        heapq.heappush(events, (t, seq[0], kind, payload))

    messages = collections.defaultdict(list)  # (src, dst) -> [Message] in matching order
    sends_seen = collections.Counter()
    recvs_seen = collections.Counter()

    def message(src, dst, k):
        lst = messages[(src, dst)]
        while len(lst) <= k:
            lst.append(Message(src, dst))
        return lst[k]

    stage_of = {r: -1 for r in ranks}
    pending = {r: 0 for r in ranks}
    done_at = {}
    out_free = collections.defaultdict(lambda: True)
    in_free = collections.defaultdict(lambda: True)
    out_queue = collections.defaultdict(list)  # node -> [Message] in queue order
    busy = collections.defaultdict(lambda: [0, 0])  # node -> [out, in] busy picoseconds
    order = [0]

    def begin_stage(rank, t):
        stage_of[rank] += 1
        if stage_of[rank] >= len(programs[rank]):
            done_at[rank] = t
            return
        # A synchronisation (no data, bytes None) is a message of 0 bytes: it orders the programs
        # (clustered_factor's hand-over of a node's port with one matching per step).
        ops = [(kind, peer, n) for kind, peer, n in programs[rank][stage_of[rank]]]
        pending[rank] = len(ops)
        if not ops:
            at(t, "stage", rank)
            return
        k_send = 0
        # The executor posts the receives first, then the sends (each costing the overhead).
        for kind, peer, n in sorted(ops, key=lambda op: op[0] != "r"):
            free = free_syncs and n is None
            n = 0 if n is None else n
            if kind == "r":
                m = message(peer, rank, recvs_seen[(peer, rank)])
                recvs_seen[(peer, rank)] += 1
                m.recv_posted, m.recv_owner = t, rank
                m.bytes = n if m.bytes is None else m.bytes
                if m.arrived:  # an eager message already there: the receive copies it out
                    at(t + (0 if free else overhead), "recv_done", rank)
            else:
                k_send += 0 if free else 1
                m = message(rank, peer, sends_seen[(rank, peer)])
                sends_seen[(rank, peer)] += 1
                m.send_ready, m.send_owner, m.bytes = t + k_send * overhead, rank, n
                if rng and not free:
                    m.send_ready += rng.randrange(1001)
            m.free = free
            maybe_ready(m)

    def maybe_ready(m):
        if m.send_ready is None or m.ready is not None:
            return
        if m.bytes > eager and m.recv_posted is None:
            return
        m.ready = m.send_ready if m.bytes <= eager else max(m.send_ready, m.recv_posted)
        at(m.ready, "ready", m)

    def start_chunk(m, t):
        # ports "packet": the next chunk of the first message of its sender's queue.
        first = m.sent == 0
        if first:
            m.start = t
        m.piece = min(chunk, m.bytes - m.sent)
        hold = (net_lat if first else 0) + round(m.piece * net_ps_per_byte)
        out_free[node_of[m.src]] = False
        in_free[node_of[m.dst]] = False
        busy[node_of[m.src]][0] += hold
        busy[node_of[m.dst]][1] += hold
        at(t + hold, "chunk", m)

    def start(m, t):
        m.start = t
        if m.free:
            m.end = t
        elif node_of[m.src] == node_of[m.dst]:
            m.end = t + durations.get(("intra", m.bytes), mem_lat + round(m.bytes * mem_ps_per_byte))
        else:
            m.end = t + durations.get(("inter", m.bytes), net_lat + round(m.bytes * net_ps_per_byte))
            if ports != "none":
                out_free[node_of[m.src]] = False
                in_free[node_of[m.dst]] = False
                busy[node_of[m.src]][0] += m.end - t
                busy[node_of[m.dst]][1] += m.end - t
        at(m.end, "end", m)

    def schedule(t):
        # Start every queued message the ports allow; an incoming port goes to the sender
        # that asked first.
        while True:
            best = None
            for node, queue in out_queue.items():
                if not queue or not out_free[node]:
                    continue
                cands = queue[:1] if ports in ("single", "packet") else queue
                for m in cands:
                    if in_free[node_of[m.dst]]:
                        key = (m.asked, m.order) if ports == "packet" else (m.queued_at, m.order)
                        if best is None or key < best[0]:
                            best = (key, node, m)
                        break
            if best is None:
                return
            _, node, m = best
            if ports == "packet":
                start_chunk(m, t)  # it leaves the queue with its last chunk
            else:
                out_queue[node].remove(m)
                start(m, t)

    def complete(rank, t):
        pending[rank] -= 1
        if pending[rank] == 0:
            at(t, "stage", rank)

    for r in ranks:
        begin_stage(r, 0)
    while events:
        t, _, kind, x = heapq.heappop(events)
        if kind == "stage":
            begin_stage(x, t)
        elif kind == "ready":
            if node_of[x.src] == node_of[x.dst] or ports == "none":
                start(x, t)
            else:
                order[0] += 1
                x.queued_at, x.order = t, order[0]
                x.asked = t  # its first chunk asks as `single` does: from when it was queued
                out_queue[node_of[x.src]].append(x)
                schedule(t)
        elif kind == "chunk":
            out_free[node_of[x.src]] = True
            in_free[node_of[x.dst]] = True
            x.sent += x.piece
            queue = out_queue[node_of[x.src]]
            if x.sent < x.bytes:
                x.asked = t  # behind the chunks that waited for this port meanwhile
            else:
                queue.remove(x)
                x.end = t
                at(t, "end", x)
            schedule(t)
        elif kind == "end":
            if node_of[x.src] != node_of[x.dst] and ports not in ("none", "packet"):
                out_free[node_of[x.src]] = True
                in_free[node_of[x.dst]] = True
            complete(x.send_owner, t)
            x.arrived = True
            if x.recv_owner is not None:  # else its receive, once posted, completes it
                at(t + (0 if x.free else overhead), "recv_done", x.recv_owner)
            if ports != "none":
                schedule(t)
        elif kind == "recv_done":
            complete(x, t)
    stuck = [r for r in ranks if r not in done_at]
    if stuck:
        sys.exit(f"hierarchical_single_port.py: ranks {stuck[:8]} never finished (a message without its partner)")
    return max(done_at.values()) / ps, {k: [v / ps for v in b] for k, b in busy.items()}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--nodes", required=True, help="node map: file:X.nodes, a .nodes path or sizes=A,B,..")
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--algorithm")
    ap.add_argument("--ports", choices=("single", "packet", "any", "none"), default="single")
    ap.add_argument("--chunk", type=int, default=4096, help="ports packet: bytes per chunk (default 4096)")
    ap.add_argument("--net-bw", type=float, default=105 * 8, help="Mbit/s (default 840: 105 MB/s)")
    ap.add_argument("--net-lat", type=float, default=14.0, help="microseconds, node to node (default 14)")
    ap.add_argument("--mem-bw", type=float, default=300 * 8, help="Mbit/s (default 2400: 300 MB/s)")
    ap.add_argument("--mem-lat", type=float, default=2.0, help="microseconds (default 2)")
    ap.add_argument("--overhead", type=float, default=5.0, help="microseconds per message and side (default 5)")
    ap.add_argument("--eager", type=int, default=65536, help="largest message sent without its receive (bytes)")
    ap.add_argument("--json")
    a = ap.parse_args(argv[1:])
    sizes = node_sizes(a.nodes)
    node_of = [n for n, k in enumerate(sizes) for _ in range(k)]
    algorithm, stages = read_trace(a.trace, a.run, a.algorithm)
    if not stages:
        sys.exit(f"hierarchical_single_port.py: no traced run {a.run} in {a.trace}")
    total, busy = replay(stages, node_of, a.ports, a.net_bw * 1e6 / 8, a.net_lat * 1e-6, a.mem_bw * 1e6 / 8,
                         a.mem_lat * 1e-6, a.overhead * 1e-6, a.eager, chunk=a.chunk)
    block = max(n for rows in stages.values() for _, _, _, ops in rows for _, _, n in ops if n is not None)
    print(f"{algorithm}, block {block} B, ports {a.ports}: {total * 1e3:.3f} ms")
    for node in range(len(sizes)):
        out, inn = busy.get(node, (0.0, 0.0))
        print(f"  node {node} ({sizes[node]} ranks): out port busy {out * 1e3:.3f} ms, in port {inn * 1e3:.3f} ms")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(
            {"algorithm": algorithm, "block_bytes": block, "ports": a.ports, "time_s": total,
             "busy_s": {str(k): v for k, v in busy.items()}}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
