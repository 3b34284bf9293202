#!/usr/bin/env python3
"""Checks that a SimGrid platform is one the packet-level model (SimGrid 3.32's ns-3
binding) builds as described, and refuses it otherwise with the reason.

    packet_platform.py PLATFORM.xml [HOSTFILE]

What the binding does with each platform feature (src/surf/network_ns3.cpp of SimGrid
3.32), and so what this refuses:
- <cluster>: its backbone becomes one CSMA bus (a shared half-duplex medium), not a
  switch, and only flat clusters are accepted. Describe the switches as <router>s joined
  to hosts by one-hop <link>s (scripts/reproduce/topo2platform.py writes such files).
- a <route> of more than one link is ignored: ns-3 routes over the one-hop links alone.
- every link becomes a full-duplex point-to-point wire: FATPIPE (no contention at all)
  and SHARED (both directions share one bandwidth) cannot be modelled; say SPLITDUPLEX.
- bandwidth, latency or state profiles (*_file, <trace>) are not supported.
- several ranks on one host: ns-3 delivers a host's messages to itself instantly (no
  memory bus, no cost), so a hostfile that names a host twice is refused; model a
  multi-core node as its own switch with one host per core.
Exit status 2 and one line per problem on stderr when the platform is refused.
"""
import collections
import sys
import xml.etree.ElementTree as ET


def problems(platform, hostfile=None):
    root = ET.parse(platform).getroot()
    out = []
    for el in root.iter():
        tag, ident = el.tag, el.get("id", "?")
        if tag == "cluster":
            out.append(f"<cluster id='{ident}'>: the ns-3 binding turns a cluster's backbone into one "
                       "shared CSMA bus, not a switch; describe the switch as a <router> with one-hop "
                       "<link>s to the hosts (scripts/reproduce/topo2platform.py)")
        elif tag in ("cabinet", "peer"):
            out.append(f"<{tag} id='{ident}'>: not built by the ns-3 binding")
        elif tag == "route" or tag == "zoneRoute":
            links = [c for c in el if c.tag == "link_ctn"]
            if len(links) != 1:
                out.append(f"<{tag} src='{el.get('src')}' dst='{el.get('dst')}'> has {len(links)} links: "
                           "ns-3 ignores routes longer than one link (give one-hop routes between "
                           "neighbours; ns-3 then routes over them)")
        elif tag == "link":
            policy = el.get("sharing_policy", "SHARED").upper()
            if policy != "SPLITDUPLEX":
                out.append(f"<link id='{ident}'> has sharing_policy {policy}: ns-3 makes every link a "
                           "full-duplex wire, so only SPLITDUPLEX means the same in both models")
            for attr in ("bandwidth_file", "latency_file", "state_file"):
                if el.get(attr):
                    out.append(f"<link id='{ident}'> {attr}: ns-3 links take no profiles")
        elif tag in ("trace", "trace_connect"):
            out.append(f"<{tag}>: ns-3 links take no profiles")
    if hostfile:
        with open(hostfile) as f:
            counts = collections.Counter(line.split(":")[0].strip() for line in f if line.strip())
        shared = [h for h, n in counts.items() if n > 1]
        if shared:
            out.append(f"host {shared[0]} holds {counts[shared[0]]} ranks"
                       f"{f' (and {len(shared) - 1} more hosts)' if len(shared) > 1 else ''}: ns-3 "
                       "delivers a host's messages to itself instantly, so ranks sharing a host would "
                       "talk for free; give each rank its own host (a node as a switch with one host "
                       "per core)")
    return out


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit("usage: packet_platform.py PLATFORM.xml [HOSTFILE]")
    found = problems(*argv[1:])
    for p in found:
        print(f"packet model: {argv[1]}: {p}", file=sys.stderr)
    return 2 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
