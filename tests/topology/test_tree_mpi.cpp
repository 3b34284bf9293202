// tree_scheduled under MPI: byte-exact against MPI_Alltoall on the Fig. 1 tree, on random
// trees with random rank placements, with pairwise synchronisation, a barrier per phase
// and no separation; wrong topologies give every rank an Error.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"
#include "libcomm/tree_schedule.hpp"
#include "mpi_test.hpp"

namespace {

using libcomm::AlltoallAlgo;
using libcomm::Comm;
using libcomm::Topology;
using mpitest::MpiTest;

const std::string kDir = LIBCOMM_TOPOLOGY_DIR;

std::vector<std::byte> pattern_send(std::size_t b, const Comm& comm) {
  std::vector<std::byte> send(b * comm.size());
  for (int d = 0; d < comm.size(); ++d) apps::fill_pattern(send.data() + d * b, comm.rank(), d, b);
  return send;
}

// Runs fn(send, recv) and checks recv byte for byte against MPI_Alltoall.
template <class F>
void expect_like_native(std::size_t b, const Comm& comm, const std::string& what, F&& fn) {
  const auto send = pattern_send(b, comm);
  const std::size_t total = b * comm.size();
  std::vector<std::byte> recv(total, std::byte{0xA5}), ref(total, std::byte{0x5A});
  fn(send.data(), recv.data());
  libcomm::alltoall(send.data(), ref.data(), b, comm, AlltoallAlgo::Native);
  EXPECT_TRUE(recv == ref) << what << ": rank " << comm.rank();
  for (int s = 0; s < comm.size(); ++s)
    EXPECT_EQ(apps::check_pattern(recv.data() + s * b, s, comm.rank(), b), b)
        << what << ": block from rank " << s << " on rank " << comm.rank();
}

void run_both_variants(const Comm& comm, const std::string& what) {
  for (AlltoallAlgo a : {AlltoallAlgo::TreeScheduled, AlltoallAlgo::TreeScheduledBarrier})
    for (std::size_t b : {0, 1, 8, 100, 4096, 70000})
      expect_like_native(b, comm, what + " " + std::string(libcomm::alltoall_algo_name(a)) + " " +
                                      std::to_string(b) + " B",
                         [&](const std::byte* s, std::byte* r) {
                           EXPECT_EQ(libcomm::alltoall(s, r, b, comm, a), a);
                         });
}

TEST_F(MpiTest, DefaultSingleSwitch) {
  const Comm comm(MPI_COMM_WORLD);
  run_both_variants(comm, "single switch");
}

TEST_F(MpiTest, Fig1TreeAtSixRanks) {
  if (mpitest::size() != 6) GTEST_SKIP() << "Fig. 1 has 6 machines";
  const Comm comm(MPI_COMM_WORLD);
  libcomm::attach_topology(comm, Topology::load(kDir + "/fig1.topo"));
  run_both_variants(comm, "fig1");
}

TEST_F(MpiTest, RandomTreesAndPlacements) {
  const int p = mpitest::size();
  if (p < 3) GTEST_SKIP() << "a tree needs 3 machines";
  std::mt19937_64 rng(99);  // same seed on every rank: the same trees everywhere
  for (int n = 0; n < 6; ++n) {
    Topology t = Topology::random(p, 1 + static_cast<int>(rng() % 4), rng(), n % 2 ? 0.9 : 0.1);
    std::vector<int> m(p);
    std::iota(m.begin(), m.end(), 0);
    if (n >= 3) std::shuffle(m.begin(), m.end(), rng);
    t.set_machine_of_rank(m);
    const Comm comm(MPI_COMM_WORLD);
    libcomm::attach_topology(comm, t);
    run_both_variants(comm, "tree " + std::to_string(n));
  }
}

TEST_F(MpiTest, ExecutorWithoutSeparation) {
  const int p = mpitest::size();
  if (p < 3) GTEST_SKIP() << "a tree needs 3 machines";
  const Comm comm(MPI_COMM_WORLD);
  const Topology t = Topology::random(p, 3, 5, 0.5);
  const auto s = libcomm::tree_rank_schedule(libcomm::schedule_tree_aapc(t), t);
  const auto sync = libcomm::plan_synchronisation(s, t);
  for (auto mode : {libcomm::TreeSync::None, libcomm::TreeSync::Pairwise, libcomm::TreeSync::Barrier}) {
    auto plan = libcomm::plan_program(comm, libcomm::tree_program(s, sync, comm.rank(), 333, mode));
    expect_like_native(333, comm, "tree_program", [&](const std::byte* snd, std::byte* rcv) {
      plan.start(snd, rcv);
      plan.wait();
    });
  }
}

TEST_F(MpiTest, TopologyOfTheWrongSizeThrowsOnEveryRank) {
  const int p = mpitest::size();
  const Comm comm(MPI_COMM_WORLD);
  const int machines = std::max(3, p + 1);
  const auto o = mpitest::run_catching([&] { libcomm::attach_topology(comm, Topology::single_switch(machines)); });
  EXPECT_TRUE(o.threw);
  EXPECT_NE(o.message.find("rank " + std::to_string(comm.rank())), std::string::npos) << o.message;
  EXPECT_NE(o.message.find(std::to_string(machines) + " machines"), std::string::npos) << o.message;
  // Nothing was attached: the default tree is used and the result is right.
  expect_like_native(16, comm, "after a refused topology", [&](const std::byte* s, std::byte* r) {
    libcomm::alltoall(s, r, 16, comm, AlltoallAlgo::TreeScheduled);
  });
}

TEST_F(MpiTest, ReplacingTheTopologyRebuildsThePlan) {
  const int p = mpitest::size();
  if (p < 4) GTEST_SKIP() << "needs two different trees";
  const Comm comm(MPI_COMM_WORLD);
  libcomm::attach_topology(comm, Topology::single_switch(p));
  run_both_variants(comm, "first tree");
  Topology t = Topology::random(p, 2, 11, 0.5);
  std::vector<int> rev(p);
  for (int r = 0; r < p; ++r) rev[r] = p - 1 - r;
  t.set_machine_of_rank(rev);
  libcomm::attach_topology(comm, t);
  run_both_variants(comm, "second tree, reversed placement");
}

}  // namespace
