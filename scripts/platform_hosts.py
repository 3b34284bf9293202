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


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: platform_hosts.py PLATFORM.xml")
    for h in hosts(sys.argv[1]):
        print(h)
