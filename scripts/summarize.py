#!/usr/bin/env python3
"""Turns the JSON records of the main job (results/*.json) into one summary table.

One row per program, algorithm, ranks and representative size (1 KiB, 64 KiB, 1 MiB and
the smallest and largest size of the run), with the median time, the ratio to native
and the validation verdict. Also writes results/summary.json. Exit 1 if any run failed.
"""
import json
import pathlib
import sys


def fmt_size(b):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or unit == "GiB":
            return f"{b:g} {unit}"
        b /= 1024


def main(folder):
    folder = pathlib.Path(folder)
    rows, failed = [], False
    for path in sorted(folder.glob("*.json")):
        if path.name == "summary.json":
            continue
        rec = json.loads(path.read_text())
        if rec.get("validation") not in ("PASS", "NOT_CHECKED"):
            failed = True
        results = rec.get("results", [])
        sizes = sorted({r["block_bytes"] for r in results})
        keep = {s for s in sizes if s in (1024, 65536, 1 << 20)}
        if sizes:
            keep |= {sizes[0], sizes[-1]}
        for r in results:
            if r["block_bytes"] not in keep:
                continue
            algo = r["algo"] if r["ran"] == r["algo"] else f'{r["algo"]}->{r["ran"]}'
            if r.get("decomp") not in (None, r["algo"]):  # fft3d: slab/pencil rows
                algo = f'{r["decomp"]}/{algo}'
            if r.get("case"):  # programs with several cases per size (matvec: op layout grid)
                algo = f'{r["case"]} {algo}'
            rows.append({
                "program": rec["program"], "run": path.stem, "algorithm": algo,
                "ranks": rec["ranks"], "size": r["block_bytes"],
                "time_us": r["median_s"] * 1e6, "ratio_to_native": r.get("ratio_to_native"),
                "validation": r["validation"]})
            failed |= r["validation"] == "FAIL"
    (folder / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("SUMMARY (time = median of repeats, slowest rank; ratio = time / native, same run)")
    w = max([28] + [len(r["algorithm"]) + 1 for r in rows])
    pw = max([11] + [len(r["program"]) + 1 for r in rows])
    head = f'{"program":<{pw}}{"algorithm":<{w}}{"ranks":>5}  {"size":>9}{"time_us":>12}{"ratio":>8}  validation'
    print(head)
    print("-" * len(head))
    for r in sorted(rows, key=lambda r: (r["run"], r["size"])):
        ratio = "" if r["ratio_to_native"] is None else f'{r["ratio_to_native"]:.2f}'
        print(f'{r["program"]:<{pw}}{r["algorithm"]:<{w}}{r["ranks"]:>5}  {fmt_size(r["size"]):>9}'
              f'{r["time_us"]:>12.1f}{ratio:>8}  {r["validation"]}')
    print(f'overall validation: {"FAIL" if failed or not rows else "PASS"} ({len(rows)} rows)')
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "results"))
