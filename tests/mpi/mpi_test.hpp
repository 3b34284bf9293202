// Support for GoogleTest under mpiexec (tests/mpi).
//
// Every rank runs every test, in the same order, so tests may call collectives. Rank 0
// prints GoogleTest's usual output; the other ranks print only their failures, prefixed
// with their rank. At the end of every test (MpiTest::TearDown) the ranks exchange their
// failure flags, and a rank whose own checks passed records a failure naming the ranks
// that failed, so rank 0's report is complete. main() (mpi_gtest_main.cpp) reduces the
// result over all ranks: the process exits non-zero on every rank if any rank failed.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "libcomm/comm.hpp"
#include "libcomm/error.hpp"

namespace mpitest {

int rank();
int size();
// A Comm over MPI_COMM_WORLD with the default ("shared") node map, built once after
// MPI_Init and shared by the tests (so its plan cache is reused across calls).
const libcomm::Comm& world();

// Fixture for every MPI test.
class MpiTest : public ::testing::Test {
 protected:
  void TearDown() override;
};

template <class P>
class MpiTestWithParam : public MpiTest, public ::testing::WithParamInterface<P> {};

// Runs fn and returns the message of the libcomm::Error it threw, or nullopt-like "" with
// threw = false when it returned normally. Any other exception propagates (and fails
// the test).
struct Outcome {
  bool threw = false;
  std::string message;
};
template <class F>
Outcome run_catching(F&& fn) {
  Outcome o;
  try {
    fn();
  } catch (const libcomm::Error& e) {
    o.threw = true;
    o.message = e.what();
  }
  return o;
}

// Element counts or displacements as the bytes the untyped calls take.
inline std::vector<std::int64_t> in_bytes(const std::vector<std::int64_t>& elements, std::size_t element_bytes) {
  std::vector<std::int64_t> b(elements);
  for (auto& x : b) x *= static_cast<std::int64_t>(element_bytes);
  return b;
}

// True on every rank when the condition holds on every rank.
bool all_ranks(bool cond);

}  // namespace mpitest
