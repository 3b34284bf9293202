// Auto with a tuning table (libcomm/tuning.hpp) under MPI: every operation runs the
// table's algorithm where a row applies, the built-in rule where none does or where the
// row's algorithm cannot run at this P, and stays byte-exact (compared with the expected
// data and with the MPI library's own collective).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/libcomm.hpp"
#include "libcomm/topology.hpp"
#include "mpi_test.hpp"

namespace {

using namespace libcomm;
using mpitest::MpiTest;
using mpitest::world;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Makes `text` (whole rows) the active table; restores "no table" when it goes out of scope.
struct ScopedTableText {
  explicit ScopedTableText(const std::string& text) {
    std::istringstream in(text);
    set_tuning_table(std::make_shared<const TuningTable>(TuningTable::parse(in, "test.tune")));
  }
  ~ScopedTableText() { set_tuning_table(nullptr); }
};

// The rows `rows` (OP FROM TO ALGORITHM [extra], one per line) for the world
// communicator's exact shape.
std::string rows_for_world(const std::vector<std::string>& rows) {
  const auto shape = tuning_query("", world(), 0);
  std::ostringstream text;
  for (const auto& r : rows) {
    std::istringstream f(r);
    std::string op, rest;
    f >> op;
    std::getline(f, rest);
    text << op << " " << shape.ranks << " " << shape.ppn << rest << "\n";
  }
  return text.str();
}

// Makes `rows` the active table for the world communicator's shape, as above.
struct ScopedTable : ScopedTableText {
  explicit ScopedTable(const std::vector<std::string>& rows) : ScopedTableText(rows_for_world(rows)) {}
};

bool power_of_two(int p) { return (p & (p - 1)) == 0; }

// Alltoall with Auto on comm: returns what ran; checks that it is what the uncached
// choose_alltoall says and the bytes against the pattern and native.
AlltoallAlgo alltoall_auto(std::size_t b, const Comm& comm = world(), const AlltoallOptions& opts = {}) {
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<std::byte> send(b * p), recv(b * p, std::byte{0xA5}), ref(b * p, std::byte{0x5A});
  for (std::size_t d = 0; d < p; ++d)
    apps::fill_pattern(send.data() + d * b, comm.rank(), static_cast<int>(d), b);
  const AlltoallAlgo ran = alltoall(send.data(), recv.data(), b, comm, AlltoallAlgo::Auto, opts);
  EXPECT_EQ(ran, choose_alltoall(AlltoallAlgo::Auto, b, comm, opts).algo) << b << " B";
  alltoall(send.data(), ref.data(), b, comm, AlltoallAlgo::Native);
  EXPECT_TRUE(recv == ref)
      << "auto (" << alltoall_algo_name(ran) << ") differs from native at " << b << " B";
  for (std::size_t s = 0; s < p; ++s)
    EXPECT_EQ(apps::check_pattern(recv.data() + s * b, static_cast<int>(s), comm.rank(), b), b)
        << "block from rank " << s;
  return ran;
}

// A private duplicate of the world communicator, freed at scope exit.
struct DupComm {
  MPI_Comm comm = MPI_COMM_NULL;
  DupComm() { MPI_Comm_dup(world().mpi(), &comm); }
  ~DupComm() { MPI_Comm_free(&comm); }
};

class AutoTable : public MpiTest {};

TEST_F(AutoTable, AlltoallFollowsTheSizeRanges) {
  ScopedTable table({"alltoall 0 100 factor", "alltoall 101 10000 linear"});
  EXPECT_EQ(alltoall_auto(8), AlltoallAlgo::Factor);
  EXPECT_EQ(alltoall_auto(100), AlltoallAlgo::Factor);
  EXPECT_EQ(alltoall_auto(101), AlltoallAlgo::Linear);
  EXPECT_EQ(alltoall_auto(10000), AlltoallAlgo::Linear);
  const auto c = choose_alltoall(AlltoallAlgo::Auto, 500, world());
  EXPECT_TRUE(contains(c.reason(), "test.tune line 2")) << c.reason();
  // Beyond the table: the built-in size rule, and the reason says so.
  const auto rule = choose_alltoall(AlltoallAlgo::Auto, 20000, world());
  EXPECT_EQ(rule.algo, AlltoallAlgo::Ring);
  EXPECT_TRUE(contains(rule.reason(), "no tuning table row")) << rule.reason();
  EXPECT_EQ(alltoall_auto(20000), AlltoallAlgo::Ring);
}

TEST_F(AutoTable, AlltoallRowThatCannotRunHere) {
  {
    // pairwise needs a power of two: its own fallback runs elsewhere.
    ScopedTable table({"alltoall 0 inf pairwise"});
    const auto c = choose_alltoall(AlltoallAlgo::Auto, 64, world());
    EXPECT_EQ(c.algo, power_of_two(world().size()) ? AlltoallAlgo::Pairwise : AlltoallAlgo::RingSendrecv)
        << c.reason();
    EXPECT_TRUE(contains(c.reason(), "auto: pairwise from tuning table test.tune line 1")) << c.reason();
    alltoall_auto(64);
  }
  {
    // Hierarchical rows need several nodes of several ranks; the world here is one node
    // (or one rank per node), so the rule runs, and no recursion happens.
    ScopedTable table({"alltoall 0 inf send_aggregate"});
    const auto c = choose_alltoall(AlltoallAlgo::Auto, 64, world());
    EXPECT_EQ(c.algo, AlltoallAlgo::Bruck) << c.reason();
    EXPECT_TRUE(contains(c.reason(), "needs several nodes")) << c.reason();
    EXPECT_EQ(alltoall_auto(64), AlltoallAlgo::Bruck);
  }
}

TEST_F(AutoTable, AllgatherAndReduceScatter) {
  const Comm& comm = world();
  const int p = comm.size(), me = comm.rank();
  ScopedTable table({"allgather 0 inf d_cycles", "reduce_scatter 0 inf reduce_spread"});
  for (std::size_t n : {1u, 7u, 300u}) {
    std::vector<double> mine(n), all(n * p, -1.0);
    for (std::size_t k = 0; k < n; ++k) mine[k] = me * 1000.0 + static_cast<double>(k);
    const auto ran = allgather<double>(mine, all, comm, AllgatherAlgo::Auto);
    // d_cycles needs a binary cube: elsewhere the rule (ring) runs.
    EXPECT_EQ(ran, power_of_two(p) ? AllgatherAlgo::DCycles : AllgatherAlgo::Ring);
    for (int r = 0; r < p; ++r)
      for (std::size_t k = 0; k < n; ++k)
        ASSERT_EQ(all[r * n + k], r * 1000.0 + static_cast<double>(k)) << "block " << r;

    std::vector<double> send(n * p), recv(n, -1.0);
    for (std::size_t k = 0; k < send.size(); ++k) send[k] = me + static_cast<double>(k);
    const auto rs = reduce_scatter_block<double>(send, recv, ReduceOp::Sum, comm, ReduceScatterAlgo::Auto);
    EXPECT_EQ(rs, ReduceScatterAlgo::ReduceSpread);
    for (std::size_t k = 0; k < n; ++k)  // sum over ranks r of r + (me * n + k)
      ASSERT_EQ(recv[k], p * (p - 1) / 2.0 + p * static_cast<double>(me * n + k)) << "element " << k;
  }
}

TEST_F(AutoTable, AlltoallvUsesCountStatistics) {
  const Comm& comm = world();
  const int p = comm.size(), me = comm.rank();
  // Rank i sends (i + j) % 3 + 1 elements of 8 bytes to rank j.
  std::vector<std::int64_t> sc(p), sd(p), rc(p), rd(p);
  std::int64_t s = 0, r = 0;
  for (int j = 0; j < p; ++j) {
    sc[j] = (me + j) % 3 + 1, sd[j] = s, s += sc[j];
    rc[j] = (j + me) % 3 + 1, rd[j] = r, r += rc[j];
  }
  std::vector<std::uint64_t> send(static_cast<std::size_t>(s)), recv(static_cast<std::size_t>(r)),
      ref(static_cast<std::size_t>(r));
  for (int j = 0; j < p; ++j)
    for (std::int64_t k = 0; k < sc[j]; ++k)
      send[static_cast<std::size_t>(sd[j] + k)] =
          (static_cast<std::uint64_t>(me) << 32) | static_cast<std::uint64_t>(j * 16 + k);
  const auto stats = alltoallv_count_stats(mpitest::in_bytes(sc, 8), comm);
  EXPECT_EQ(stats.max_bytes, p == 1 ? 8u : 24u);  // counts 1..3 (only 1 at P = 1)
  double total = 0;  // over every rank's counts: one MPI_Allreduce gives max and sum
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) total += 8.0 * ((i + j) % 3 + 1);
  EXPECT_DOUBLE_EQ(stats.mean_bytes, total / (static_cast<double>(p) * p));
  {
    // One algorithm for every size: the counts cannot matter, and auto runs it.
    ScopedTable table({"alltoallv 0 1K two_stage", "alltoallv 1025 inf two_stage"});
    EXPECT_EQ(alltoallv<std::uint64_t>(send, sc, sd, recv, rc, rd, comm, AlltoallvAlgo::Auto),
              AlltoallvAlgo::TwoStage);
  }
  {
    ScopedTable table({"alltoallv 0 8 two_stage", "alltoallv 9 inf mesh"});
    const auto ran = alltoallv<std::uint64_t>(send, sc, sd, recv, rc, rd, comm, AlltoallvAlgo::Auto);
    int root = 0;
    while ((root + 1) * (root + 1) <= p) ++root;
    const AlltoallvAlgo want = stats.max_bytes <= 8 ? AlltoallvAlgo::TwoStage
                               : root * root == p    ? AlltoallvAlgo::Mesh
                                                     : choose_alltoallv(AlltoallvAlgo::Auto, p);
    EXPECT_EQ(ran, want) << choose_alltoallv(AlltoallvAlgo::Auto, stats, comm).reason();
  }
  alltoallv<std::uint64_t>(send, sc, sd, ref, rc, rd, comm, AlltoallvAlgo::Native);
  EXPECT_EQ(recv, ref);
}

