// Check mode (libcomm/check.hpp): arguments that disagree across ranks give every rank the
// same libcomm::Error naming both ranks and both values, even with the per-call check_args
// switched off (the case that would otherwise hang or corrupt memory), and the
// communicator stays usable afterwards.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "libcomm/allgather.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/check.hpp"
#include "libcomm/reduce_scatter.hpp"
#include "mpi_test.hpp"

namespace {

using libcomm::Comm;
using mpitest::MpiTest;
using mpitest::run_catching;

// Every rank must throw exactly `expected`.
void expect_error_everywhere(const mpitest::Outcome& o, const std::string& expected) {
  EXPECT_TRUE(o.threw) << "rank " << mpitest::rank() << " did not throw; expected: " << expected;
  EXPECT_EQ(o.message, expected);
}

// Check mode on for one test, back to the environment's setting afterwards.
class CheckMode : public MpiTest {
 protected:
  void SetUp() override { libcomm::set_check_mode(true); }
  void TearDown() override {
    libcomm::set_check_mode(env_says_on());
    MpiTest::TearDown();
  }

 public:
  static bool env_says_on() {
    const char* v = std::getenv("LIBCOMM_CHECK");
    return v != nullptr && (std::strcmp(v, "1") == 0 || std::strcmp(v, "on") == 0 ||
                            std::strcmp(v, "true") == 0);
  }
};

// Runs first (tests run in declaration order): nothing has called set_check_mode yet, so
// the mode is what LIBCOMM_CHECK says, and off without it.
TEST_F(MpiTest, CheckModeFollowsTheEnvironmentAndIsOffByDefault) {
  EXPECT_EQ(libcomm::check_mode(), CheckMode::env_says_on());
}

// counts[i][j]: ints rank i sends to rank j (varied, some zero; the calls take bytes).
std::int64_t count_of(int i, int j) { return (i * 7 + j * 3) % 5; }

struct V {
  std::vector<std::int64_t> sc, sd, rc, rd;
  std::vector<int> send, recv;
};

V consistent_alltoallv(int p, int me) {
  V v;
  std::int64_t s = 0, r = 0;
  for (int j = 0; j < p; ++j) {
    v.sc.push_back(count_of(me, j));
    v.sd.push_back(s);
    s += v.sc.back() + 1;  // one spare element per block, so a count one too big stays in bounds
    v.rc.push_back(count_of(j, me));
    v.rd.push_back(r);
    r += v.rc.back() + 1;
  }
  v.send.assign(static_cast<std::size_t>(s), me);
  v.recv.assign(static_cast<std::size_t>(r), -1);
  return v;
}

void run_alltoallv(V& v, const Comm& comm, bool check_args) {
  libcomm::AlltoallvOptions o;
  o.check_args = check_args;
  using mpitest::in_bytes;  // libcomm counts bytes
  libcomm::alltoallv(v.send.data(), in_bytes(v.sc, sizeof(int)), in_bytes(v.sd, sizeof(int)), v.recv.data(),
                     in_bytes(v.rc, sizeof(int)), in_bytes(v.rd, sizeof(int)), comm, libcomm::AlltoallvAlgo::Direct, o);
}

void expect_alltoallv_still_works(const Comm& comm) {
  V v = consistent_alltoallv(comm.size(), comm.rank());
  ASSERT_NO_THROW(run_alltoallv(v, comm, false));
  for (int j = 0; j < comm.size(); ++j)
    for (std::int64_t k = 0; k < v.rc[j]; ++k) EXPECT_EQ(v.recv[v.rd[j] + k], j) << "from " << j;
}

TEST_F(CheckMode, AlltoallvSendCountTooBigNamesBothRanks) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  if (p == 1) GTEST_SKIP() << "one rank cannot disagree with itself";
  for (int sender : {0, p - 1}) {
    const int receiver = (sender + 1) % p;
    V v = consistent_alltoallv(p, me);
    if (me == sender) v.sc[receiver] += 1;
    const auto o = run_catching([&] { run_alltoallv(v, comm, false); });
    const std::int64_t c = count_of(sender, receiver);
    expect_error_everywhere(
        o, "alltoallv: rank " + std::to_string(sender) + " sends " + std::to_string(4 * (c + 1)) +
               " bytes to rank " + std::to_string(receiver) + " (its sendcounts[" +
               std::to_string(receiver) + "]) but rank " + std::to_string(receiver) +
               " expects " + std::to_string(4 * c) + " (its recvcounts[" + std::to_string(sender) +
               "])");
    expect_alltoallv_still_works(comm);
  }
}

// The same with check_args on: check mode runs first and names both ranks.
TEST_F(CheckMode, AlltoallvRecvCountTooBigNamesBothRanks) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  if (p == 1) GTEST_SKIP() << "one rank cannot disagree with itself";
  const int receiver = p - 1, sender = 0;
  V v = consistent_alltoallv(p, me);
  const std::int64_t c = count_of(sender, receiver);
  if (me == receiver) v.rc[sender] = c + 1;
  const auto o = run_catching([&] { run_alltoallv(v, comm, true); });
  expect_error_everywhere(
      o, "alltoallv: rank 0 sends " + std::to_string(4 * c) + " bytes to rank " +
             std::to_string(receiver) + " (its sendcounts[" + std::to_string(receiver) +
             "]) but rank " + std::to_string(receiver) + " expects " + std::to_string(4 * (c + 1)) +
             " (its recvcounts[0])");
}

