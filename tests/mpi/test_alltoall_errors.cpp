// Errors are loud and early (DESIGN.md, core idea 4): a bad argument on any rank gives
// every rank a libcomm::Error, never a hang, and the communicator stays usable.
#include <cstring>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/alltoall.hpp"
#include "mpi_test.hpp"

namespace {

using libcomm::AlltoallAlgo;
using libcomm::AlltoallOptions;
using libcomm::Comm;
using mpitest::MpiTest;
using mpitest::run_catching;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool is_power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

// After an error every rank must still be able to run a correct all-to-all.
void expect_comm_still_works(const Comm& comm, AlltoallAlgo algo = AlltoallAlgo::Factor) {
  const std::size_t b = 12;
  const int p = comm.size(), me = comm.rank();
  std::vector<std::byte> send(b * p), recv(b * p);
  for (int d = 0; d < p; ++d) apps::fill_pattern(send.data() + d * b, me, d, b);
  ASSERT_NO_THROW(libcomm::alltoall(send.data(), recv.data(), b, comm, algo));
  for (int s = 0; s < p; ++s)
    EXPECT_EQ(apps::check_pattern(recv.data() + s * b, s, me, b), b) << "block from " << s;
}

class AlgoErrors : public mpitest::MpiTestWithParam<AlltoallAlgo> {};

TEST_P(AlgoErrors, BlockBytesDifferingAcrossRanks) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  if (p == 1) GTEST_SKIP() << "one rank cannot disagree with itself";
  for (int odd_one : {0, p - 1}) {
    const std::size_t b = me == odd_one ? 17 : 16;
    std::vector<std::byte> send(17 * p), recv(17 * p);
    const auto o = run_catching([&] {
      libcomm::alltoall(send.data(), recv.data(), b, comm, GetParam());
    });
    EXPECT_TRUE(o.threw) << "rank " << me << " did not throw (rank " << odd_one
                         << " passed 17 B, the others 16 B)";
    EXPECT_TRUE(contains(o.message, "differ")) << o.message;
    EXPECT_TRUE(contains(o.message, "rank " + std::to_string(me))) << o.message;
    expect_comm_still_works(comm, GetParam() == AlltoallAlgo::Auto ? AlltoallAlgo::Auto
                                                                   : GetParam());
  }
}

TEST_P(AlgoErrors, NullBufferOnOneRank) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  const std::size_t b = 8;
  for (bool null_send : {true, false}) {
    std::vector<std::byte> send(b * p), recv(b * p);
    const bool culprit = me == p - 1;
    const void* s = culprit && null_send ? nullptr : send.data();
    void* r = culprit && !null_send ? nullptr : recv.data();
    const auto o = run_catching([&] { libcomm::alltoall(s, r, b, comm, GetParam()); });
    EXPECT_TRUE(o.threw) << "rank " << me << " did not throw (rank " << p - 1 << " passed a null "
                         << (null_send ? "send" : "recv") << " buffer)";
    if (culprit) {
      EXPECT_TRUE(contains(o.message, null_send ? "send buffer is null" : "recv buffer is null"))
          << o.message;
    } else {
      EXPECT_TRUE(contains(o.message, "rank " + std::to_string(p - 1))) << o.message;
    }
  }
  expect_comm_still_works(comm, GetParam());
}

TEST_P(AlgoErrors, OverlappingBuffers) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  const std::size_t b = 8, n = b * p;
  std::vector<std::byte> buf(2 * n), other(n);
  // Rank 0 passes the same buffer twice (in place), the last rank two that overlap by
  // one byte, the others separate buffers.
  const std::byte* s = buf.data();
  std::byte* r = other.data();
  if (me == 0) r = buf.data();
  else if (me == p - 1) r = buf.data() + n - 1;
  const auto o = run_catching([&] { libcomm::alltoall(s, r, b, comm, GetParam()); });
  EXPECT_TRUE(o.threw) << "rank " << me << " did not throw";
  if (me == 0 || me == p - 1) {
    EXPECT_TRUE(contains(o.message, "overlap")) << o.message;
  }
  // Buffers that touch but do not overlap are fine.
  std::vector<std::byte> both(2 * n);
  for (int d = 0; d < p; ++d) apps::fill_pattern(both.data() + d * b, me, d, b);
  EXPECT_NO_THROW(libcomm::alltoall(both.data(), both.data() + n, b, comm, GetParam()));
  for (int src = 0; src < p; ++src)
    EXPECT_EQ(apps::check_pattern(both.data() + n + src * b, src, me, b), b);
}

INSTANTIATE_TEST_SUITE_P(Errors, AlgoErrors,
                         ::testing::Values(AlltoallAlgo::Auto, AlltoallAlgo::Native,
                                           AlltoallAlgo::Factor, AlltoallAlgo::Bruck,
                                           AlltoallAlgo::Linear, AlltoallAlgo::Leader,
                                           AlltoallAlgo::ClusteredFactor),
                         [](const auto& info) {
                           return std::string(libcomm::alltoall_algo_name(info.param));
                         });

TEST_F(MpiTest, NullBuffersWithZeroBlocksAreFine) {
  const Comm& comm = mpitest::world();
  for (const auto& info : libcomm::alltoall_algorithms())
    EXPECT_NO_THROW(libcomm::alltoall(nullptr, nullptr, 0, comm, info.algo)) << info.name;
}

