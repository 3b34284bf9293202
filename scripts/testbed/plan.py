#!/usr/bin/env python3
"""Translates a switch tree (inputs/topologies/*.topo) into the Linux commands that build
it as an emulated packet network on one machine (issue 9), and back down.

    plan.py up TOPO [--rate 2mbit] [--delay 0] [--queue 64kb] [--ranks-per-machine SPEC] [--tcp CC]
                    [--prefix lc] [--net 10.147] [--state FILE]
    plan.py hostfile STATE              one "NAMESPACE slots=K" line per machine, rank order
    plan.py describe STATE              what is up, for `testbed.sh status`
    plan.py pairs STATE                 per link: two machines whose path crosses it

`up` prints one shell command per line (no privileges needed: testbed.sh runs them, the
unit tests compare them with expectations) and, with --state, writes the plan as JSON.

Mapping (why it is built this way):
- one network namespace per machine (PREFIX-NAME) with one interface PREFIX-eth;
- one namespace per switch (PREFIX-NAME) holding one bridge PREFIX-br, so no bridge or
  port lives in the root namespace;
- one veth pair per tree link; each end carries its own egress qdisc (netem delay, then
  a tbf rate limit), so each direction of every link is limited separately, as on a
  full-duplex switched link (paper 003, section 2). The bridge forwards at no cost, as
  the paper's switches do;
- one extra, unlimited veth PREFIX-host from the root namespace to the first switch: the
  launcher (mpirun) stays in the root namespace and reaches the daemons through it. It
  carries only start-up and control traffic: MPI data between machines never touches it.
Addresses: machine i (rank order) gets NET.(1 + i // 254).(1 + i % 254), the root side
NET.0.1, all in NET.0.0/16.
"""
import argparse
import json
import re
import sys

# Linux interface names have at most 15 characters (IFNAMSIZ - 1).
IFNAME_MAX = 15


class PlanError(Exception):
    pass


def expand(token, where):
    m = re.fullmatch(r"(.*)\[(\d+)-(\d+)\](.*)", token)
    if not m:
        if "[" in token or "]" in token:
            raise PlanError(f"{where}: bad range in {token!r}")
        return [token]
    lo, hi = int(m[2]), int(m[3])
    if lo > hi:
        raise PlanError(f"{where}: empty range in {token!r}")
    return [f"{m[1]}{i}{m[4]}" for i in range(lo, hi + 1)]


def parse_topology(path):
    """Same format as libcomm::Topology::parse (inputs/topologies/README.md); the tree
    checks that matter for building the network are repeated here."""
    switches, machines, links, ranks = [], [], [], None
    declared = set()
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        raise PlanError(f"cannot read topology {path}: {e.strerror}")
    for lineno, line in enumerate(lines, 1):
        where = f"{path}:{lineno}"
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        args = [n for w in words[1:] for n in expand(w, where)]
        if words[0] in ("switch", "machine"):
            for n in args:
                if n in declared:
                    raise PlanError(f"{where}: node {n!r} declared twice")
                declared.add(n)
            (switches if words[0] == "switch" else machines).extend(args)
        elif words[0] == "link":
            if len(args) < 2:
                raise PlanError(f"{where}: 'link' needs at least two nodes")
            for n in args:
                if n not in declared:
                    raise PlanError(f"{where}: unknown node {n!r}")
            links += [(args[0], b) for b in args[1:]]
        elif words[0] == "ranks":
            ranks = args
        else:
            raise PlanError(f"{where}: unknown directive {words[0]!r}")
    if len(machines) < 3:
        raise PlanError(f"{path}: {len(machines)} machines, at least 3 are needed")
    if ranks is not None and sorted(ranks) != sorted(machines):
        raise PlanError(f"{path}: the 'ranks' line is not a permutation of the machines")
    degree = {n: 0 for n in declared}
    parent = {n: n for n in declared}

    def root(n):
        while parent[n] != n:
            n = parent[n]
        return n

    for a, b in links:
        if a == b:
            raise PlanError(f"{path}: node {a!r} linked to itself")
        ra, rb = root(a), root(b)
        if ra == rb:
            raise PlanError(f"{path}: link {a} -- {b} closes a cycle")
        parent[ra] = rb
        degree[a] += 1
        degree[b] += 1
    for m in machines:
        if degree[m] != 1:
            raise PlanError(f"{path}: machine {m!r} has {degree[m]} links, a machine needs exactly 1")
    for a, b in links:
        if a in machines and b in machines:
            raise PlanError(f"{path}: link {a} -- {b} joins two machines; machines hang off switches")
    first = (switches + machines)[0]
    for n in declared:
        if root(n) != root(first):
            raise PlanError(f"{path}: node {n!r} has no path to {first!r}")
    return switches, machines, links, ranks or machines