// Auto remembers its decisions per communicator, size and options: repeated and
// interleaved calls must keep running what the uncached choose_alltoall says
// (alltoall_auto compares them on every call).
TEST_F(AutoTable, RememberedDecisionsMatchTheUncachedChoice) {
  ScopedTable table({"alltoall 0 100 factor", "alltoall 101 10000 linear"});
  const std::size_t sizes[] = {8, 101, 100, 20000, 0, 10000, 10001, 256, 257};
  for (int round = 0; round < 2; ++round)
    for (std::size_t b : sizes) alltoall_auto(b);
  EXPECT_EQ(alltoall_auto(100), AlltoallAlgo::Factor);
  EXPECT_EQ(alltoall_auto(101), AlltoallAlgo::Linear);
}

TEST_F(AutoTable, RememberedDecisionsFollowTheOptions) {
  const int p = world().size();
  if (p < 4) GTEST_SKIP() << "needs two nodes of two ranks (ppn=2), P = " << p;
  // A hierarchical row runs only with a regular inter-node algorithm.
  ScopedTableText table("alltoall " + std::to_string(p) + " 2 0 inf send_aggregate\n");
  DupComm dup;
  const Comm pairs(dup.comm, "ppn=2");
  EXPECT_EQ(alltoall_auto(64, pairs), AlltoallAlgo::SendAggregate);
  const AlltoallOptions hierarchical_inter{.inter_node = AlltoallAlgo::Leader};
  EXPECT_EQ(alltoall_auto(64, pairs, hierarchical_inter), AlltoallAlgo::Bruck);
  EXPECT_EQ(alltoall_auto(64, pairs), AlltoallAlgo::SendAggregate);
}

