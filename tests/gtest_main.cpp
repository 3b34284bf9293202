// main() for the GoogleTest programs without MPI (tests/unit, and the unit_* programs of
// the other suites), in place of GTest::gtest_main: the same, except that a run in which
// no test matched --gtest_filter fails (tests/gtest_selected.hpp).
#include <gtest/gtest.h>

#include <string>

#include "gtest_selected.hpp"

int main(int argc, char** argv) {
  std::string program = argc > 0 ? argv[0] : "test";
  program = program.substr(program.find_last_of('/') + 1);
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  if (libcomm_test::no_test_selected(program)) return 1;
  return result;
}
