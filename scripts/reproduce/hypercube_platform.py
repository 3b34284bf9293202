#!/usr/bin/env python3
"""SimGrid platform of a binary d-cube (paper 004, s. 3: the CM-200 nodes form a Boolean
cube), for smpirun.

  hypercube_platform.py D OUT.xml [--hostfile FILE] [--routing ecube|neighbours]
                        [--bandwidth BW] [--latency LAT] [--speed SPEED]

2^d hosts node-0 .. node-(2^d - 1); host r is cube node r (binary address r), and MPI
rank r runs on it (the hostfile lists the hosts in order). Every node has d
bidirectional links, one per cube dimension, to node r xor 2^k: each is a pair of
independent one-way links (l_A_B carries A -> B), so the d channels of a node can all
send and receive at once, as the d-cycles algorithm needs. There is no other link.

Routing:
  ecube       (default) neighbours use their link; any other pair goes hop by hop over
              cube links, correcting the differing address bits from the lowest
              dimension up (e-cube routing, what the CM-200 router did for the send /
              gather of send_spread and the MPI library's own collectives).
  neighbours  routes only between cube neighbours: a message to any other node aborts
              the simulation ("no connecting path"). Only a program whose every message,
              set-up included, goes to a cube neighbour can run on it; commbench cannot
              (its communicator set-up and the native reference reach every rank), so
              cycles.sh uses ecube, where the cycle algorithms still only use neighbour
              links.
"""
import argparse
import sys


def link(a, b):
    return f"l{a}_{b}"


def ecube_path(src, dst):
    """Hops of the dimension-ordered route from src to dst."""
    hops, cur, k = [], src, 0
    diff = src ^ dst
    while diff >> k:
        if (diff >> k) & 1:
            hops.append((cur, cur ^ (1 << k)))
            cur ^= 1 << k
        k += 1
    return hops


def platform(d, routing, bandwidth, latency, speed):
    p = 1 << d
    out = ["<?xml version='1.0'?>",
           '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">',
           f'  <!-- binary {d}-cube: {p} nodes, {d} bidirectional links per node, routing {routing} -->',
           '  <zone id="cube" routing="Full">']
    for r in range(p):
        out.append(f'    <host id="node-{r}" speed="{speed}"/>')
    for a in range(p):
        for k in range(d):
            b = a ^ (1 << k)
            out.append(f'    <link id="{link(a, b)}" bandwidth="{bandwidth}" latency="{latency}"/>')
    for a in range(p):
        for b in range(p):
            if a == b:
                continue
            hops = ecube_path(a, b)
            if routing == "neighbours" and len(hops) != 1:
                continue
            ctn = "".join(f'<link_ctn id="{link(x, y)}"/>' for x, y in hops)
            out.append(f'    <route src="node-{a}" dst="node-{b}" symmetrical="NO">{ctn}</route>')
    out += ["  </zone>", "</platform>", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("d", type=int, help="cube dimension, 1..8 (2 to 256 nodes)")
    ap.add_argument("out", help="platform XML file to write")
    ap.add_argument("--hostfile", help="also write an smpirun hostfile (node-0 .. node-(2^d-1))")
    ap.add_argument("--routing", choices=["ecube", "neighbours"], default="ecube")
    ap.add_argument("--bandwidth", default="1GBps", help="each one-way link (default 1GBps)")
    ap.add_argument("--latency", default="1us", help="each link (default 1us)")
    ap.add_argument("--speed", default="1Gf", help="host speed (default 1Gf)")
    a = ap.parse_args()
    if not 1 <= a.d <= 8:
        ap.error(f"d must be in 1..8, got {a.d}")
    with open(a.out, "w") as f:
        f.write(platform(a.d, a.routing, a.bandwidth, a.latency, a.speed))
    if a.hostfile:
        with open(a.hostfile, "w") as f:
            f.write("".join(f"node-{r}\n" for r in range(1 << a.d)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