TEST_F(AutoTable, RememberedDecisionsFollowAReplacedTable) {
  {
    ScopedTable table({"alltoall 0 inf factor"});
    EXPECT_EQ(alltoall_auto(64), AlltoallAlgo::Factor);
  }
  {
    ScopedTable table({"alltoall 0 inf linear"});
    EXPECT_EQ(alltoall_auto(64), AlltoallAlgo::Linear);
  }
  EXPECT_EQ(alltoall_auto(64), AlltoallAlgo::Bruck);  // no table: the size rule
}

TEST_F(AutoTable, RememberedDecisionsFollowAnAttachedTopology) {
  if (world().size() < 3) GTEST_SKIP() << "a switch tree needs at least 3 machines";
  const auto shape = tuning_query("", world(), 0);
  const std::string s = std::to_string(shape.ranks) + " " + std::to_string(shape.ppn);
  ScopedTableText table("alltoall " + s + " 0 inf factor\nalltoall " + s +
                        " 0 inf linear topology=tree\n");
  DupComm dup;
  const Comm comm(dup.comm, world().nodes());
  EXPECT_EQ(alltoall_auto(64, comm), AlltoallAlgo::Factor);
  attach_topology(comm, Topology::single_switch(comm.size()));
  EXPECT_EQ(alltoall_auto(64, comm), AlltoallAlgo::Linear);
}

