// libcomm::alltoall under MPI: every algorithm, many block sizes, checked byte for byte
// against the expected pattern and against the MPI library's own MPI_Alltoall.
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
using mpitest::MpiTestWithParam;

std::vector<AlltoallAlgo> every_algorithm() {
  std::vector<AlltoallAlgo> out;
  for (const auto& info : libcomm::alltoall_algorithms()) out.push_back(info.algo);
  return out;
}

std::string name_of(AlltoallAlgo a) { return std::string(libcomm::alltoall_algo_name(a)); }

// P blocks of b bytes, block d holding the pattern this rank sends to rank d.
std::vector<std::byte> pattern_send(std::size_t b, const Comm& comm) {
  std::vector<std::byte> send(b * comm.size());
  for (int d = 0; d < comm.size(); ++d) apps::fill_pattern(send.data() + d * b, comm.rank(), d, b);
  return send;
}

// Expects recv to hold, in block s, what rank s sends to this rank. Reports the first bad
// byte of at most a few blocks.
void expect_pattern_received(const std::vector<std::byte>& recv, std::size_t b, const Comm& comm,
                             const std::string& what) {
  int reported = 0;
  for (int s = 0; s < comm.size(); ++s) {
    const std::size_t at = apps::check_pattern(recv.data() + s * b, s, comm.rank(), b);
    if (at != b && reported++ < 3)
      ADD_FAILURE() << what << ": rank " << comm.rank() << ", block from rank " << s
                    << " differs at byte " << at << " of " << b;
  }
}

// Runs `algo` on the pattern, checks it, and compares with Native. Returns what ran.
AlltoallAlgo run_and_check(AlltoallAlgo algo, std::size_t b, const Comm& comm,
                           const std::string& what, const AlltoallOptions& opts = {}) {
  const auto send = pattern_send(b, comm);
  const std::size_t total = b * comm.size();
  std::vector<std::byte> recv(total, std::byte{0xA5}), reference(total, std::byte{0x5A});
  const AlltoallAlgo ran = libcomm::alltoall(send.data(), recv.data(), b, comm, algo, opts);
  // (Auto's choice depends on its policy: online measures candidates on the first calls.)
  if (algo != AlltoallAlgo::Auto) {
    EXPECT_EQ(ran, libcomm::choose_alltoall(algo, b, comm.size(), opts).algo) << what;
  }
  expect_pattern_received(recv, b, comm, what);
  libcomm::alltoall(send.data(), reference.data(), b, comm, AlltoallAlgo::Native, opts);
  expect_pattern_received(reference, b, comm, what + " (native)");
  EXPECT_TRUE(recv == reference)
      << what << ": result differs from native on rank " << comm.rank();
  // The send buffer is left alone.
  EXPECT_EQ(send, pattern_send(b, comm)) << what << ": send buffer was modified";
  return ran;
}

// ---------------------------------------------------------------------------------------

const std::vector<std::size_t> kBlockSizes = {0, 1, 7, 8, 100, 1000, 4096, 70000};

class EveryAlgorithm : public MpiTestWithParam<std::tuple<AlltoallAlgo, std::size_t>> {};

TEST_P(EveryAlgorithm, DeliversEveryBlockAndMatchesNative) {
  const auto [algo, b] = GetParam();
  const std::string what = name_of(algo) + " " + std::to_string(b) + " B, P = " +
                           std::to_string(mpitest::size());
  run_and_check(algo, b, mpitest::world(), what);
}

INSTANTIATE_TEST_SUITE_P(
    Alltoall, EveryAlgorithm,
    ::testing::Combine(::testing::ValuesIn(every_algorithm()), ::testing::ValuesIn(kBlockSizes)),
    [](const auto& info) {
      return name_of(std::get<0>(info.param)) + "_" + std::to_string(std::get<1>(info.param)) + "B";
    });

// ---------------------------------------------------------------------------------------
// Node maps given by a spec (virtual nodes on one machine).

std::vector<std::string> node_specs() {
  const int p = mpitest::size();
  // Nodes of sizes 1, 2, 3, ... (the last one cut short): unequal nodes.
  std::string growing = "sizes=";
  for (int s = 1, left = p; left > 0; ++s) {
    if (s > 1) growing += ',';
    growing += std::to_string(std::min(s, left));
    left -= std::min(s, left);
  }
  // Two interleaved nodes: even and odd ranks (nodes of non-consecutive ranks).
  std::string interleaved = "map=";
  for (int r = 0; r < p; ++r) {
    if (r > 0) interleaved += ',';
    interleaved += std::to_string(r % 2);
  }
  return {"ppn=2", "ppn=3", "flat", growing, interleaved};
}

