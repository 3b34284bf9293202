// A GoogleTest run that runs no test passes: a --gtest_filter that matches nothing (a test
// renamed, a fixture split) turns its CTest entry into one that tests nothing and stays
// green. Both mains of the project's test programs (tests/gtest_main.cpp, without MPI, and
// tests/mpi/mpi_gtest_main.cpp, every rank) call no_test_selected after RUN_ALL_TESTS and
// fail such a run.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace libcomm_test {

// True, after printing why on stderr, when RUN_ALL_TESTS ran no test: the filter (or the
// shard) selected none. Listing the tests (--gtest_list_tests, as gtest_discover_tests
// does) is not a run. `who` prefixes the message (the program, and the rank under MPI).
inline bool no_test_selected(const std::string& who) {
  if (GTEST_FLAG_GET(list_tests)) return false;
  const auto* unit = ::testing::UnitTest::GetInstance();
  if (unit->test_to_run_count() > 0) return false;
  std::fprintf(stderr,
               "%s: error: no test matched --gtest_filter=%s (of %d tests in the program): "
               "the run tested nothing, which fails\n",
               who.c_str(), GTEST_FLAG_GET(filter).c_str(), unit->total_test_count());
  std::fflush(stderr);
  return true;
}

}  // namespace libcomm_test
