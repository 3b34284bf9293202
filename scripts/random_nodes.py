#!/usr/bin/env python3
"""Draws a random node layout (paper 000, section 4: 'various random distributions' of
processes over 6 nodes of up to 4 processors) and prints it as a .nodes file.

    scripts/random_nodes.py --seed 1 [--nodes 6] [--max 4]

The generator is Python's Mersenne Twister seeded with --seed, so a seed names one layout.
"""
import argparse
import random

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--seed", type=int, required=True, help="random seed")
ap.add_argument("--nodes", type=int, default=6, help="number of nodes (default 6)")
ap.add_argument("--max", type=int, default=4, help="largest node size (default 4)")
a = ap.parse_args()
if a.nodes < 1 or a.max < 1:
    ap.error("--nodes and --max must be positive")
rng = random.Random(a.seed)
sizes = [rng.randint(1, a.max) for _ in range(a.nodes)]
print(f"# random layout, seed {a.seed}: {a.nodes} nodes of 1..{a.max} processes, {sum(sizes)} ranks")
print(f"# made by: scripts/random_nodes.py --seed {a.seed} --nodes {a.nodes} --max {a.max}")
print(" ".join(map(str, sizes)))