class NodeSpec : public MpiTestWithParam<AlltoallAlgo> {};

TEST_P(NodeSpec, EveryAlgorithmOnVirtualNodes) {
  const AlltoallAlgo algo = GetParam();
  for (const std::string& spec : node_specs()) {
    const Comm comm(MPI_COMM_WORLD, spec);
    ASSERT_EQ(comm.size(), mpitest::size());
    ASSERT_EQ(comm.nodes().num_ranks(), comm.size());
    for (std::size_t b : {0, 1, 100, 4096})
      run_and_check(algo, b, comm, name_of(algo) + " on '" + spec + "' (" +
                                       comm.nodes().describe() + "), " + std::to_string(b) + " B");
  }
}

INSTANTIATE_TEST_SUITE_P(Alltoall, NodeSpec, ::testing::ValuesIn(every_algorithm()),
                         [](const auto& info) { return name_of(info.param); });

TEST_F(MpiTest, CommWithPpn2NodeSpec) {
  const Comm comm(MPI_COMM_WORLD, "ppn=2");
  const int p = comm.size();
  EXPECT_EQ(comm.nodes().num_nodes(), (p + 1) / 2);
  EXPECT_EQ(comm.nodes().node_of(comm.rank()), comm.rank() / 2);
  EXPECT_EQ(comm.nodes().local_index(comm.rank()), comm.rank() % 2);
  for (AlltoallAlgo a : {AlltoallAlgo::Auto, AlltoallAlgo::Factor, AlltoallAlgo::Leader,
                         AlltoallAlgo::ClusteredFactor})
    run_and_check(a, 64, comm, name_of(a) + " on ppn=2");
}

TEST_F(MpiTest, DefaultCommPutsAllRanksOnOneNode) {
  // mpiexec on one machine: every rank shares memory with every other.
  EXPECT_EQ(mpitest::world().nodes().num_nodes(), 1);
  EXPECT_EQ(mpitest::world().nodes().num_ranks(), mpitest::size());
}

TEST_F(MpiTest, CommOnASubCommunicator) {
  // A Comm over the even / odd ranks: alltoall works on any communicator, and its own
  // messages never mix with the sibling communicator's.
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, mpitest::rank() % 2, mpitest::rank(), &half);
  {
    const Comm comm(half);
    for (AlltoallAlgo a : {AlltoallAlgo::Bruck, AlltoallAlgo::Pairwise, AlltoallAlgo::Ring,
                           AlltoallAlgo::RecvDistribute})
      run_and_check(a, 40, comm, name_of(a) + " on half of the ranks");
  }
  MPI_Comm_free(&half);
}

// ---------------------------------------------------------------------------------------
// Typed span API.

class TypedSpan : public MpiTestWithParam<AlltoallAlgo> {};