TEST_F(MpiTest, PairwiseWithoutFallbackNeedsAPowerOfTwo) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  AlltoallOptions strict;
  strict.allow_fallback = false;
  const std::size_t b = 40;
  std::vector<std::byte> send(b * p), recv(b * p);
  for (int d = 0; d < p; ++d) apps::fill_pattern(send.data() + d * b, me, d, b);
  const auto o = run_catching([&] {
    libcomm::alltoall(send.data(), recv.data(), b, comm, AlltoallAlgo::Pairwise, strict);
  });
  if (is_power_of_two(p)) {
    EXPECT_FALSE(o.threw) << o.message;
    for (int s = 0; s < p; ++s)
      EXPECT_EQ(apps::check_pattern(recv.data() + s * b, s, me, b), b) << "block from " << s;
  } else {
    EXPECT_TRUE(o.threw) << "pairwise without fallback ran on P = " << p;
    EXPECT_TRUE(contains(o.message, "power")) << o.message;
  }
  // With the fallback it always runs.
  AlltoallAlgo ran = AlltoallAlgo::Auto;
  EXPECT_NO_THROW(ran = libcomm::alltoall(send.data(), recv.data(), b, comm, AlltoallAlgo::Pairwise));
  EXPECT_EQ(ran, is_power_of_two(p) ? AlltoallAlgo::Pairwise : AlltoallAlgo::RingSendrecv);
  expect_comm_still_works(comm);
}

TEST_F(MpiTest, FactorGroupedWithoutFallbackNeedsAnEvenP) {
  const Comm& comm = mpitest::world();
  const int p = comm.size();
  AlltoallOptions strict;
  strict.allow_fallback = false;
  std::vector<std::byte> send(8 * p), recv(8 * p);
  const auto o = run_catching([&] {
    libcomm::alltoall(send.data(), recv.data(), 8, comm, AlltoallAlgo::FactorGrouped, strict);
  });
  EXPECT_EQ(o.threw, p % 2 != 0) << o.message;
  if (o.threw) {
    EXPECT_TRUE(contains(o.message, "even")) << o.message;
  }
  expect_comm_still_works(comm);
}

TEST_F(MpiTest, RanksAskingForDifferentAlgorithms) {
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  if (p == 1) GTEST_SKIP() << "needs two ranks";
  std::vector<std::byte> send(8 * p), recv(8 * p);
  const AlltoallAlgo mine = me == 0 ? AlltoallAlgo::Ring : AlltoallAlgo::Factor;
  const auto o = run_catching([&] { libcomm::alltoall(send.data(), recv.data(), 8, comm, mine); });
  EXPECT_TRUE(o.threw) << "rank " << me << " did not throw";
  EXPECT_TRUE(contains(o.message, "different algorithms")) << o.message;
  expect_comm_still_works(comm);
}

TEST_F(MpiTest, HierarchicalInterNodeAlgorithmIsRejected) {
  const Comm& comm = mpitest::world();
  const int p = comm.size();
  AlltoallOptions opts;
  opts.inter_node = AlltoallAlgo::Leader;
  std::vector<std::byte> send(8 * p), recv(8 * p);
  for (AlltoallAlgo a : {AlltoallAlgo::Leader, AlltoallAlgo::SendAggregate, AlltoallAlgo::RecvDistribute}) {
    const auto o = run_catching([&] { libcomm::alltoall(send.data(), recv.data(), 8, comm, a, opts); });
    EXPECT_TRUE(o.threw) << libcomm::alltoall_algo_name(a);
    EXPECT_TRUE(contains(o.message, "leader")) << o.message;
  }
  expect_comm_still_works(comm);
}

TEST_F(MpiTest, SpansTooSmallOrNotAMultipleOfP) {
  const Comm& comm = mpitest::world();
  const int p = comm.size();
  std::vector<std::byte> send(8 * p), recv(8 * p - 1);
  const auto o = run_catching([&] {
    libcomm::alltoall(std::span<const std::byte>(send), std::span<std::byte>(recv), 8, comm);
  });
  EXPECT_TRUE(o.threw);
  EXPECT_TRUE(contains(o.message, "need " + std::to_string(8 * p))) << o.message;
  std::vector<double> a(3 * p + (p > 1 ? 1 : 0)), b(a.size());
  std::vector<double> c(3 * p), d(3 * p + 3);
  if (p > 1) {
    const auto o2 = run_catching([&] { libcomm::alltoall<double>(a, b, comm); });
    EXPECT_TRUE(o2.threw);
    EXPECT_TRUE(contains(o2.message, "multiple of P")) << o2.message;
  }
  const auto o3 = run_catching([&] { libcomm::alltoall<double>(c, d, comm); });
  EXPECT_TRUE(o3.threw) << "recv of a different length than send was accepted";
  expect_comm_still_works(comm);
}

TEST_F(MpiTest, CommWithABadNodeSpecThrowsOnEveryRank) {
  const int p = mpitest::size();
  const auto o = run_catching([&] { Comm c(MPI_COMM_WORLD, "sizes=" + std::to_string(p + 1)); });
  EXPECT_TRUE(o.threw);
  EXPECT_TRUE(contains(o.message, "covers")) << o.message;
  const auto o2 = run_catching([&] { Comm c(MPI_COMM_WORLD, libcomm::NodeMap::one_rank_per_node(p + 2)); });
  EXPECT_TRUE(o2.threw);
  const auto o3 = run_catching([&] { Comm c(MPI_COMM_NULL); });
  EXPECT_TRUE(o3.threw);
}

}  // namespace
