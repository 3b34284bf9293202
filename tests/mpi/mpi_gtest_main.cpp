// main() for the GoogleTest programs under tests/mpi: see mpi_test.hpp.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gtest_selected.hpp"
#include "mpi_test.hpp"

namespace mpitest {
namespace {

std::unique_ptr<libcomm::Comm> g_world;
int g_rank = 0, g_size = 1;

// Failures of ranks other than 0, one block per failed assertion. The test name is
// recorded in OnTestStart: asking UnitTest for the current test from inside
// OnTestPartResult would take a mutex GoogleTest already holds there (a self-deadlock).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo& info) override {
    current_ = std::string(info.test_suite_name()) + "." + info.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s: %s:%d: Failure\n%s\n", g_rank, current_.c_str(),
                 r.file_name() ? r.file_name() : "unknown file", r.line_number(), r.message());
    std::fflush(stderr);
  }

 private:
  std::string current_ = "?";
};

}  // namespace

int rank() { return g_rank; }
int size() { return g_size; }
const libcomm::Comm& world() { return *g_world; }

bool all_ranks(bool cond) {
  int v = cond ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return v == 1;
}

void MpiTest::TearDown() {
  const int mine = HasFailure() ? 1 : 0;
  std::vector<int> flags(static_cast<std::size_t>(g_size));
  MPI_Allgather(&mine, 1, MPI_INT, flags.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::string others;
  for (int r = 0; r < g_size; ++r)
    if (flags[r] && r != g_rank) others += (others.empty() ? "" : ", ") + std::to_string(r);
  if (!others.empty() && !mine) ADD_FAILURE() << "this test failed on rank(s) " << others;
}

}  // namespace mpitest

int main(int argc, char** argv) {
  std::string program = argc > 0 ? argv[0] : "test";
  program = program.substr(program.find_last_of('/') + 1);
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &mpitest::g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpitest::g_size);
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (mpitest::g_rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new mpitest::RankFailurePrinter);
  }
  int failed = 1;
  try {
    mpitest::g_world = std::make_unique<libcomm::Comm>(MPI_COMM_WORLD);
    failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    // A filter that matches nothing fails the run on every rank (each says so: the
    // filter is the same everywhere, so every rank decides alike).
    if (libcomm_test::no_test_selected(program + " [rank " + std::to_string(mpitest::g_rank) + "]"))
      failed = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[rank %d] error outside a test: %s\n", mpitest::g_rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (mpitest::g_rank == 0 && failed)
    std::fprintf(stderr, "FAILED on at least one of %d ranks\n", mpitest::g_size);
  mpitest::g_world.reset();
  MPI_Finalize();
  return failed;
}