TEST_F(CheckMode, AlltoallBlockBytesDisagreement) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  if (p == 1) GTEST_SKIP() << "one rank cannot disagree with itself";
  const int odd = p / 2 == 0 ? 1 : p / 2;  // never rank 0
  const std::size_t b = me == odd ? 17 : 16;
  std::vector<std::byte> send(17 * p), recv(17 * p);
  libcomm::AlltoallOptions opts;
  opts.check_args = false;
  const auto o = run_catching([&] {
    libcomm::alltoall(send.data(), recv.data(), b, comm, libcomm::AlltoallAlgo::Bruck, opts);
  });
  expect_error_everywhere(o, "alltoall: ranks 0 and " + std::to_string(odd) +
                                 " disagree on block_bytes: rank 0 passed 16, rank " +
                                 std::to_string(odd) + " passed 17");
}

TEST_F(CheckMode, AllgatherCountsVectorDisagreement) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  if (p == 1) GTEST_SKIP() << "one rank cannot disagree with itself";
  std::vector<std::size_t> counts(static_cast<std::size_t>(p), 8);
  if (me == p - 1) counts[0] = 12;  // rank p-1 thinks rank 0 sends 12 bytes
  std::vector<std::byte> send(8), recv(12 * p);
  libcomm::AllgatherOptions opts;
  opts.check_args = false;
  const auto o = run_catching([&] {
    libcomm::allgatherv(send.data(), 8, recv.data(), counts, comm, libcomm::AllgatherAlgo::Ring,
                        opts);
  });
  expect_error_everywhere(o, "allgather: ranks 0 and " + std::to_string(p - 1) +
                                 " disagree on counts[0]: rank 0 passed 8, rank " +
                                 std::to_string(p - 1) + " passed 12");
}

TEST_F(CheckMode, AllgatherSendBytesDifferFromCounts) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  const std::vector<std::size_t> counts(static_cast<std::size_t>(p), 8);
  const int odd = p - 1;  // sends 9 bytes where everybody (itself included) expects 8
  std::vector<std::byte> send(9), recv(9 * p);
  libcomm::AllgatherOptions opts;
  opts.check_args = false;
  const auto o = run_catching([&] {
    libcomm::allgatherv(send.data(), me == odd ? 9 : 8, recv.data(), counts, comm,
                        libcomm::AllgatherAlgo::Ring, opts);
  });
  expect_error_everywhere(o, "allgather: rank " + std::to_string(odd) +
                                 " sends 9 bytes to rank 0 (its send_bytes) but rank 0 expects "
                                 "8 (its counts[" + std::to_string(odd) + "])");
}

TEST_F(CheckMode, ReduceScatterCountsAndOperationDisagreement) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  if (p == 1) GTEST_SKIP() << "one rank cannot disagree with itself";
  libcomm::ReduceScatterOptions opts;
  opts.check_args = false;
  {
    std::vector<std::size_t> counts(static_cast<std::size_t>(p), 24);  // bytes: 3 doubles
    if (me == 1) counts[p - 1] = 32;
    std::vector<double> send(4 * p, 1.0), recv(4);
    const auto o = run_catching([&] {
      libcomm::reduce_scatter(send.data(), recv.data(), counts, libcomm::ElemType::Double,
                              libcomm::ReduceOp::Sum, comm, libcomm::ReduceScatterAlgo::Ring, opts);
    });
    expect_error_everywhere(o, "reduce_scatter: ranks 0 and 1 disagree on counts[" +
                                   std::to_string(p - 1) + "]: rank 0 passed 24, rank 1 passed 32");
  }
  {
    const std::vector<std::size_t> counts(static_cast<std::size_t>(p), 16);
    std::vector<double> send(2 * p, 1.0), recv(2);
    const auto op = me == p - 1 ? libcomm::ReduceOp::Max : libcomm::ReduceOp::Sum;
    const auto o = run_catching([&] {
      libcomm::reduce_scatter(send.data(), recv.data(), counts, libcomm::ElemType::Double, op, comm,
                              libcomm::ReduceScatterAlgo::Ring, opts);
    });
    expect_error_everywhere(o, "reduce_scatter: ranks 0 and " + std::to_string(p - 1) +
                                   " disagree on operation: rank 0 passed sum, rank " +
                                   std::to_string(p - 1) + " passed max");
  }
}

// Matching arguments pass the check and give the right result.
TEST_F(CheckMode, AgreeingArgumentsPass) {
  const Comm& comm = mpitest::world();
  expect_alltoallv_still_works(comm);
  const int p = comm.size(), me = comm.rank();
  std::vector<int> send(static_cast<std::size_t>(p) * 3), recv(send.size());
  for (int j = 0; j < p; ++j)
    for (int k = 0; k < 3; ++k) send[j * 3 + k] = me * 100 + j;
  ASSERT_NO_THROW(libcomm::alltoall(std::span<const int>(send), std::span<int>(recv), comm,
                                    libcomm::AlltoallAlgo::Bruck));
  for (int j = 0; j < p; ++j) EXPECT_EQ(recv[j * 3], j * 100 + me) << "block from " << j;
}

}  // namespace
