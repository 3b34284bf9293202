#!/usr/bin/env python3
"""Unit tests of the testbed's topology-to-commands translation (scripts/testbed/plan.py,
issue 9). No privileges needed: nothing is run, the printed commands are compared."""
import atexit
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAN = os.path.join(ROOT, "scripts", "testbed", "plan.py")
TOPOS = os.path.join(ROOT, "inputs", "topologies")


def plan(*args, state=False):
    """(exit code, stdout lines, stderr, plan dict or None)."""
    with tempfile.TemporaryDirectory() as d:
        extra = ["--state", os.path.join(d, "p.json")] if state else []
        r = subprocess.run([sys.executable, PLAN, "up", *args, *extra], capture_output=True, text=True)
        p = None
        if state and r.returncode == 0:
            with open(extra[1]) as f:
                p = json.load(f)
    return r.returncode, r.stdout.splitlines(), r.stderr, p


_written = []  # topology files of the tests, removed at exit


def write(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".topo", delete=False)
    f.write(text)
    f.close()
    _written.append(f.name)
    return f.name


atexit.register(lambda: [os.unlink(p) for p in _written if os.path.exists(p)])


class Translation(unittest.TestCase):
    def test_star3_exact_commands(self):
        # The whole plan of the smallest tree, written out by hand.
        rc, cmds, err, _ = plan(os.path.join(TOPOS, "star3.topo"), "--rate", "20mbit")
        self.assertEqual(rc, 0, err)
        want = ["ip netns add lc-s0", "ip -n lc-s0 link set lo up",
                "ip -n lc-s0 link add lc-br type bridge forward_delay 0 stp_state 0",
                "ip -n lc-s0 link set lc-br up"]
        for n in range(3):
            want += [f"ip netns add lc-n{n}", f"ip -n lc-n{n} link set lo up"]
        for n in range(3):
            want += [f"ip -n lc-s0 link add lc-n{n} type veth peer name lc-eth netns lc-n{n}",
                     f"ip -n lc-s0 link set lc-n{n} master lc-br up",
                     f"ip -n lc-n{n} addr add 10.147.1.{n + 1}/16 dev lc-eth",
                     f"ip -n lc-n{n} link set lc-eth up",
                     f"tc -n lc-s0 qdisc add dev lc-n{n} root handle 10: tbf rate 20mbit burst 3028 limit 64kb",
                     f"tc -n lc-n{n} qdisc add dev lc-eth root handle 10: tbf rate 20mbit burst 3028 limit 64kb"]
        want += ["ip link add lc-host type veth peer name lc-host netns lc-s0",
                 "ip -n lc-s0 link set lc-host master lc-br up",
                 "ip addr add 10.147.0.1/16 dev lc-host", "ip link set lc-host up"]
        self.assertEqual(cmds, want)

    def test_every_link_is_limited_at_both_ends(self):
        for name, switches, machines in (("fig1", 4, 6), ("fig5a", 1, 24), ("fig5b", 4, 32), ("fig5c", 4, 32)):
            rc, cmds, err, p = plan(os.path.join(TOPOS, f"{name}.topo"), state=True)
            self.assertEqual(rc, 0, err)
            links = switches + machines - 1  # a tree
            self.assertEqual(len(p["links"]), links, name)
            veths = [c for c in cmds if " type veth " in c]
            self.assertEqual(len(veths), links + 1, name)  # + the root namespace's link
            shaped = {tuple(c.split()[2:3] + c.split()[6:7]) for c in cmds if " tbf rate " in c}
            ends = {(ns, dev) for l in p["links"] for ns, dev in (l["a_end"], l["b_end"])}
            self.assertEqual(shaped, ends, name)
            self.assertEqual(len(shaped), 2 * links, name)
            self.assertFalse(any("lc-host" in c and "tbf" in c for c in cmds), "the control link is not limited")
            self.assertEqual(sum(c.startswith("ip netns add") for c in cmds), switches + machines)

    def test_names_carry_the_prefix_and_addresses_are_unique(self):
        rc, cmds, err, p = plan(os.path.join(TOPOS, "fig5b.topo"), "--prefix", "tb", "--net", "10.9",
                                state=True)
        self.assertEqual(rc, 0, err)
        for c in cmds:
            for name in re.findall(r"(?:netns add|-n|dev|name|master|netns) (\S+)", c):
                if not re.fullmatch(r"[\d./]+", name):
                    self.assertTrue(name.startswith("tb-"), f"{name!r} in {c!r}")
        addrs = [m["address"] for m in p["machines"]]
        self.assertEqual(len(set(addrs)), 32)
        self.assertTrue(all(a.startswith("10.9.") for a in addrs))
        self.assertEqual(p["subnet"], "10.9.0.0/16")

    def test_switch_to_switch_link_is_a_veth_between_bridges(self):
        rc, cmds, err, _ = plan(os.path.join(TOPOS, "fig1.topo"))
        self.assertEqual(rc, 0, err)
        self.assertIn("ip -n lc-s1 link add lc-s0 type veth peer name lc-s1 netns lc-s0", cmds)
        self.assertIn("ip -n lc-s1 link set lc-s0 master lc-br up", cmds)
        self.assertIn("ip -n lc-s0 link set lc-s1 master lc-br up", cmds)

    def test_ranks_order_and_slots(self):
        topo = write("switch s\nmachine a b c\nlink s a b c\nranks c a b\n")
        rc, _, err, p = plan(topo, "--ranks-per-machine", "1,2,3", state=True)
        self.assertEqual(rc, 0, err)
        self.assertEqual([(m["name"], m["slots"], m["address"]) for m in p["machines"]],
                         [("c", 1, "10.147.1.1"), ("a", 2, "10.147.1.2"), ("b", 3, "10.147.1.3")])
        rc, _, err, p = plan(os.path.join(TOPOS, "star3.topo"), "--ranks-per-machine", "4", state=True)
        self.assertEqual([m["slots"] for m in p["machines"]], [4, 4, 4])
        nodes = write("# comment\n2 3\n4\n")
        rc, _, err, p = plan(os.path.join(TOPOS, "star3.topo"), "--ranks-per-machine", nodes, state=True)
        self.assertEqual([m["slots"] for m in p["machines"]], [2, 3, 4])

    def test_tcp_congestion_control_per_machine(self):
        rc, cmds, err, _ = plan(os.path.join(TOPOS, "fig1.topo"), "--tcp", "reno")
        self.assertEqual(rc, 0, err)
        cc = [c for c in cmds if "tcp_congestion_control" in c]
        self.assertEqual(cc, [f"ip netns exec lc-n{i} sysctl -qw net.ipv4.tcp_congestion_control=reno"
                              for i in range(6)])
        rc, cmds, err, _ = plan(os.path.join(TOPOS, "fig1.topo"))
        self.assertFalse(any("tcp_congestion_control" in c for c in cmds))

    def test_delay_adds_netem_above_tbf(self):
        rc, cmds, err, _ = plan(os.path.join(TOPOS, "star3.topo"), "--delay", "50us")
        self.assertEqual(rc, 0, err)
        self.assertIn("tc -n lc-n0 qdisc add dev lc-eth root handle 1: netem delay 50us", cmds)
        self.assertIn("tc -n lc-n0 qdisc add dev lc-eth parent 1:1 handle 10: tbf rate 2mbit burst 3028 limit 64kb", cmds)

    def test_errors_name_the_problem(self):
        cases = [
            ("switch s\nmachine a b c\nlink s a b c\nlink a b\n", [], "closes a cycle"),
            ("switch s t\nmachine a b c\nlink s a b\nlink t c\n", [], "has no path to"),
            ("switch s\nmachine a b\nlink s a b\n", [], "2 machines, at least 3"),
            ("switch s\nmachine a b c\nlink s a b c x\n", [], "unknown node 'x'"),
            ("switch s\nmachine a b c\nlink s a b c\nranks a a b\n", [], "not a permutation"),
            ("switch s\nmachine a b c\nlink s a b c\n", ["--ranks-per-machine", "1,2"], "need 3 positive counts"),
            ("switch s\nmachine a b c\nlink s a b c\n", ["--prefix", "Bad-"], "--prefix"),
            ("switch s\nmachine a b c\nlink s a b c\n", ["--net", "192.168"], "--net"),
            ("switch s\nmachine a b c\nlink s a b c\n", ["--tcp", "c;rm"], "--tcp"),
            ("switch s\nmachine averyverylongname b c\nlink s averyverylongname b c\n", [], "longer than 15"),
        ]
        for text, args, msg in cases:
            rc, cmds, err, _ = plan(write(text), *args)
            self.assertEqual(rc, 1, text)
            self.assertIn(msg, err, text)
            self.assertIn("testbed: error:", err)
            self.assertEqual(cmds, [])

    def test_check_pairs_cross_their_link(self):
        with tempfile.TemporaryDirectory() as d:
            st = os.path.join(d, "p.json")
            subprocess.run([sys.executable, PLAN, "up", os.path.join(TOPOS, "fig5c.topo"), "--state", st],
                           check=True, capture_output=True)
            out = subprocess.run([sys.executable, PLAN, "pairs", st], check=True, capture_output=True,
                                 text=True).stdout.splitlines()
        rows = {r.split()[0]: r.split()[1:] for r in out}
        self.assertEqual(len(rows), 35)
        # fig5c is a chain s0 - s1 - s2 - s3 of 8 machines each: the s1--s2 link is
        # measured between a machine of s1 (n8) and one of s2 (n16), 3 links apart.
        self.assertEqual(rows["s1--s2"], ["lc-n8", "lc-n16", "3"])
        self.assertEqual(rows["s0--n0"], ["lc-n1", "lc-n0", "2"])
        self.assertEqual([r.split()[0] for r in out[:3]], ["s0--s1", "s1--s2", "s2--s3"])


class Script(unittest.TestCase):
    """scripts/testbed.sh without privileges: --dry-run and argument errors."""
    SH = os.path.join(ROOT, "scripts", "testbed.sh")

    def run_sh(self, *args):
        return subprocess.run(["bash", self.SH, *args], capture_output=True, text=True)

    def test_dry_run_prints_the_plan(self):
        r = self.run_sh("--prefix", "tb", "--net", "10.9", "up", "star3", "--rate", "5mbit", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        _, want, _, _ = plan(os.path.join(TOPOS, "star3.topo"), "--prefix", "tb", "--net", "10.9",
                             "--rate", "5mbit")
        self.assertEqual(r.stdout.splitlines(), want)

    def test_errors(self):
        for args, msg in ((["up"], "no topology given"), (["up", "nosuch"], "no topology file"),
                          (["up", "star3", "--bogus"], "unknown option '--bogus'"),
                          (["frobnicate"], "unknown command 'frobnicate'")):
            r = self.run_sh(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(msg, r.stderr, args)


if __name__ == "__main__":
    unittest.main()
