#!/usr/bin/env python3
"""CPU and link load of the testbed during a run (scripts/testbed.sh run, issue 9).

    monitor.py snapshot STATE > BEFORE.json     counters now
    monitor.py report STATE BEFORE.json         what happened since, one line per topic

CPU: /proc/stat of the whole machine (other work on it counts too), split into user,
system and softirq time (the emulated links' forwarding and shaping is softirq work).
Busy-polling MPI ranks show as user time even while they only wait for the network, so
a busy CPU alone does not prove a CPU bottleneck; the link line does: it gives the
busiest link direction's bytes over the configured rate x wall time (near 100 %: the
network is the bottleneck) and the packets the queues dropped.
"""
import json
import re
import subprocess
import sys
import time


def cpu_ticks():
    fields = open("/proc/stat").readline().split()[1:]
    user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return {"user": user + nice, "system": system, "softirq": softirq + irq,
            "idle": idle + iowait, "steal": steal}


def link_counters(plan):
    out = {}
    namespaces = {ns for l in plan["links"] for ns in (l["a_end"][0], l["b_end"][0])}
    for ns in sorted(namespaces):
        text = subprocess.run(["tc", "-n", ns, "-s", "-j", "qdisc", "show"], check=True,
                              capture_output=True, text=True).stdout
        for q in json.loads(text or "[]"):
            if q.get("kind") == "tbf":
                out[f"{ns}:{q['dev']}"] = [q.get("bytes", 0), q.get("drops", 0)]
    return out


def rate_bits(text):
    m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", text.lower())
    if not m:
        raise SystemExit(f"monitor: cannot read the rate {text!r}")
    return float(m[1]) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m[2]]


def snapshot(plan):
    return {"time": time.time(), "cpu": cpu_ticks(), "links": link_counters(plan)}


def report(plan, before):
    after = snapshot(plan)
    wall = after["time"] - before["time"]
    d = {k: after["cpu"][k] - before["cpu"][k] for k in after["cpu"]}
    total = sum(d.values()) or 1
    busy = 100.0 * (total - d["idle"]) / total
    cores = len([l for l in open("/proc/stat") if re.match(r"cpu\d", l)])
    print(f"cpu: machine busy {busy:.0f}% of {cores} cores over {wall:.1f} s "
          f"(user {100 * d['user'] / total:.0f}%, system {100 * d['system'] / total:.0f}%, "
          f"softirq {100 * d['softirq'] / total:.0f}%, steal {100 * d['steal'] / total:.0f}%; "
          "whole machine, other jobs included)")
    rate = rate_bits(plan["rate"])
    best, drops = ("", 0.0), 0
    for end, (b1, d1) in after["links"].items():
        b0, d0 = before["links"].get(end, [0, 0])
        util = 8.0 * (b1 - b0) / (rate * wall) if wall > 0 else 0.0
        drops += d1 - d0
        if util > best[1]:
            best = (end, util)
    print(f"links: busiest direction {best[0] or '-'} at {100 * best[1]:.0f}% of "
          f"{plan['rate']} over the run, {drops} packets dropped in the link queues")


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("snapshot", "report"):
        raise SystemExit(__doc__)
    plan = json.load(open(sys.argv[2]))
    if sys.argv[1] == "snapshot":
        json.dump(snapshot(plan), sys.stdout)
    else:
        report(plan, json.load(open(sys.argv[3])))


if __name__ == "__main__":
    main()
