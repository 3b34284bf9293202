#!/usr/bin/env bash
# Side-by-side regression check of two builds: commbench at 2 ranks, every operation and
# algorithm, 8 B - 4 MiB, the two builds interleaved run by run (so a busy machine slows
# both alike), PAIRS runs of each. Prints, per operation, the new / base ratio of each
# algorithm's median time per size, and of its ratio to the same run's native.
#   scripts/compare_builds.sh BASE_BUILD_DIR NEW_BUILD_DIR [PAIRS] [REPS]
# Example (the build before a change in a git worktree):
#   git worktree add /tmp/base <rev> && cmake -S /tmp/base -B /tmp/base/build && cmake --build /tmp/base/build --target commbench
#   scripts/compare_builds.sh /tmp/base/build build 15 11
set -euo pipefail
usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; }
[[ "${1:-}" == -h || "${1:-}" == --help ]] && { usage; exit 0; }
(($# >= 2)) || { usage >&2; exit 2; }
BASE="$1" NEW="$2" PAIRS="${3:-9}" REPS="${4:-11}"
[[ "$PAIRS" =~ ^[1-9][0-9]*$ && "$REPS" =~ ^[1-9][0-9]*$ ]] ||
  { echo "compare_builds.sh: PAIRS and REPS must be positive integers, got '$PAIRS' '$REPS'" >&2; exit 2; }
for b in "$BASE" "$NEW"; do
  [[ -x "$b/apps/commbench/commbench" ]] || { echo "compare_builds.sh: no $b/apps/commbench/commbench" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
OUT="$(mktemp -d)"
for ((i = 1; i <= PAIRS; ++i)); do
  for op in alltoall allgather reduce_scatter alltoallv; do
    for side in base new; do
      dir="$BASE"; [[ $side == new ]] && dir="$NEW"
      mpirun -np 2 "$dir/apps/commbench/commbench" --op "$op" --algo all --min 8 --max 4MiB \
        --reps "$REPS" --json "$OUT/$op.$side.$i.json" >/dev/null
    done
  done
done
python3 - "$OUT" <<'PY'
import collections, glob, json, statistics, sys
out = sys.argv[1]
lab = lambda s: f"{s // 1048576}M" if s >= 1048576 else f"{s // 1024}K" if s >= 1024 else f"{s}"
for op in ["alltoall", "allgather", "reduce_scatter", "alltoallv"]:
    for field, what in [("median_s", "median time"), ("ratio_to_native", "ratio to the run's native")]:
        r = collections.defaultdict(lambda: collections.defaultdict(list))
        for f in glob.glob(f"{out}/{op}.*.json"):
            side = f.split("/")[-1].split(".")[1]
            for x in json.load(open(f))["results"]:
                key = x["algo"] + ("/" + x["mode"] if "mode" in x else "")
                r[(key, x["block_bytes"])][side].append(x[field])
        algos = []
        for (a, _) in r:
            if a not in algos and not (field == "ratio_to_native" and a.startswith("native")):
                algos.append(a)
        sizes = sorted({s for (_, s) in r})
        print(f"\n### {op}: new / base, {what}\n")
        print("| algorithm | " + " | ".join(lab(s) for s in sizes) + " | median | worst |")
        print("|---|" + "---:|" * (len(sizes) + 2))
        for a in algos:
            qs = [statistics.median(r[(a, s)]["new"]) / statistics.median(r[(a, s)]["base"])
                  for s in sizes if r[(a, s)]["new"] and r[(a, s)]["base"]]
            print(f"| {a} | " + " | ".join("%.2f" % q for q in qs) +
                  f" | {statistics.median(qs):.2f} | {max(qs):.2f} |")
PY
rm -rf "$OUT"
