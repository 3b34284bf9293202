// libcomm::alltoallv under MPI: every algorithm in every mode, on the traffic patterns of
// kernels/traffic.hpp and element sizes 1, 22 and 48 B, compared byte for byte with the
// MPI library's MPI_Alltoallv and with the expected element contents.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/traffic.hpp"
#include "libcomm/alltoallv.hpp"
#include "mpi_test.hpp"

namespace {

using libcomm::AlltoallvAlgo;
using libcomm::AlltoallvMode;
using mpitest::MpiTest;

bool is_square(int p) {
  int q = 0;
  while ((q + 1) * (q + 1) <= p) ++q;
  return q * q == p;
}

// Send and receive layouts with gaps and blocks in reverse rank order, so displacements
// matter.
struct Layout {
  std::vector<std::int64_t> sc, sd, rc, rd;
  std::vector<std::byte> send;
  std::size_t recv_elems = 0;
};

Layout make_layout(const std::vector<std::int64_t>& m, int p, int me, std::size_t esize) {
  Layout l;
  l.sc.resize(p), l.sd.resize(p), l.rc.resize(p), l.rd.resize(p);
  std::int64_t at = 0;
  for (int j = p - 1; j >= 0; --j) {
    l.sc[j] = m[static_cast<std::size_t>(me) * p + j];
    l.sd[j] = at;
    at += l.sc[j] + (j % 2);  // a one-element gap after odd destinations
  }
  l.send.assign(static_cast<std::size_t>(at) * esize, std::byte{0x77});
  for (int j = 0; j < p; ++j)
    kernels::fill_elements(l.send.data() + static_cast<std::size_t>(l.sd[j]) * esize, me, j, 0,
                           l.sc[j], esize);
  at = 0;
  for (int i = 0; i < p; ++i) {
    l.rc[i] = m[static_cast<std::size_t>(i) * p + me];
    l.rd[i] = at;
    at += l.rc[i] + 1;
  }
  l.recv_elems = static_cast<std::size_t>(at);
  return l;
}

std::vector<kernels::TrafficSpec> specs() {
  using kernels::TrafficPattern;
  return {{TrafficPattern::Uniform, 9},
          {TrafficPattern::Skewed, 60, 0, 3},
          {TrafficPattern::ManyZero, 30, 0, 4, 0.7},
          {TrafficPattern::AllZero, 0},
          {TrafficPattern::Pattern1, 200, 3, 5},
          {TrafficPattern::Pattern2, 100, 2, 6}};
}

void run_case(AlltoallvAlgo algo, AlltoallvMode mode, const kernels::TrafficSpec& spec,
              std::size_t esize) {
  const auto& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  const std::string what = std::string(libcomm::alltoallv_algo_name(algo)) + "/" +
                           std::string(libcomm::alltoallv_mode_name(mode)) + " " +
                           std::string(kernels::traffic_pattern_name(spec.pattern)) + " " +
                           std::to_string(esize) + " B, P = " + std::to_string(p);
  const auto m = kernels::traffic_matrix(spec, p);
  const Layout l = make_layout(m, p, me, esize);
  std::vector<std::byte> got(l.recv_elems * esize, std::byte{0xA5}),
      ref(l.recv_elems * esize, std::byte{0xA5});
  libcomm::AlltoallvStats stats;
  libcomm::AlltoallvOptions opts;
  opts.mode = mode;
  opts.stats = &stats;
  using mpitest::in_bytes;
  const auto sc = in_bytes(l.sc, esize), sd = in_bytes(l.sd, esize), rc = in_bytes(l.rc, esize),
             rd = in_bytes(l.rd, esize);
  const auto ran = libcomm::alltoallv(l.send.data(), sc, sd, got.data(), rc, rd, comm, algo, opts);
  if (algo != AlltoallvAlgo::Auto) {
    EXPECT_EQ(ran, libcomm::choose_alltoallv(algo, p)) << what;
  }
  EXPECT_FALSE(ran.reason().empty()) << what;
  libcomm::alltoallv(l.send.data(), sc, sd, ref.data(), rc, rd, comm, AlltoallvAlgo::Native);
  EXPECT_TRUE(got == ref) << what << ": differs from MPI_Alltoallv on rank " << me;
  for (int i = 0; i < p; ++i) {
    const auto at = kernels::check_elements(got.data() + static_cast<std::size_t>(l.rd[i]) * esize,
                                            i, me, 0, l.rc[i], esize);
    EXPECT_EQ(at, l.rc[i]) << what << ": rank " << me << ", from rank " << i << " element " << at;
  }
  // Instrumentation: every byte received exactly once at the end, one stage per paper stage.
  if (ran != AlltoallvAlgo::Native) {
    const std::size_t stages = ran == AlltoallvAlgo::Direct      ? 1
                               : ran == AlltoallvAlgo::FourStage ? 4
                                                                 : 2;
    ASSERT_EQ(stats.stages.size(), stages) << what;
    std::int64_t in = 0;
    for (int i = 0; i < p; ++i) in += l.rc[i];
    EXPECT_EQ(stats.stages.back().received_bytes, static_cast<std::uint64_t>(in) * esize) << what;
    for (const auto& st : stats.stages) {
      EXPECT_LE(st.messages_sent, st.steps) << what;
      EXPECT_GE(st.messages_received, 1) << what;
    }
  }
}

class EveryAlgorithmAndMode
    : public mpitest::MpiTestWithParam<std::tuple<AlltoallvAlgo, AlltoallvMode>> {};

TEST_P(EveryAlgorithmAndMode, MatchesMpiAlltoallvByteForByte) {
  const auto [algo, mode] = GetParam();
  if (algo == AlltoallvAlgo::Mesh && !is_square(mpitest::size())) return;  // see MeshFallsBack...
  for (const auto& spec : specs())
    for (std::size_t esize : {1, 22, 48}) run_case(algo, mode, spec, esize);
}

INSTANTIATE_TEST_SUITE_P(
    Alltoallv, EveryAlgorithmAndMode,
    ::testing::Combine(::testing::Values(AlltoallvAlgo::Native, AlltoallvAlgo::Auto,
                                         AlltoallvAlgo::Direct, AlltoallvAlgo::TwoStage,
                                         AlltoallvAlgo::Mesh, AlltoallvAlgo::FourStage),
                       ::testing::Values(AlltoallvMode::Blocking, AlltoallvMode::NonblockingSingle,
                                         AlltoallvMode::NonblockingDual)),
    [](const auto& info) {
      return std::string(libcomm::alltoallv_algo_name(std::get<0>(info.param))) + "_" +
             std::string(libcomm::alltoallv_mode_name(std::get<1>(info.param)));
    });

TEST_F(MpiTest, RepeatedCallsReuseBuffersAndStayCorrect) {
  for (int k = 0; k < 3; ++k)
    for (auto mode : {AlltoallvMode::NonblockingDual, AlltoallvMode::Blocking})
      run_case(AlltoallvAlgo::FourStage, mode,
               {kernels::TrafficPattern::Skewed, 80, 0, static_cast<std::uint64_t>(k)}, 22);
}

void expect_comm_still_works() {
  run_case(AlltoallvAlgo::FourStage, AlltoallvMode::Blocking, {kernels::TrafficPattern::Uniform, 3},
           8);
}

TEST_F(MpiTest, MeshFallsBackToFourStageOrRefusesOnNonSquareP) {
  const auto& comm = mpitest::world();
  const int p = comm.size();
  // Every rank sends one element to every rank.
  std::vector<std::int64_t> ones(p, 1), displ(p);
  for (int k = 0; k < p; ++k) displ[k] = k;
  std::vector<double> send(p), recv(p, -1.0);
  for (int k = 0; k < p; ++k) send[k] = comm.rank() * 100 + k;
  libcomm::AlltoallvAlgo ran = AlltoallvAlgo::Native;
  const auto fallback = mpitest::run_catching([&] {
    ran = libcomm::alltoallv<double>(send, ones, displ, recv, ones, displ, comm, AlltoallvAlgo::Mesh);
  });
  EXPECT_FALSE(fallback.threw) << fallback.message;
  EXPECT_EQ(ran, is_square(p) ? AlltoallvAlgo::Mesh : AlltoallvAlgo::FourStage);
  for (int k = 0; k < p; ++k) EXPECT_EQ(recv[k], k * 100 + comm.rank()) << "from rank " << k;
  libcomm::AlltoallvOptions strict;
  strict.allow_fallback = false;
  std::vector<std::int64_t> zero(p, 0);
  const auto o = mpitest::run_catching([&] {
    libcomm::alltoallv(nullptr, zero, zero, nullptr, zero, zero, comm, AlltoallvAlgo::Mesh, strict);
  });
  if (is_square(p)) {
    EXPECT_FALSE(o.threw) << o.message;
  } else {
    EXPECT_TRUE(o.threw);
    EXPECT_NE(o.message.find("perfect-square"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("P = " + std::to_string(p)), std::string::npos) << o.message;
  }
  expect_comm_still_works();
}

TEST_F(MpiTest, MismatchedCountsGiveEveryRankAnError) {
  const auto& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  std::vector<std::int64_t> sc(p, 8), sd(p), rc(p, 8), rd(p);
  for (int k = 0; k < p; ++k) sd[k] = rd[k] = 8 * k;
  if (me == p - 1) rc[0] = 12;  // expects 4 bytes more than rank 0 sends
  std::vector<std::byte> send(2 * p * 4), recv(3 * p * 4);
  const auto o = mpitest::run_catching([&] {
    libcomm::alltoallv(send.data(), sc, sd, recv.data(), rc, rd, comm, AlltoallvAlgo::FourStage);
  });
  EXPECT_TRUE(o.threw) << "rank " << me;
  EXPECT_NE(o.message.find("rank " + std::to_string(me)), std::string::npos) << o.message;
  if (me == p - 1) {
    EXPECT_NE(o.message.find("recvcounts[0]"), std::string::npos) << o.message;
  }
  expect_comm_still_works();
}

TEST_F(MpiTest, CountsMustBeWholeElementsAndElementsDealtWhole) {
  // element_bytes = 4: 8-byte counts pass (and match MPI_Alltoallv with four_stage), a
  // 6-byte count on one rank is an error naming element_bytes on that rank, every rank throws.
  const auto& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  std::vector<std::int64_t> c(p, 8), d(p);
  for (int k = 0; k < p; ++k) d[k] = 8 * k;
  std::vector<std::byte> send(p * 8), recv(p * 8), ref(p * 8);
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = std::byte(static_cast<unsigned char>(me * 31 + k));
  libcomm::AlltoallvOptions opts;
  opts.element_bytes = 4;
  libcomm::alltoallv(send.data(), c, d, recv.data(), c, d, comm, AlltoallvAlgo::FourStage, opts);
  libcomm::alltoallv(send.data(), c, d, ref.data(), c, d, comm, AlltoallvAlgo::Native);
  EXPECT_TRUE(recv == ref) << "rank " << me;
  auto bad = c;
  if (me == 0) bad[p - 1] = 6;
  auto rc = c;
  if (me == p - 1) rc[0] = 6;
  const auto o = mpitest::run_catching([&] {
    libcomm::alltoallv(send.data(), bad, d, recv.data(), rc, d, comm, AlltoallvAlgo::TwoStage, opts);
  });
  EXPECT_TRUE(o.threw) << "rank " << me;
  if (me == 0) {
    EXPECT_NE(o.message.find("not a multiple of element_bytes 4"), std::string::npos) << o.message;
  }
  expect_comm_still_works();
}

TEST_F(MpiTest, NegativeCountAndDifferingModesAreErrors) {
  const auto& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  std::vector<std::int64_t> c(p, 8), d(p);
  for (int k = 0; k < p; ++k) d[k] = 8 * k;
  std::vector<std::byte> send(p * 8), recv(p * 8);
  auto bad = c;
  if (me == 0) bad[p - 1] = -1;
  auto o = mpitest::run_catching([&] {
    libcomm::alltoallv(send.data(), bad, d, recv.data(), c, d, comm, AlltoallvAlgo::Direct);
  });
  EXPECT_TRUE(o.threw);
  if (me == 0) {
    EXPECT_NE(o.message.find("negative"), std::string::npos) << o.message;
  }
  if (p > 1) {
    libcomm::AlltoallvOptions opts;
    opts.mode = me == 0 ? AlltoallvMode::NonblockingDual : AlltoallvMode::Blocking;
    o = mpitest::run_catching([&] {
      libcomm::alltoallv(send.data(), c, d, recv.data(), c, d, comm, AlltoallvAlgo::TwoStage, opts);
    });
    EXPECT_TRUE(o.threw);
    EXPECT_NE(o.message.find("modes"), std::string::npos) << o.message;
  }
  expect_comm_still_works();
}

}  // namespace