def parse_ranks_per_machine(spec, count):
    """SPEC: K (every machine), A,B,C (one per machine, rank order) or a .nodes file."""
    if spec is None:
        return [1] * count
    text = spec
    if not re.fullmatch(r"[0-9, ]+", spec):
        try:
            text = " ".join(l.split("#", 1)[0] for l in open(spec).read().splitlines())
        except OSError as e:
            raise PlanError(f"--ranks-per-machine: cannot read {spec}: {e.strerror}")
    sizes = [int(w) for w in re.split(r"[,\s]+", text.strip()) if w]
    if len(sizes) == 1:
        sizes *= count
    if len(sizes) != count or any(s < 1 for s in sizes):
        raise PlanError(f"--ranks-per-machine {spec!r}: need {count} positive counts "
                        f"(one per machine) or one, got {sizes}")
    return sizes


def ifname(prefix, node):
    name = f"{prefix}-{node}"
    if len(name) > IFNAME_MAX:
        raise PlanError(f"interface name {name!r} is longer than {IFNAME_MAX} characters: "
                        "use shorter node names or a shorter --prefix")
    return name


def address(net, i):
    return f"{net}.{1 + i // 254}.{1 + i % 254}"


def shaping(ns, dev, rate, delay, queue):
    """Egress of one link end: netem adds the propagation delay, tbf under it the rate
    (burst of 2 full frames: the link sends at the rate, not in bursts; queue = the
    switch port's buffer)."""
    cmds = []
    parent = "root"
    if not re.fullmatch(r"0+(us|ms|s)?", delay):
        cmds.append(f"tc -n {ns} qdisc add dev {dev} root handle 1: netem delay {delay}")
        parent = "parent 1:1"
    cmds.append(f"tc -n {ns} qdisc add dev {dev} {parent} handle 10: tbf rate {rate} "
                f"burst 3028 limit {queue}")
    return cmds


def build_plan(a):
    switches, machines, links, ranks = parse_topology(a.topology)
    if not switches:
        raise PlanError(f"{a.topology}: no switch")
    if not re.fullmatch(r"[a-z][a-z0-9]{0,5}", a.prefix):
        raise PlanError(f"--prefix {a.prefix!r}: 1-6 lower-case letters or digits, starting with a letter")
    if not re.fullmatch(r"10\.\d{1,3}", a.net) or int(a.net.split(".")[1]) > 255:
        raise PlanError(f"--net {a.net!r}: the first two octets of a 10.x.0.0/16 range, e.g. 10.147")
    if a.tcp is not None and not re.fullmatch(r"[a-z0-9_]+", a.tcp):
        raise PlanError(f"--tcp {a.tcp!r}: a congestion control name such as reno")
    if len(machines) > 254 * 254:
        raise PlanError("too many machines for one /16")
    slots = parse_ranks_per_machine(a.ranks_per_machine, len(machines))
    p = a.prefix
    ns = {n: f"{p}-{n}" for n in switches + machines}
    rank_index = {m: i for i, m in enumerate(ranks)}
    br, eth, host = f"{p}-br", f"{p}-eth", f"{p}-host"
    cmds = []
    for s in switches:
        cmds += [f"ip netns add {ns[s]}",
                 f"ip -n {ns[s]} link set lo up",
                 f"ip -n {ns[s]} link add {br} type bridge forward_delay 0 stp_state 0",
                 f"ip -n {ns[s]} link set {br} up"]
    for m in ranks:
        cmds += [f"ip netns add {ns[m]}",
                 f"ip -n {ns[m]} link set lo up"]
        if a.tcp:  # the machine's TCP congestion control (default: the host's)
            cmds.append(f"ip netns exec {ns[m]} sysctl -qw net.ipv4.tcp_congestion_control={a.tcp}")
    for a_, b_ in links:
        # A switch--machine link: the switch end is a bridge port named after the machine.
        s, o = (a_, b_) if a_ in switches else (b_, a_)
        if o in machines:
            port = ifname(p, o)
            cmds += [f"ip -n {ns[s]} link add {port} type veth peer name {eth} netns {ns[o]}",
                     f"ip -n {ns[s]} link set {port} master {br} up",
                     f"ip -n {ns[o]} addr add {address(a.net, rank_index[o])}/16 dev {eth}",
                     f"ip -n {ns[o]} link set {eth} up"]
            cmds += shaping(ns[s], port, a.rate, a.delay, a.queue)
            cmds += shaping(ns[o], eth, a.rate, a.delay, a.queue)
        else:  # switch--switch: each end is a port of its bridge named after the other one
            pa, pb = ifname(p, b_), ifname(p, a_)
            cmds += [f"ip -n {ns[a_]} link add {pa} type veth peer name {pb} netns {ns[b_]}",
                     f"ip -n {ns[a_]} link set {pa} master {br} up",
                     f"ip -n {ns[b_]} link set {pb} master {br} up"]
            cmds += shaping(ns[a_], pa, a.rate, a.delay, a.queue)
            cmds += shaping(ns[b_], pb, a.rate, a.delay, a.queue)
    # The launcher's way in: unlimited, root namespace <-> first switch.
    cmds += [f"ip link add {host} type veth peer name {host} netns {ns[switches[0]]}",
             f"ip -n {ns[switches[0]]} link set {host} master {br} up",
             f"ip addr add {a.net}.0.1/16 dev {host}",
             f"ip link set {host} up"]
    plan = {
        "topology": a.topology, "tcp": a.tcp or "host default", "rate": a.rate, "delay": a.delay, "queue": a.queue,
        "prefix": p, "net": a.net, "subnet": f"{a.net}.0.0/16", "host_if": host,
        "host_address": f"{a.net}.0.1",
        "switches": [{"name": s, "namespace": ns[s]} for s in switches],
        "machines": [{"name": m, "namespace": ns[m], "address": address(a.net, i),
                      "slots": slots[i]} for i, m in enumerate(ranks)],
        "links": [{"a": x, "b": y,
                   "a_end": [ns[x], eth if x in machines else ifname(p, y)],
                   "b_end": [ns[y], eth if y in machines else ifname(p, x)]}
                  for x, y in links],
    }
    return plan, cmds


