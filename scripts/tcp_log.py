#!/usr/bin/env python3
"""Retransmissions in the packet model (`scripts/simulate.sh --network packet --tcp-log FILE`),
read from ns-3's own log of its TCP sockets, not guessed from how long a message took.

    tcp_log.py filter FILE
        simulate.sh pipes the simulation's stderr through this: ns-3's log lines (they begin
        with the simulated time, "+0.012345678s") are read and dropped, every other line is
        passed on at once. FILE gets one line per event:
            rto TIME NODE       a retransmission timeout fired and the socket sent its oldest
                                unacknowledged segment again ("RTO. Reset cwnd", TcpSocketBase)
            syn TIME NODE       a connection request (SYN) sent again on the same connection:
                                its connection timeout (ns3::TcpSocket::ConnTimeout) had fired
            segment TIME NODE   a data segment sent again, for any reason (a timeout, or three
                                duplicate acknowledgements: fast retransmit)
        and at the end `sent CONNECTIONS SEGMENTS`: the connections opened and the distinct
        data segments sent. It needs ns-3's log of TcpSocketBase at level debug and of
        TcpL4Protocol at level function, with prefix_time and prefix_node (simulate.sh sets
        NS_LOG so).
    tcp_log.py count FILE [--trace DIR] [--json OUT]
        Counts the events, in all and, with the stage trace of the same simulation
        (LIBCOMM_TRACE_STAGES=DIR), per run of the program (the n-th run is the n-th block of
        stages every rank traced, as stage_trace_report.py counts them): an event belongs to
        the run whose time span (first stage posted to last stage done) holds it.

Python 3 only; no third-party modules.
"""
import json
import pathlib
import re
import sys

KINDS = ("rto", "syn", "segment")
# ns-3's log: every line but a few (destructors at exit, the rest of a message that held a
# line break) begins with the simulated time.
_LOG = re.compile(r"^(\+[0-9.]+s | ?\[node \d+\] |(TcpSocketBase|TcpL4Protocol):|\d+; cWnd = \d+$)")
_TIME_NODE = re.compile(r"^\+([0-9.]+)s .*?\[node (\d+)\]")
# TcpL4Protocol:SendPacket(L4, PACKET, SPORT > DPORT [SYN] Seq=.. ..., SRC, DST, OIF)
_SYN = re.compile(r"TcpL4Protocol:SendPacket\(0x[0-9a-f]+, 0x[0-9a-f]+, (\d+ > \d+) \[SYN\] .*, ([0-9a-f:-]+), "
                  r"([0-9a-f:-]+), \d+\)$")
# TcpSocketBase:SendDataPacket(): Send segment of size N ... to ADDR. Header SPORT > DPORT [FLAGS] Seq=S
_SEGMENT = re.compile(r"Send segment of size \d+ with remaining data \d+ via TcpL4Protocol to ([0-9.]+)\. "
                      r"Header (\d+ > \d+) \[[^]]*\] Seq=(\d+)")


def filter_log(lines, out, passthrough):
    """Reads the lines of a simulation's stderr; writes ns-3's retransmissions to `out` and
    every line that is not ns-3's log to `passthrough`, flushed at once."""
    connections, segments = set(), set()
    for line in lines:
        if not _LOG.match(line):
            passthrough.write(line)
            passthrough.flush()
            continue
        m = _TIME_NODE.match(line)
        if m is None:  # a line of no socket: nothing to count
            continue
        when, node = m.groups()
        if "RTO. Reset cwnd" in line:
            out.write(f"rto {when} {node}\n")
        elif (m := _SYN.search(line.rstrip("\n"))) is not None:
            key = m.groups()
            if key in connections:
                out.write(f"syn {when} {node}\n")
            connections.add(key)
        elif (m := _SEGMENT.search(line)) is not None:
            key = (node,) + m.groups()
            if key in segments:
                out.write(f"segment {when} {node}\n")
            segments.add(key)
    out.write(f"sent {len(connections)} {len(segments)}\n")
    out.flush()


def read_events(path):
    """([(kind, time)], connections, segments) of a filter file; a file without its `sent`
    line (the simulation died before the end) is refused."""
    events, sent = [], None
    for line in pathlib.Path(path).read_text().splitlines():
        w = line.split()
        if w and w[0] in KINDS:
            events.append((w[0], float(w[1])))
        elif w and w[0] == "sent":
            sent = (int(w[1]), int(w[2]))
    if sent is None:
        raise ValueError(f"{path}: no 'sent' line: the simulation did not finish")
    return events, sent[0], sent[1]


def run_windows(trace):
    """[(first stage posted, last stage done)] of every run in a stage trace, in order: the
    n-th run of every rank (runs counted as stage_trace_report.read_trace counts them)."""
    spans = {}
    for f in sorted(pathlib.Path(trace).glob("stages.*.txt")):
        seen, key = -1, None
        for line in f.read_text().splitlines():
            w = line.split()
            if (w[0], w[1]) != key or w[2] == "0":
                key = (w[0], w[1])
                seen += 1
            lo, hi = spans.get(seen, (float("inf"), 0.0))
            spans[seen] = (min(lo, float(w[3])), max(hi, float(w[4])))
    return [spans[k] for k in sorted(spans)]


def count(path, trace=None):
    """{"total": {kind: n}, "connections": n, "segments": n, "runs": [{kind: n}, ...]}: the
    events of a filter file, and per run of the stage trace when one is given (an event
    between two runs, which no message was in flight for, counts in `between`)."""
    events, connections, segments = read_events(path)
    out = {"total": {k: sum(1 for e in events if e[0] == k) for k in KINDS},
           "connections": connections, "segments": segments}
    if trace is not None:
        windows = run_windows(trace)
        runs = [dict.fromkeys(KINDS, 0) for _ in windows]
        between = dict.fromkeys(KINDS, 0)
        for kind, t in events:
            hit = next((i for i, (lo, hi) in enumerate(windows) if lo <= t <= hi), None)
            (between if hit is None else runs[hit])[kind] += 1
        out["runs"], out["between"] = runs, between
    return out


def main(argv):
    if len(argv) == 3 and argv[1] == "filter":
        with open(argv[2], "w") as out:
            filter_log(sys.stdin, out, sys.stdout)
        return 0
    if len(argv) >= 3 and argv[1] == "count":
        args = argv[3:]
        trace = json_out = None
        while args:
            if args[0] == "--trace" and len(args) > 1:
                trace, args = args[1], args[2:]
            elif args[0] == "--json" and len(args) > 1:
                json_out, args = args[1], args[2:]
            else:
                sys.exit(__doc__)
        try:
            got = count(argv[2], trace)
        except (OSError, ValueError) as e:
            sys.exit(f"tcp_log.py: {e}")
        print(f"{got['connections']} connections, {got['segments']} data segments; retransmission timeouts "
              f"{got['total']['rto']}, connection requests sent again {got['total']['syn']}, segments sent "
              f"again {got['total']['segment']}")
        for i, r in enumerate(got.get("runs", [])):
            print(f"  run {i}: timeouts {r['rto']}, requests again {r['syn']}, segments again {r['segment']}")
        if json_out:
            pathlib.Path(json_out).write_text(json.dumps(got, indent=1) + "\n")
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