// Decisions live with the Comm: a communicator freed and created again (MPI may hand out
// the same handle) or a second Comm on one handle starts without any.
TEST_F(AutoTable, FreedAndDuplicatedCommunicatorsDecideAfresh) {
  const std::string p = std::to_string(world().size());
  ScopedTableText table("alltoall " + p + " 1 0 inf factor\nalltoall " + p + " 2 0 inf linear\n");
  {
    DupComm dup;
    const Comm flat(dup.comm, "flat");
    EXPECT_EQ(alltoall_auto(64, flat), AlltoallAlgo::Factor);
  }
  DupComm dup;
  const Comm pairs(dup.comm, "ppn=2");
  // One rank: ppn=2 is the same shape as flat.
  const AlltoallAlgo want = world().size() > 1 ? AlltoallAlgo::Linear : AlltoallAlgo::Factor;
  EXPECT_EQ(alltoall_auto(64, pairs), want);
  const Comm flat_again(dup.comm, "flat");
  EXPECT_EQ(alltoall_auto(64, flat_again), AlltoallAlgo::Factor);
  EXPECT_EQ(alltoall_auto(64, pairs), want);
}

TEST_F(AutoTable, RememberedAllgatherDecisionsFollowTheSize) {
  const Comm& comm = world();
  const int p = comm.size();
  ScopedTable table({"allgather 0 8 send_spread", "allgather 9 inf butterfly"});
  for (std::size_t n : {1u, 3u, 1u, 3u}) {  // 8 B, 24 B, again
    std::vector<double> mine(n, comm.rank()), all(n * p, -1.0);
    const auto ran = allgather<double>(mine, all, comm, AllgatherAlgo::Auto);
    EXPECT_EQ(ran, n == 1 ? AllgatherAlgo::SendSpread : AllgatherAlgo::Butterfly) << n;
    EXPECT_EQ(ran, choose_allgather(AllgatherAlgo::Auto, n * sizeof(double), comm).algo);
    for (int r = 0; r < p; ++r) ASSERT_EQ(all[r * n], r) << "block " << r;
  }
}

// Registered separately with LIBCOMM_TUNING=tests/mpi/data/auto_env.tune.
TEST_F(MpiTest, AutoEnvTableIsLoaded) {
  const char* path = std::getenv("LIBCOMM_TUNING");
  ASSERT_NE(path, nullptr) << "this test runs with LIBCOMM_TUNING set (see CMakeLists.txt)";
  const auto table = active_tuning_table();
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->source(), path);
  const auto c = choose_alltoall(AlltoallAlgo::Auto, 1000, world());
  EXPECT_EQ(c.algo, AlltoallAlgo::Factor) << c.reason();
  // Line 3 is the one-rank-per-node shape, line 4 the shared-node one.
  const bool one_per_node = tuning_query("", world(), 0).ppn == 1;
  EXPECT_TRUE(contains(c.reason(), one_per_node ? "line 3" : "line 4")) << c.reason();
  EXPECT_EQ(alltoall_auto(1000), AlltoallAlgo::Factor);
}

}  // namespace