def check_pairs(plan):
    """For every link, the first machine (rank order) on each side of it and the number
    of links between them: `testbed.sh check` measures the link through that pair."""
    order = [m["name"] for m in plan["machines"]]
    adj = {}
    for l in plan["links"]:
        adj.setdefault(l["a"], []).append(l["b"])
        adj.setdefault(l["b"], []).append(l["a"])

    def side(start, cut):  # nodes reachable from start without crossing the link `cut`
        seen, todo = {start: 0}, [start]
        while todo:
            n = todo.pop()
            for o in adj[n]:
                if o not in seen and {n, o} != cut:
                    seen[o] = seen[n] + 1
                    todo.append(o)
        return seen

    pairs = []
    machines = set(order)
    # Switch--switch links first: `check --max-links K` then covers the trunks.
    for l in sorted(plan["links"], key=lambda l: (l["a"] in machines or l["b"] in machines)):
        cut = {l["a"], l["b"]}
        da, db = side(l["a"], cut), side(l["b"], cut)
        ma = min((m for m in order if m in da), key=lambda m: (da[m], order.index(m)))
        mb = min((m for m in order if m in db), key=lambda m: (db[m], order.index(m)))
        pairs.append((f"{l['a']}--{l['b']}", order.index(ma), order.index(mb), da[ma] + db[mb] + 1))
    return pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up")
    up.add_argument("topology")
    up.add_argument("--rate", default="2mbit")
    up.add_argument("--delay", default="0")
    up.add_argument("--queue", default="64kb", help="tbf queue (switch port buffer)")
    up.add_argument("--ranks-per-machine", default=None)
    up.add_argument("--tcp", default=None, help="TCP congestion control of the machines")
    up.add_argument("--prefix", default="lc")
    up.add_argument("--net", default="10.147")
    up.add_argument("--state", default=None)
    hf = sub.add_parser("hostfile")
    hf.add_argument("state")
    de = sub.add_parser("describe")
    de.add_argument("state")
    pa = sub.add_parser("pairs")
    pa.add_argument("state")
    a = ap.parse_args()
    try:
        if a.cmd == "up":
            plan, cmds = build_plan(a)
            if a.state:
                json.dump(plan, open(a.state, "w"), indent=1)
            print("\n".join(cmds))
        else:
            plan = json.load(open(a.state))
            if a.cmd == "pairs":
                for label, i, j, hops in check_pairs(plan):
                    m = plan["machines"]
                    print(label, m[i]["namespace"], m[j]["namespace"], hops)
            elif a.cmd == "hostfile":
                for m in plan["machines"]:
                    print(f"{m['namespace']} slots={m['slots']}")
            else:
                ms = plan["machines"]
                print(f"topology {plan['topology']}: {len(plan['switches'])} switches, "
                      f"{len(ms)} machines, {sum(m['slots'] for m in ms)} rank slots; "
                      f"links {plan['rate']}, delay {plan['delay']}, queue {plan['queue']}, "
                      f"TCP {plan.get('tcp', 'host default')}, "
                      f"subnet {plan['subnet']}")
                for m in ms:
                    print(f"  machine {m['name']:8} namespace {m['namespace']:10} "
                          f"{m['address']:15} slots={m['slots']}")
    except PlanError as e:
        sys.exit(f"testbed: error: {e}")


if __name__ == "__main__":
    main()
