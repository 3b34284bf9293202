#!/usr/bin/env python3
"""Checks scripts/reproduce/hierarchical_single_port.py (paper 000's single-ported nodes)
on programs small enough to time by hand. Exit status 1 and one line per failure."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts" / "reproduce"))
from hierarchical_single_port import replay  # noqa: E402

BW, LAT, O = 1e6, 1e-3, 1e-4  # 1 MB/s, 1 ms, 0.1 ms: a 1000-byte message takes 2 ms + overheads
failures = []


def check(name, got, want):
    if abs(got - want) > 1e-9:
        failures.append(f"{name}: {got * 1e3:.4f} ms, expected {want * 1e3:.4f} ms")


def run(programs, node_of, ports, eager=1 << 30, chunk=4096):
    stages = {r: [(k, 0.0, 0.0, ops) for k, ops in enumerate(p)] for r, p in programs.items()}
    return replay(stages, node_of, ports, net_bw=BW, net_lat=LAT, mem_bw=10 * BW, mem_lat=0.0,
                  overhead=O, eager=eager, chunk=chunk)


one = 1000 / BW + LAT  # one 1000-byte message between nodes

# One message: the send's overhead, the wire, the receive's overhead.
t, busy = run({0: [[("s", 1, 1000)]], 1: [[("r", 0, 1000)]]}, [0, 1], "single")
check("one message", t, O + one + O)
check("its sender's port", busy[0][0], one)

# Two nodes send to a third at once: single-ported, the third takes them one after the other.
progs = {0: [[("s", 2, 1000)]], 1: [[("s", 2, 1000)]], 2: [[("r", 0, 1000), ("r", 1, 1000)]]}
check("two into one, single", run(progs, [0, 1, 2], "single")[0], O + 2 * one + O)
check("two into one, no ports", run(progs, [0, 1, 2], "none")[0], O + one + O)

# Head-of-line blocking: node 3's message to node 1 starts first; node 0 then queues
# 0 -> 1 (waits for node 1) and 0 -> 2 behind it. Under `single` 0 -> 2 waits too; under
# `any` node 0 sends it meanwhile.
progs = {0: [[], [("s", 1, 1000), ("s", 2, 1000)]], 1: [[("r", 3, 1000), ("r", 0, 1000)]],
         2: [[("r", 0, 1000)]], 3: [[("s", 1, 1000)]]}
nodes = [0, 1, 2, 3]
check("head-of-line, single", run(progs, nodes, "single")[0], O + 3 * one + O)
check("head-of-line, any", run(progs, nodes, "any")[0], 3 * O + 2 * one)

# A rendezvous message waits for its receive; an eager one does not. Rank 1 posts its
# receive from rank 0 only after rank 2 (its node mate) has finished sending to rank 3.
progs = {0: [[("s", 1, 1000)]], 1: [[("r", 2, 10)], [("r", 0, 1000)]],
         2: [[("s", 3, 1000)], [("s", 1, 10)]], 3: [[("r", 2, 1000)]]}
nodes = [0, 1, 1, 2]
t_eager = run(progs, nodes, "single")[0]
t_rdv = run(progs, nodes, "single", eager=100)[0]
if not t_rdv > t_eager + 0.9 * one:
    failures.append(f"rendezvous ({t_rdv * 1e3:.3f} ms) should wait a message longer than eager ({t_eager * 1e3:.3f} ms)")

# Inside a node no port is held: two messages into rank 1 from its node mate and from
# another node at once.
progs = {0: [[("s", 1, 1000)]], 1: [[("r", 0, 1000), ("r", 2, 1000)]], 2: [[("s", 1, 1000)]]}
check("intra beside inter", run(progs, [0, 0, 1], "single")[0], O + one + O)

# A synchronisation (bytes None: clustered_factor's hand-over of a node's port) is a message
# of 0 bytes that orders the programs: rank 1 (node 0) sends to node 1 only once rank 0 has
# sent its own message and then told it so, even with no port shared at all.
progs = {0: [[("s", 2, 1000)], [("s", 1, None)]], 1: [[("r", 0, None)], [("s", 2, 1000)]],
         2: [[("r", 0, 1000), ("r", 1, 1000)]]}
check("hand-over by a synchronisation", run(progs, [0, 0, 1], "none")[0], 5 * O + 2 * one)
# With free_syncs the hand-over still orders the two messages but costs nothing.
stages = {r: [(k, 0.0, 0.0, ops) for k, ops in enumerate(p)] for r, p in progs.items()}
check("a free hand-over", replay(stages, [0, 0, 1], "none", net_bw=BW, net_lat=LAT, mem_bw=10 * BW, mem_lat=0.0,
                                 overhead=O, eager=1 << 30, free_syncs=True)[0], 3 * O + 2 * one)

# Packet granularity (ports "packet"): with chunks at least as large as every message it is
# `single`, time for time, on each program above.
for progs, nodes in ((progs, [0, 0, 1]),
                     ({0: [[], [("s", 1, 1000), ("s", 2, 1000)]], 1: [[("r", 3, 1000), ("r", 0, 1000)]],
                       2: [[("r", 0, 1000)]], 3: [[("s", 1, 1000)]]}, [0, 1, 2, 3])):
    check("packet with whole-message chunks", run(progs, nodes, "packet", chunk=1000)[0], run(progs, nodes, "single")[0])

# Node 0 sends to node 2 and then to node 3; node 1 sends to node 2. Whole messages: 0 -> 2
# first (it was queued first), 1 -> 2 after it while 0 -> 3 runs: two message times. In
# chunks of 100 bytes, 0 -> 2 and 1 -> 2 share node 2's port chunk by chunk and both end after
# two message times; 0 -> 3 waits behind 0 -> 2 (head-of-line) and ends after three.
progs = {0: [[("s", 2, 1000), ("s", 3, 1000)]], 1: [[("s", 2, 1000)]], 2: [[("r", 0, 1000), ("r", 1, 1000)]],
         3: [[("r", 0, 1000)]]}
nodes = [0, 1, 2, 3]
check("two into one then onwards, single", run(progs, nodes, "single")[0], O + 2 * one + O)
# The first chunk of each message also holds the ports for the latency. The two take turns,
# 0 -> 2 first, so it ends one chunk (100 bytes) before 1 -> 2, after two message times less
# that chunk; then 0 -> 3 takes one message time.
check("two into one then onwards, packet", run(progs, nodes, "packet", chunk=100)[0],
      O + (2 * one - 100 / BW) + one + O)
t, busy = run(progs, nodes, "packet", chunk=100)
check("packet: node 2's port busy for both messages", busy[2][1], 2 * one)

for f in failures:
    print("FAIL:", f)
print("single_port_model.py:", "FAIL" if failures else "PASS")
sys.exit(1 if failures else 0)
