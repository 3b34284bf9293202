#!/usr/bin/env bash
# Hardening step of CI (README, "Hardening"): builds libcomm, kernels, the unit and MPI
# tests and the fuzz targets with clang, AddressSanitizer and UBSan in a build directory of
# their own, runs those tests at small rank counts, runs the threaded synchronisation plan's
# tests under ThreadSanitizer, then fuzzes each parser for a while.
#   scripts/hardening.sh                 (scripts/test.sh runs it after the normal tests)
# Environment: HARDENING_BUILD_DIR (default build-hardening), FUZZ_SECONDS (default 20
# per target; 0 skips fuzzing), FUZZ_SEED (default 1; 0 = random), SANITIZE (default address,undefined),
# TSAN_BUILD_DIR (default build-tsan).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$LIBCOMM_ROOT"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
BUILD="${HARDENING_BUILD_DIR:-build-hardening}"
FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
# A fixed seed keeps the CI step reproducible (a failure there replays with the same seed);
# FUZZ_SEED=0 lets libFuzzer pick one, for longer exploratory runs.
FUZZ_SEED="${FUZZ_SEED:-1}"
ensure_packages "${LIBCOMM_PACKAGES[@]}" "${LIBCOMM_HARDENING_PACKAGES[@]}"
mpi_environment
sanitizer_environment

echo "== hardening: configuring $BUILD (clang, -fsanitize=${SANITIZE:-address,undefined}, libFuzzer)"
start=$SECONDS
mkdir -p "$BUILD"
cmake -S "$LIBCOMM_ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DLIBCOMM_SANITIZE="${SANITIZE:-address,undefined}" -DLIBCOMM_FUZZ=ON \
  -DLIBCOMM_BUILD_BENCHMARKS=OFF >"$BUILD/configure.log" 2>&1 ||
  { cat "$BUILD/configure.log"; exit 1; }
# Only what the step runs: no apps, no benchmarks (tests/CMakeLists.txt, hardening_targets).
cmake --build "$BUILD" -j "$(nproc)" --target hardening_targets
echo "== hardening: build took $((SECONDS - start)) s"

# Unit and MPI tests (not the apps) at 1-4 ranks, and each fuzz target over its corpus.
start=$SECONDS
# The drop-in library runs here linked into its conformance program (tests/dropin/conformance.c,
# --quick: every operation in its three forms, the requests and their completion calls) and
# preloaded into request_orders (requests completed and freed in different orders), with
# ASan's stack-use-after-return check (lib.sh, CMakeLists.txt); its other preloaded, Fortran,
# Python and application tests need the library ahead of the sanitizer runtime and run in
# the normal build only.
# The property sweeps run with fewer cases in this build (LIBCOMM_SANITIZED_BUILD: each
# under 10 s); the testbed is left out.
# (ctest-junit.xml: every test's outcome; scripts/test.sh lists the skipped ones at its end)
rm -f "$BUILD/ctest-junit.xml"
(cd "$BUILD" && ctest --output-on-failure --no-tests=error -j 2 --output-junit "$PWD/ctest-junit.xml" \
  -L 'unit|mpi|fuzz' \
  -LE 'apps|large|testbed' \
  -E '\.np([5-9]|[1-9][0-9])$|^testbed\.|^dropin\.(conformance\.|conformance_(not_loaded|outside_native)|fortran|installed|call_cost|alltoall_call_timer|app|settings_agree|mpi4py|conformance_(help|names))')
echo "== hardening: sanitized tests took $((SECONDS - start)) s"

# ThreadSanitizer on the one part of libcomm that runs threads: the synchronisation plan of
# the tree schedule (its sweep in chunks and its reduction; paper 003, section 5). Its
# tests run 1-4 threads against the reference plan.
start=$SECONDS
TSAN_BUILD="${TSAN_BUILD_DIR:-build-tsan}"
echo "== hardening: ThreadSanitizer on the synchronisation plan ($TSAN_BUILD)"
mkdir -p "$TSAN_BUILD"
cmake -S "$LIBCOMM_ROOT" -B "$TSAN_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DLIBCOMM_SANITIZE=thread -DLIBCOMM_BUILD_BENCHMARKS=OFF >"$TSAN_BUILD/configure.log" 2>&1 ||
  { cat "$TSAN_BUILD/configure.log"; exit 1; }
cmake --build "$TSAN_BUILD" -j "$(nproc)" --target unit_topology >"$TSAN_BUILD/build.log" 2>&1 ||
  { tail -30 "$TSAN_BUILD/build.log"; exit 1; }
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "$TSAN_BUILD/tests/topology/unit_topology" \
  --gtest_filter='SyncPlan.*' --gtest_brief=1
echo "== hardening: ThreadSanitizer step took $((SECONDS - start)) s"

if ((FUZZ_SECONDS > 0)); then
  for target in topology node_map; do
    start=$SECONDS
    # New inputs go to a scratch directory; the corpus in the repo only grows by hand
    # (a crash input is added there as a regression once fixed).
    scratch="$BUILD/fuzz-scratch/$target"
    rm -rf "$scratch" && mkdir -p "$scratch"
    echo "== hardening: fuzzing $target for $FUZZ_SECONDS s"
    "$BUILD/tests/fuzz/fuzz_$target" -max_total_time="$FUZZ_SECONDS" -seed="$FUZZ_SEED" -max_len=4096 \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$BUILD/fuzz-$target-" \
      "$scratch" "tests/fuzz/$target" 2>"$BUILD/fuzz-$target.log" ||
      { tail -40 "$BUILD/fuzz-$target.log"; echo "fuzz_$target found a crash: $BUILD/fuzz-$target-*"; exit 1; }
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$BUILD/fuzz-$target.log" |
      tr '\n' ' '
    echo "($((SECONDS - start)) s)"
  done
fi