TEST_P(TypedSpan, DoublesAndInts) {
  const AlltoallAlgo algo = GetParam();
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  for (std::size_t k : {0, 1, 5, 300}) {
    const std::string what = name_of(algo) + ", " + std::to_string(k) + " elements per block";
    std::vector<double> sd(k * p), rd(k * p, -1.0);
    std::vector<int> si(k * p), ri(k * p, -1);
    for (int d = 0; d < p; ++d)
      for (std::size_t j = 0; j < k; ++j) {
        sd[d * k + j] = me * 1e6 + d * 1e3 + static_cast<double>(j) + 0.25;
        si[d * k + j] = me * 1000000 + d * 1000 + static_cast<int>(j);
      }
    libcomm::alltoall<double>(sd, rd, comm, algo);
    libcomm::alltoall(std::span<const int>(si), std::span<int>(ri), comm, algo);
    int bad = 0;
    for (int s = 0; s < p; ++s)
      for (std::size_t j = 0; j < k; ++j) {
        const double want_d = s * 1e6 + me * 1e3 + static_cast<double>(j) + 0.25;
        const int want_i = s * 1000000 + me * 1000 + static_cast<int>(j);
        if ((rd[s * k + j] != want_d || ri[s * k + j] != want_i) && bad++ < 3)
          ADD_FAILURE() << what << ": element " << j << " from rank " << s << ": got "
                        << rd[s * k + j] << " / " << ri[s * k + j] << ", want " << want_d
                        << " / " << want_i;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Alltoall, TypedSpan, ::testing::ValuesIn(every_algorithm()),
                         [](const auto& info) { return name_of(info.param); });

TEST_F(MpiTest, ByteSpanApi) {
  const Comm& comm = mpitest::world();
  const std::size_t b = 24;
  const auto send = pattern_send(b, comm);
  std::vector<std::byte> recv(b * comm.size() + 16);  // larger than needed is fine
  libcomm::alltoall(std::span<const std::byte>(send), std::span<std::byte>(recv), b, comm,
                    AlltoallAlgo::Factor);
  recv.resize(b * comm.size());
  expect_pattern_received(recv, b, comm, "byte span factor");
}

// ---------------------------------------------------------------------------------------
// Several calls on one Comm: the plan cache must hand out the right plan every time.

TEST_F(MpiTest, RepeatedCallsWithDifferentAlgorithmsOnOneComm) {
  const Comm comm(MPI_COMM_WORLD);
  const std::vector<std::pair<AlltoallAlgo, std::size_t>> calls = {
      {AlltoallAlgo::Factor, 16},        {AlltoallAlgo::Ring, 16},
      {AlltoallAlgo::Factor, 300},       {AlltoallAlgo::Pairwise, 8},
      {AlltoallAlgo::RingSendrecv, 8},   {AlltoallAlgo::FactorGrouped, 40},
      {AlltoallAlgo::Linear, 40},        {AlltoallAlgo::Bruck, 5},
      {AlltoallAlgo::ClusteredFactor, 9}, {AlltoallAlgo::Leader, 9},
      {AlltoallAlgo::Factor, 1},         {AlltoallAlgo::Auto, 40000},
      {AlltoallAlgo::Auto, 1000},        {AlltoallAlgo::Auto, 3},
      {AlltoallAlgo::Ring, 16},          {AlltoallAlgo::SendAggregate, 12},
      {AlltoallAlgo::RecvDistribute, 12}, {AlltoallAlgo::Leader, 50},
  };
  for (int round = 0; round < 2; ++round)
    for (const auto& [a, b] : calls)
      run_and_check(a, b, comm, "call " + name_of(a) + " " + std::to_string(b) + " B, pass " +
                                    std::to_string(round));
}

TEST_F(MpiTest, TwoCommsInterleaved) {
  const Comm a(MPI_COMM_WORLD), b(MPI_COMM_WORLD, "flat");
  for (int i = 0; i < 3; ++i) {
    run_and_check(AlltoallAlgo::Factor, 32, a, "comm a");
    run_and_check(AlltoallAlgo::Leader, 32, b, "comm b");
    run_and_check(AlltoallAlgo::Pairwise, 32, b, "comm b");
  }
  // Copies share the cache and the internal communicator.
  const Comm c = a;
  run_and_check(AlltoallAlgo::Factor, 32, c, "copy of comm a");
}

TEST_F(MpiTest, UncheckedCallsGiveTheSameResult) {
  AlltoallOptions fast;
  fast.check_args = false;
  for (const auto& info : libcomm::alltoall_algorithms())
    run_and_check(info.algo, 100, mpitest::world(), name_of(info.algo) + " unchecked", fast);
}

TEST_F(MpiTest, InterNodeAlgorithmOfHierarchicalSchemes) {
  const Comm comm(MPI_COMM_WORLD, "ppn=2");
  for (AlltoallAlgo outer :
       {AlltoallAlgo::Leader, AlltoallAlgo::SendAggregate, AlltoallAlgo::RecvDistribute})
    for (AlltoallAlgo inner : {AlltoallAlgo::Native, AlltoallAlgo::Linear, AlltoallAlgo::Pairwise,
                               AlltoallAlgo::Factor, AlltoallAlgo::Bruck}) {
      AlltoallOptions opts;
      opts.inter_node = inner;
      run_and_check(outer, 33, comm, name_of(outer) + " over " + name_of(inner), opts);
    }
}

TEST_F(MpiTest, ApplicationMessagesOnTheUserCommAreNotDisturbed) {
  // A receive the application posted on MPI_COMM_WORLD (any source, any tag) must not
  // catch libcomm's own messages.
  const Comm& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  int token = -1;
  MPI_Request req;
  MPI_Irecv(&token, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
  for (AlltoallAlgo a : {AlltoallAlgo::Linear, AlltoallAlgo::Factor, AlltoallAlgo::Bruck,
                         AlltoallAlgo::Leader, AlltoallAlgo::ClusteredFactor})
    run_and_check(a, 4, comm, name_of(a) + " with a pending application receive");
  // Nobody sends the application's own message before every rank has tested its
  // receive (a barrier matches no point-to-point receive).
  MPI_Barrier(MPI_COMM_WORLD);
  int done = 0;
  MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(done) << "the application's receive caught a libcomm message (token " << token
                     << ")";
  const int mine = me;
  MPI_Send(&mine, 1, MPI_INT, (me + 1) % p, 42, MPI_COMM_WORLD);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  EXPECT_EQ(token, (me - 1 + p) % p);
}

}  // namespace
