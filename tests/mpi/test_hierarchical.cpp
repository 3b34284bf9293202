// Hierarchical all-to-all (clustered_factor, clustered_factor_fill, leader, send_aggregate,
// recv_distribute) on virtual node maps, byte-exact against the pattern and against
// native. The node map comes from LIBCOMM_TEST_NODES (set per CTest registration).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/hierarchical.hpp"
#include "mpi_test.hpp"

namespace {

using libcomm::AlltoallAlgo;
using mpitest::MpiTest;

const libcomm::Comm& node_comm() {
  static const libcomm::Comm comm(MPI_COMM_WORLD, [] {
    const char* spec = std::getenv("LIBCOMM_TEST_NODES");
    return std::string(spec ? spec : "shared");
  }());
  return comm;
}

const std::vector<AlltoallAlgo> kHierarchical = {
    AlltoallAlgo::ClusteredFactor, AlltoallAlgo::ClusteredFactorFill, AlltoallAlgo::Leader,
    AlltoallAlgo::SendAggregate, AlltoallAlgo::RecvDistribute};

// Runs `algo` and checks every received block against the pattern and native's result.
void check_exchange(AlltoallAlgo algo, std::size_t b, AlltoallAlgo inter, bool one_matching = false) {
  const auto& comm = node_comm();
  const int p = comm.size(), me = comm.rank();
  const std::size_t total = b * static_cast<std::size_t>(p);
  std::vector<std::byte> send(total), recv(total, std::byte{0x5A}), ref(total);
  for (int d = 0; d < p; ++d) apps::fill_pattern(send.data() + d * b, me, d, b);
  libcomm::AlltoallOptions opts;
  opts.inter_node = inter;
  opts.one_matching_per_step = one_matching;
  libcomm::alltoall(send.data(), ref.data(), b, comm, AlltoallAlgo::Native, opts);
  const AlltoallAlgo ran = libcomm::alltoall(send.data(), recv.data(), b, comm, algo, opts);
  EXPECT_EQ(ran, algo);
  for (int s = 0; s < p; ++s)
    EXPECT_EQ(apps::check_pattern(recv.data() + s * b, s, me, b), b)
        << libcomm::alltoall_algo_name(algo) << " (inter " << libcomm::alltoall_algo_name(inter)
        << ") block " << b << " from rank " << s << " on " << comm.nodes().describe();
  EXPECT_TRUE(recv == ref);
}

class Hierarchical : public MpiTest {};

TEST_F(Hierarchical, EveryAlgorithmEverySizeMatchesNative) {
  for (AlltoallAlgo algo : kHierarchical)
    for (std::size_t b : {0, 1, 7, 64, 1000, 5000}) check_exchange(algo, b, AlltoallAlgo::Auto);
}

TEST_F(Hierarchical, ClusteredFactorOneMatchingPerStepMatchesNative) {
  // The node's port handed from process to process (blocking, and a plan run twice).
  for (AlltoallAlgo algo : {AlltoallAlgo::ClusteredFactor, AlltoallAlgo::ClusteredFactorFill})
    for (std::size_t b : {0, 1, 1000, 5000}) check_exchange(algo, b, AlltoallAlgo::Auto, true);
  const auto& comm = node_comm();
  const std::size_t b = 40, total = b * static_cast<std::size_t>(comm.size());
  std::vector<std::byte> send(total), recv(total);
  for (int d = 0; d < comm.size(); ++d) apps::fill_pattern(send.data() + d * b, comm.rank(), d, b);
  libcomm::AlltoallOptions opts;
  opts.one_matching_per_step = true;
  auto plan = libcomm::plan_alltoall(comm, b, AlltoallAlgo::ClusteredFactor, opts);
  for (int run = 0; run < 2; ++run) {
    std::fill(recv.begin(), recv.end(), std::byte{0x5A});
    plan.start(send.data(), recv.data());
    plan.wait();
    for (int s = 0; s < comm.size(); ++s)
      EXPECT_EQ(apps::check_pattern(recv.data() + s * b, s, comm.rank(), b), b) << "run " << run << " from " << s;
  }
}

TEST_F(Hierarchical, InterNodeStepTakesAnyRegularAlgorithm) {
  for (AlltoallAlgo algo : {AlltoallAlgo::Leader, AlltoallAlgo::SendAggregate,
                            AlltoallAlgo::RecvDistribute})
    for (AlltoallAlgo inter : {AlltoallAlgo::Native, AlltoallAlgo::Linear, AlltoallAlgo::Ring,
                               AlltoallAlgo::RingSendrecv, AlltoallAlgo::Pairwise,
                               AlltoallAlgo::Factor, AlltoallAlgo::FactorGrouped,
                               AlltoallAlgo::Bruck})
      check_exchange(algo, 24, inter);
}

TEST_F(Hierarchical, HierarchicalInterNodeAlgorithmIsRefusedOnEveryRank) {
  const auto& comm = node_comm();
  std::vector<std::byte> send(8 * comm.size()), recv(send.size());
  libcomm::AlltoallOptions opts;
  opts.inter_node = AlltoallAlgo::SendAggregate;
  const auto o = mpitest::run_catching(
      [&] { libcomm::alltoall(send.data(), recv.data(), 8, comm, AlltoallAlgo::Leader, opts); });
  EXPECT_TRUE(o.threw);
  EXPECT_NE(o.message.find("regular"), std::string::npos) << o.message;
}

TEST_F(Hierarchical, PaperTwoSchemesUseTheNodesSharedWindowAndFallBackToMessages) {
  // One machine: every virtual node shares memory, so leader / SA / RD move the intra-node
  // data through a window (Area::Shared); node_shared_memory = false runs the message
  // fallback. Both match native; a plan run three times alternates the window's halves.
  const auto& comm = node_comm();
  bool multi = false;
  for (int n = 0; n < comm.nodes().num_nodes(); ++n) multi = multi || comm.nodes().node_size(n) > 1;
  for (AlltoallAlgo algo : {AlltoallAlgo::Leader, AlltoallAlgo::SendAggregate, AlltoallAlgo::RecvDistribute})
    for (bool shared : {true, false}) {
      libcomm::AlltoallOptions opts;
      opts.node_shared_memory = shared;
      const std::size_t b = 33;
      auto plan = libcomm::plan_alltoall(comm, b, algo, opts);
      ASSERT_NE(plan.program(), nullptr);
      EXPECT_EQ(plan.program()->shared_bytes > 0, shared && multi)
          << libcomm::alltoall_algo_name(algo) << " on " << comm.nodes().describe();
      const int p = comm.size(), me = comm.rank();
      for (int run = 0; run < 3; ++run) {
        std::vector<std::byte> send(b * p), recv(b * p, std::byte{0x11}), ref(b * p);
        for (int d = 0; d < p; ++d) apps::fill_pattern(send.data() + d * b, me + run * p, d, b);
        libcomm::alltoall(send.data(), ref.data(), b, comm, AlltoallAlgo::Native);
        plan.start(send.data(), recv.data());
        plan.wait();
        EXPECT_TRUE(recv == ref) << libcomm::alltoall_algo_name(algo) << (shared ? " (window)" : " (messages)")
                                 << " run " << run << " rank " << me;
        std::fill(recv.begin(), recv.end(), std::byte{0x22});
        libcomm::alltoall(send.data(), recv.data(), b, comm, algo, opts);
        EXPECT_TRUE(recv == ref) << libcomm::alltoall_algo_name(algo) << " blocking, run " << run;
      }
    }
}

TEST_F(Hierarchical, RepeatedCallsReuseTheSubCommunicators) {
  for (int i = 0; i < 3; ++i)
    for (AlltoallAlgo algo : kHierarchical) check_exchange(algo, 16, AlltoallAlgo::Auto);
}

}  // namespace
