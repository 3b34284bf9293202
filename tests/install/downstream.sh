#!/bin/sh
# The installed package as a new user meets it: `cmake --install` into a fresh prefix, then
# the example project examples/app_template (project(... CXX), no C++ standard of its own,
# find_package(libcomm REQUIRED COMPONENTS apps)) configured, built and run under mpiexec
# against that prefix alone: it must validate, and refuse a bad option with its one error
# line and exit status 2.
#   downstream.sh BUILD_DIR PREFIX WORK_DIR SOURCE_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -u
build=$1 prefix=$2 work=$3 src=$4 mpiexec=$5
shift 5
fail() { echo "downstream.sh: FAIL: $*"; exit 1; }
rm -rf "$prefix" "$work"
cmake --install "$build" --prefix "$prefix" > /dev/null || fail "cmake --install failed"
# Only the prefix: the build tree and the source tree's headers must not be needed.
cmake -S "$src/examples/app_template" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  > "$work.configure.log" 2>&1 || { cat "$work.configure.log"; fail "the example does not configure"; }
cmake --build "$work" > "$work.build.log" 2>&1 || { cat "$work.build.log"; fail "the example does not build"; }
grep -q -- "-std=" "$work/CMakeFiles/transpose.dir/flags.make" ||
  fail "no -std= flag: the C++ standard does not come with libcomm::libcomm"
"$mpiexec" "$@" -n 3 "$work/transpose" --n 48 --reps 2 --algo native,pairwise,bruck,ring --json "$work/out.json" ||
  fail "the example exited with $?"
grep -q '"validation": "PASS"' "$work/out.json" || fail "its JSON record does not say PASS"
out=$("$mpiexec" "$@" -n 2 "$work/transpose" --algo nosuch 2>&1)
rc=$?
[ "$rc" -eq 2 ] || { echo "$out"; fail "--algo nosuch: exit status $rc, want 2"; }
echo "$out" | grep -q "^transpose: error: --algo: unknown all-to-all algorithm 'nosuch'" ||
  { echo "$out"; fail "--algo nosuch: no error line"; }
echo "downstream.sh: PASS: examples/app_template built against $prefix, validated on 3 ranks"
