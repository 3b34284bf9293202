# Shared by run.sh, test.sh and simulate.sh: install what is missing, configure, build.
# Source it; it does nothing by itself.

LIBCOMM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages the Open MPI build, the apps and the tests need: every package a test
# uses is here (no test skips or changes its verdict for want of one). python3-mpi4py: the
# drop-in's Python test runs /usr/bin/python3 through it; iproute2: the testbed test's
# namespaces (ip, tc). (matplotlib is not: the result pages' text does not depend on it,
# and only the reproduce scripts draw plots; they install python3-matplotlib themselves.)
LIBCOMM_PACKAGES=(build-essential cmake pkg-config python3 gfortran openmpi-bin libopenmpi-dev
  libfftw3-dev libfftw3-mpi-dev libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev python3-mpi4py iproute2)

# The hardening step (scripts/hardening.sh): clang with libFuzzer's runtime and the
# symbolizer that turns sanitizer reports into file:line.
LIBCOMM_HARDENING_PACKAGES=(clang libclang-rt-14-dev llvm-14)

# ensure_packages PKG...: apt-get installs the ones not installed yet (needs root).
ensure_packages() {
  local missing=() installed p
  # One dpkg-query for all of them (one call per package costs seconds on a busy machine).
  # It exits 1 when any of them is unknown, as on a fresh machine: under the callers'
  # `set -euo pipefail` that must not end the script.
  installed=$( { dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null || true; } |
    awk '/install ok installed/ {print $1}')
  for p in "$@"; do
    grep -qx -- "$p" <<<"$installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "== installing: ${missing[*]}"
    local sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
}

# ctest_skipped JUNIT...: the tests that ctest reported as skipped (SKIP_RETURN_CODE,
# SKIP_REGULAR_EXPRESSION) or disabled in these --output-junit files, one line each,
# "  NAME: REASON" (the test's own SKIPPED line where it printed one). Missing files are
# ignored; prints nothing when no test was skipped.
ctest_skipped() {
  python3 - "$@" <<'PY'
import os
import re
import sys
import xml.etree.ElementTree as ET

for path in sys.argv[1:]:
    if not os.path.exists(path):
        continue
    try:
        cases = ET.parse(path).getroot().iter("testcase")
    except ET.ParseError as e:
        print(f"  ({path}: unreadable: {e})")
        continue
    for case in cases:
        skipped = case.find("skipped")
        if skipped is None and case.get("status") != "disabled":
            continue
        out = (case.findtext("system-out") or "").splitlines()
        why = skipped.get("message", "") if skipped is not None else "disabled"
        for i, line in enumerate(out):
            if re.search(r": Skipped$", line) and i + 1 < len(out) and out[i + 1].strip():
                why = out[i + 1].strip()  # GoogleTest: "file:line: Skipped", then the reason
                break
            if "SKIPPED" in line and not line.startswith("[  SKIPPED ]"):
                why = line.strip()
                break
        print(f"  {case.get('name')}: {why}")
PY
}

# Open MPI may run as root here (CI does) and with more ranks than cores (2-core machine).
mpi_environment() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
}

# Sanitizer settings for programs built with -DLIBCOMM_SANITIZE (README, "Hardening").
# Open MPI keeps allocations alive until exit (and its helper processes never free some),
# so LeakSanitizer reports from inside the MPI library are suppressed by the file
# tests/sanitizers/lsan.supp; leaks with a libcomm or test frame on the stack still fail.
sanitizer_environment() {
  # detect_stack_use_after_return: a request that kept a pointer into its start call's frame
  # (a count array, a datatype) reads a dead frame at completion; ASan sees it only so.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1}"
  export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$LIBCOMM_ROOT/tests/sanitizers/lsan.supp:print_suppressions=0}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
}

# configure_and_build BUILD_DIR [--targets "T1 T2 ..."] [cmake args...]: everything, or only
# the named targets (and what they need): a script that runs four programs builds four.
configure_and_build() {
  local dir="$1" targets=()
  shift
  if [[ "${1:-}" == --targets ]]; then
    read -r -a targets <<<"$2"
    shift 2
  fi
  mkdir -p "$dir"
  cmake -S "$LIBCOMM_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; return 1; }
  if ((${#targets[@]})); then
    cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}"
  else
    cmake --build "$dir" -j "$(nproc)"
  fi
}

# Prints a Python interpreter that can import matplotlib: the PATH one if it can, else
# Debian's /usr/bin/python3 (python3-matplotlib installs for the system interpreter only);
# nothing when neither can (no script installs matplotlib for its plots).
matplotlib_python() {
  local py
  for py in python3 /usr/bin/python3; do
    if "$py" -c 'import matplotlib' 2>/dev/null; then
      echo "$py"
      return
    fi
  done
}

# The interpreter for a report that draws its plots where it can: matplotlib_python's, else
# the PATH one (the report scripts then skip their plots and say so).
plot_python() {
  local py
  py="$(matplotlib_python)"
  echo "${py:-python3}"
}

# build_simgrid_target BUILD_DIR TARGET: configures the SimGrid variant
# (-DLIBCOMM_SIMGRID=ON) in BUILD_DIR and builds only TARGET (logs in BUILD_DIR).
build_simgrid_target() {
  local dir="$1" target="$2"
  ensure_packages "${LIBCOMM_PACKAGES[@]}" libsimgrid-dev  # smpicxx, smpirun
  echo "== building $target with SimGrid (SMPI) in $dir"
  mkdir -p "$dir"
  cmake -S "$LIBCOMM_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DLIBCOMM_SIMGRID=ON \
    >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
  cmake --build "$dir" -j2 --target "$target" >"$dir/build.log" 2>&1 ||
    { tail -30 "$dir/build.log"; return 1; }
}