namespace {

// Every blocking call of the four operations returns what ran and why (the Choice): the
// rule or table row for Auto, the same reason again when the decision is reused from the
// Comm's memo, "requested" for a request that runs as asked, and the fallback taken.
TEST_F(MpiTest, EveryBlockingCallReturnsWhatRanAndWhy) {
  const Comm comm(MPI_COMM_WORLD);
  const int p = comm.size();
  const auto up = static_cast<std::size_t>(p);
  std::vector<std::byte> send(64 * up), recv(64 * up);
  {  // alltoall
    const auto first = alltoall(send.data(), recv.data(), 8, comm, AlltoallAlgo::Auto);
    EXPECT_TRUE(contains(first.reason(), "auto")) << first.reason();
    const auto again = alltoall(send.data(), recv.data(), 8, comm, AlltoallAlgo::Auto);
    EXPECT_EQ(again.algo, first.algo);
    EXPECT_EQ(again.reason(), first.reason()) << "the memo keeps the reason";
    EXPECT_EQ(alltoall(send.data(), recv.data(), 8, comm, AlltoallAlgo::Ring).reason(), "requested");
    const auto pw = alltoall(send.data(), recv.data(), 8, comm, AlltoallAlgo::Pairwise);
    if (power_of_two(p)) {
      EXPECT_EQ(pw.reason(), "requested");
    } else {
      EXPECT_EQ(pw.algo, AlltoallAlgo::RingSendrecv);
      EXPECT_TRUE(contains(pw.reason(), "ran ring_sendrecv instead")) << pw.reason();
    }
  }
  {  // alltoallv: 8 bytes to every rank
    std::vector<std::int64_t> c(up, 8), d(up);
    for (std::size_t k = 0; k < up; ++k) d[k] = static_cast<std::int64_t>(8 * k);
    const auto a = alltoallv(send.data(), c, d, recv.data(), c, d, comm, AlltoallvAlgo::Auto);
    EXPECT_TRUE(contains(a.reason(), "auto")) << a.reason();
    EXPECT_EQ(alltoallv(send.data(), c, d, recv.data(), c, d, comm, AlltoallvAlgo::Auto).reason(), a.reason());
    const auto mesh = alltoallv(send.data(), c, d, recv.data(), c, d, comm, AlltoallvAlgo::Mesh);
    int q = 1;
    while (q * q < p) ++q;
    if (q * q == p) {
      EXPECT_EQ(mesh.reason(), "requested");
    } else {
      EXPECT_EQ(mesh.algo, AlltoallvAlgo::FourStage);
      EXPECT_TRUE(contains(mesh.reason(), "ran four_stage instead")) << mesh.reason();
    }
  }
  {  // allgather
    const auto a = allgather(send.data(), recv.data(), 16, comm, AllgatherAlgo::Auto);
    EXPECT_TRUE(contains(a.reason(), "auto")) << a.reason();
    EXPECT_EQ(allgather(send.data(), recv.data(), 16, comm, AllgatherAlgo::Auto).reason(), a.reason());
    const auto dc = allgather(send.data(), recv.data(), 16, comm, AllgatherAlgo::DCycles);
    EXPECT_EQ(dc.algo, power_of_two(p) ? AllgatherAlgo::DCycles : AllgatherAlgo::Ring);
    EXPECT_TRUE(contains(dc.reason(), power_of_two(p) ? "requested" : "ran ring instead")) << dc.reason();
  }
  {  // reduce_scatter: two doubles per rank (16 bytes)
    std::vector<double> in(2 * up, 1.0), out(2);
    const std::vector<std::size_t> bytes(up, 16);
    const auto a = reduce_scatter(in.data(), out.data(), bytes, ElemType::Double, ReduceOp::Sum, comm);
    EXPECT_TRUE(contains(a.reason(), "auto")) << a.reason();
    EXPECT_EQ(out[0], static_cast<double>(p));
    const auto dc = reduce_scatter(in.data(), out.data(), bytes, ElemType::Double, ReduceOp::Sum, comm,
                                   ReduceScatterAlgo::DCycles);
    EXPECT_TRUE(contains(dc.reason(), power_of_two(p) ? "requested" : "ran ring instead")) << dc.reason();
  }
}

}  // namespace
