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
#include "mpi_test.hpp"

namespace {

using namespace libcomm;
using mpitest::MpiTest;
using mpitest::world;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Makes `rows` (OP FROM TO ALGORITHM [extra], one per line) the active table for this
// communicator's exact shape; restores "no table" when it goes out of scope.
struct ScopedTable {
  explicit ScopedTable(const std::vector<std::string>& rows) {
    const auto shape = tuning_query("", world(), 0);
    std::ostringstream text;
    for (const auto& r : rows) {
      std::istringstream f(r);
      std::string op, rest;
      f >> op;
      std::getline(f, rest);
      text << op << " " << shape.ranks << " " << shape.ppn << rest << "\n";
    }
    std::istringstream in(text.str());
    set_tuning_table(std::make_shared<const TuningTable>(TuningTable::parse(in, "test.tune")));
  }
  ~ScopedTable() { set_tuning_table(nullptr); }
};

bool power_of_two(int p) { return (p & (p - 1)) == 0; }

// Alltoall with Auto: returns what ran; checks the bytes against the pattern and native.
AlltoallAlgo alltoall_auto(std::size_t b) {
  const Comm& comm = world();
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<std::byte> send(b * p), recv(b * p, std::byte{0xA5}), ref(b * p, std::byte{0x5A});
  for (std::size_t d = 0; d < p; ++d)
    apps::fill_pattern(send.data() + d * b, comm.rank(), static_cast<int>(d), b);
  const AlltoallAlgo ran = alltoall(send.data(), recv.data(), b, comm, AlltoallAlgo::Auto);
  EXPECT_EQ(ran, choose_alltoall(AlltoallAlgo::Auto, b, comm).algo);
  alltoall(send.data(), ref.data(), b, comm, AlltoallAlgo::Native);
  EXPECT_TRUE(recv == ref)
      << "auto (" << alltoall_algo_name(ran) << ") differs from native at " << b << " B";
  for (std::size_t s = 0; s < p; ++s)
    EXPECT_EQ(apps::check_pattern(recv.data() + s * b, static_cast<int>(s), comm.rank(), b), b)
        << "block from rank " << s;
  return ran;
}

class AutoTable : public MpiTest {};

TEST_F(AutoTable, AlltoallFollowsTheSizeRanges) {
  ScopedTable table({"alltoall 0 100 factor", "alltoall 101 10000 linear"});
  EXPECT_EQ(alltoall_auto(8), AlltoallAlgo::Factor);
  EXPECT_EQ(alltoall_auto(100), AlltoallAlgo::Factor);
  EXPECT_EQ(alltoall_auto(101), AlltoallAlgo::Linear);
  EXPECT_EQ(alltoall_auto(10000), AlltoallAlgo::Linear);
  const auto c = choose_alltoall(AlltoallAlgo::Auto, 500, world());
  EXPECT_TRUE(contains(c.reason, "test.tune line 2")) << c.reason;
  // Beyond the table: the built-in size rule, and the reason says so.
  const auto rule = choose_alltoall(AlltoallAlgo::Auto, 20000, world());
  EXPECT_EQ(rule.algo, AlltoallAlgo::Ring);
  EXPECT_TRUE(contains(rule.reason, "no tuning table row")) << rule.reason;
  EXPECT_EQ(alltoall_auto(20000), AlltoallAlgo::Ring);
}

TEST_F(AutoTable, AlltoallRowThatCannotRunHere) {
  {
    // pairwise needs a power of two: its own fallback runs elsewhere.
    ScopedTable table({"alltoall 0 inf pairwise"});
    const auto c = choose_alltoall(AlltoallAlgo::Auto, 64, world());
    EXPECT_EQ(c.algo, power_of_two(world().size()) ? AlltoallAlgo::Pairwise : AlltoallAlgo::RingSendrecv)
        << c.reason;
    EXPECT_TRUE(contains(c.reason, "auto: pairwise from tuning table test.tune line 1")) << c.reason;
    alltoall_auto(64);
  }
  {
    // Hierarchical rows need several nodes of several ranks; the world here is one node
    // (or one rank per node), so the rule runs, and no recursion happens.
    ScopedTable table({"alltoall 0 inf send_aggregate"});
    const auto c = choose_alltoall(AlltoallAlgo::Auto, 64, world());
    EXPECT_EQ(c.algo, AlltoallAlgo::Bruck) << c.reason;
    EXPECT_TRUE(contains(c.reason, "needs several nodes")) << c.reason;
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
  const auto stats = alltoallv_count_stats(sc, 8, comm);
  EXPECT_EQ(stats.max_bytes, p == 1 ? 8u : 24u);  // counts 1..3 (only 1 at P = 1)
  {
    ScopedTable table({"alltoallv 0 8 two_stage", "alltoallv 9 inf mesh"});
    const auto ran = alltoallv<std::uint64_t>(send, sc, sd, recv, rc, rd, comm, AlltoallvAlgo::Auto);
    int root = 0;
    while ((root + 1) * (root + 1) <= p) ++root;
    const AlltoallvAlgo want = stats.max_bytes <= 8 ? AlltoallvAlgo::TwoStage
                               : root * root == p    ? AlltoallvAlgo::Mesh
                                                     : choose_alltoallv(AlltoallvAlgo::Auto, p);
    EXPECT_EQ(ran, want) << choose_alltoallv(AlltoallvAlgo::Auto, stats, comm).reason;
  }
  alltoallv<std::uint64_t>(send, sc, sd, ref, rc, rd, comm, AlltoallvAlgo::Native);
  EXPECT_EQ(recv, ref);
}

// Registered separately with LIBCOMM_TUNING=tests/mpi/data/auto_env.tune.
TEST_F(MpiTest, AutoEnvTableIsLoaded) {
  const char* path = std::getenv("LIBCOMM_TUNING");
  ASSERT_NE(path, nullptr) << "this test runs with LIBCOMM_TUNING set (see CMakeLists.txt)";
  const auto table = active_tuning_table();
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->source(), path);
  const auto c = choose_alltoall(AlltoallAlgo::Auto, 1000, world());
  EXPECT_EQ(c.algo, AlltoallAlgo::Factor) << c.reason;
  EXPECT_TRUE(contains(c.reason, "line 3")) << c.reason;
  EXPECT_EQ(alltoall_auto(1000), AlltoallAlgo::Factor);
}

}  // namespace
