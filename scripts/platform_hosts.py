#!/usr/bin/env python3
"""Prints the hosts of a SimGrid platform file, one per line, in file order.

<host id=...> elements are listed as they are; <cluster prefix= radical= suffix=>
elements are expanded (radical "0-63" or "0-3,8,10-11"). scripts/simulate.sh uses this to
write the hostfile that places rank i on the i-th host (or ranks i*K .. i*K+K-1 with
--ppn K).
"""
import sys
import xml.etree.ElementTree as ET


def expand_radical(radical):
    for part in radical.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            yield from range(int(lo), int(hi) + 1)
        else:
            yield int(part)


def hosts(path):
    root = ET.parse(path).getroot()
    for el in root.iter():
        if el.tag == "host":
            yield el.get("id")
        elif el.tag == "cluster":
            for i in expand_radical(el.get("radical")):
                yield f'{el.get("prefix", "")}{i}{el.get("suffix", "")}'


def layout_sizes(spec):
    if spec.startswith("sizes="):
        text = spec[len("sizes="):].replace(",", " ")
    else:
        with open(spec.removeprefix("file:")) as f:
            text = " ".join(line.split("#")[0] for line in f)
    sizes = [int(t) for t in text.split()]
    if not sizes or any(s < 1 for s in sizes):
        sys.exit(f"platform_hosts.py: layout '{spec}': sizes must be positive integers")
    return sizes


if __name__ == "__main__":
    args = sys.argv[1:]
    layout = None
    if len(args) == 3 and args[1] == "--layout":
        layout = args[2]
        args = args[:1]
    if len(args) != 1:
        sys.exit("usage: platform_hosts.py PLATFORM.xml [--layout FILE|sizes=A,B,..]")
    names = list(hosts(args[0]))
    if layout is None:
        print("\n".join(names))
    else:
        sizes = layout_sizes(layout)
        if len(sizes) > len(names):
            sys.exit(f"platform_hosts.py: layout has {len(sizes)} nodes, platform {len(names)} hosts")
        for host, n in zip(names, sizes):
            print("\n".join([host] * n))
