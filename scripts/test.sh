#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest.
#   scripts/test.sh [ctest args...]        e.g. scripts/test.sh -R alltoall
# Environment: BUILD_DIR (default build), LIBCOMM_LARGE_TESTS=ON to add the tests that
# need ~10 GiB of memory (buffers beyond 2^31 bytes).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$LIBCOMM_ROOT"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
BUILD_DIR="${BUILD_DIR:-build}"
ensure_packages "${LIBCOMM_PACKAGES[@]}"
mpi_environment
echo "== building in $BUILD_DIR"
configure_and_build "$BUILD_DIR" -DLIBCOMM_LARGE_TESTS="${LIBCOMM_LARGE_TESTS:-OFF}"
echo "== running tests"
cd "$BUILD_DIR"
ctest --output-on-failure --no-tests=error -j 2 "$@"
