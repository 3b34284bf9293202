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
# At its end it lists the tests ctest skipped (exit 77 without root or network namespaces,
# GTEST_SKIP): they did not pass, they did not run; a skip leaves the exit status 0.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$LIBCOMM_ROOT"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
BUILD_DIR="${BUILD_DIR:-build}"
ensure_packages "${LIBCOMM_PACKAGES[@]}"
mpi_environment
echo "== building in $BUILD_DIR"
configure_and_build "$BUILD_DIR" -DLIBCOMM_LARGE_TESTS="${LIBCOMM_LARGE_TESTS:-OFF}"
echo "== running tests"
cd "$BUILD_DIR"
# Every test's outcome in JUnit form, for the list of skipped tests printed at the end (on
# every exit, failures included: the trap keeps the exit status).
JUNIT="$PWD/ctest-junit.xml" HARDENING_JUNIT=""
rm -f "$JUNIT"
report_skipped() {
  local status=$? skipped
  skipped=$( {
    ctest_skipped "$JUNIT"
    [[ -z "$HARDENING_JUNIT" ]] ||
      ctest_skipped "$HARDENING_JUNIT" | sed 's/$/ (sanitized build, scripts\/hardening.sh)/'
  } 2>&1 || true)
  if [[ -n "$skipped" ]]; then
    echo "== SKIPPED, NOT PASSED: $(grep -c . <<<"$skipped") test(s) did not run here (ctest counts them" \
      "apart from the passed ones; a skip alone leaves the exit status 0):"
    echo "$skipped"
  else
    echo "== skipped tests: none"
  fi
  return "$status"
}
trap report_skipped EXIT
ctest --output-on-failure --no-tests=error -j 2 --output-junit "$JUNIT" "$@"
cd "$LIBCOMM_ROOT"
if (($# == 0)); then
  # The SimGrid models: the packet-level one (ns-3) next to the fluid one, on 4 machines.
  echo "== SimGrid: fluid and packet-level models (tests/sim/packet_model.sh)"
  tests/sim/packet_model.sh
  echo "== SimGrid: the mini-apps' cost models (tests/sim/apps_model.sh)"
  tests/sim/apps_model.sh
  echo "== SimGrid: native as Open MPI's decision, the selector in the records (tests/sim/native_selector.sh)"
  tests/sim/native_selector.sh
  echo "== SimGrid: the model without a model file reads the platform (tests/sim/model_defaults.sh)"
  tests/sim/model_defaults.sh
  echo "== SimGrid: cross traffic, a network that varies from call to call (tests/sim/cross_traffic.sh)"
  tests/sim/cross_traffic.sh
  echo "== SimGrid: every rank's clock starts at one instant, not the barrier's skew (tests/sim/synchronized_start.sh)"
  tests/sim/synchronized_start.sh
  echo "== SimGrid: papers 000 and 003's contention claims (tests/sim/contention_claims.sh)"
  tests/sim/contention_claims.sh
fi
default_hardening=ON
(($#)) && default_hardening=OFF
if [[ "${LIBCOMM_HARDENING:-$default_hardening}" == ON ]]; then
  # (its ctest run writes its JUnit file there: its skipped tests are listed too)
  HARDENING_JUNIT="${HARDENING_BUILD_DIR:-build-hardening}/ctest-junit.xml"
  [[ "$HARDENING_JUNIT" == /* ]] || HARDENING_JUNIT="$LIBCOMM_ROOT/$HARDENING_JUNIT"
  rm -f "$HARDENING_JUNIT"
  scripts/hardening.sh
fi
