#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest.
#   scripts/test.sh [ctest args...]        e.g. scripts/test.sh -R alltoall
# Then, without ctest args, the SimGrid models' tests (tests/sim/packet_model.sh: fluid and
# packet-level; tests/sim/apps_model.sh: the mini-apps' cost models;
# tests/sim/contention_claims.sh: papers 000 and 003's claims) and the hardening step
# (scripts/hardening.sh: sanitizers, fuzzing).
# Environment: BUILD_DIR (default build), LIBCOMM_LARGE_TESTS=ON to add the tests that
# need ~10 GiB of memory (buffers beyond 2^31 bytes), LIBCOMM_HARDENING=ON/OFF to force,
# LIBCOMM_TIMEOUT_FACTOR=N to multiply every test's timeout (a slow or busy machine).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$LIBCOMM_ROOT"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
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
cd "$LIBCOMM_ROOT"
if (($# == 0)); then
  # The SimGrid models: the packet-level one (ns-3) next to the fluid one, on 4 machines.
  echo "== SimGrid: fluid and packet-level models (tests/sim/packet_model.sh)"
  tests/sim/packet_model.sh
  echo "== SimGrid: the mini-apps' cost models (tests/sim/apps_model.sh)"
  tests/sim/apps_model.sh
  echo "== SimGrid: papers 000 and 003's contention claims (tests/sim/contention_claims.sh)"
  tests/sim/contention_claims.sh
fi
default_hardening=ON
(($#)) && default_hardening=OFF
if [[ "${LIBCOMM_HARDENING:-$default_hardening}" == ON ]]; then
  scripts/hardening.sh
fi
