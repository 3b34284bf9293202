// Auto under MPI with each of its policies (libcomm/auto_policy.hpp). table: every
// operation runs the tuning table's algorithm where a row applies, the model's choice where
// none does or where the row's algorithm cannot run here. online: the candidates are
// measured on the first calls, every rank agrees on one winner (whatever each measured),
// a slowed algorithm is avoided, and what it learned reads back as a tuning table. Every
// call stays byte-exact (compared with the expected data and the MPI library's collective).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "choice/driver.hpp"
#include "libcomm/libcomm.hpp"
#include "libcomm/topology.hpp"
#include "mpi_test.hpp"

namespace {

using namespace libcomm;
using mpitest::MpiTest;
using mpitest::world;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Sets the Auto policy for a scope; the environment's (or the default) again after it.
struct ScopedPolicy {
  explicit ScopedPolicy(AutoPolicy p) { set_auto_policy(p); }
  ~ScopedPolicy() { reset_auto_policy(); }
};

// Makes `text` (whole rows) the active table; restores "no table" when it goes out of scope.
struct ScopedTableText {
  explicit ScopedTableText(const std::string& text) {
    std::istringstream in(text);
    set_tuning_table(std::make_shared<const TuningTable>(TuningTable::parse(in, "test.tune")));
  }
  ~ScopedTableText() { set_tuning_table(nullptr); }
};

// What the model policy picks for an all-to-all of b bytes on comm.
AlltoallAlgo model_pick(std::size_t b, const Comm& comm = world(), const AlltoallOptions& opts = {}) {
  set_auto_policy(AutoPolicy::Model);
  const AlltoallAlgo a = choose_alltoall(AlltoallAlgo::Auto, b, comm, opts).algo;
  set_auto_policy(AutoPolicy::Table);
  return a;
}

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

class AutoTable : public MpiTest {
 protected:
  void SetUp() override { set_auto_policy(AutoPolicy::Table); }
  void TearDown() override { reset_auto_policy(); }
};

TEST_F(AutoTable, AlltoallFollowsTheSizeRanges) {
  ScopedTable table({"alltoall 0 100 factor", "alltoall 101 10000 linear"});
  EXPECT_EQ(alltoall_auto(8), AlltoallAlgo::Factor);
  EXPECT_EQ(alltoall_auto(100), AlltoallAlgo::Factor);
  EXPECT_EQ(alltoall_auto(101), AlltoallAlgo::Linear);
  EXPECT_EQ(alltoall_auto(10000), AlltoallAlgo::Linear);
  const auto c = choose_alltoall(AlltoallAlgo::Auto, 500, world());
  EXPECT_TRUE(contains(c.reason(), "test.tune line 2")) << c.reason();
  // Beyond the table: the model, and the reason says so.
  const auto rule = choose_alltoall(AlltoallAlgo::Auto, 20000, world());
  EXPECT_EQ(rule.algo, model_pick(20000));
  EXPECT_TRUE(contains(rule.reason(), "auto (model)")) << rule.reason();
  EXPECT_TRUE(contains(rule.reason(), "no tuning table row")) << rule.reason();
  EXPECT_EQ(alltoall_auto(20000), model_pick(20000));
}

TEST_F(AutoTable, AlltoallRowThatCannotRunHere) {
  {
    // pairwise needs a power of two: elsewhere the table's row cannot run, and the model
    // decides (saying why).
    ScopedTable table({"alltoall 0 inf pairwise"});
    const auto c = choose_alltoall(AlltoallAlgo::Auto, 64, world());
    if (power_of_two(world().size())) {
      EXPECT_EQ(c.algo, AlltoallAlgo::Pairwise) << c.reason();
      EXPECT_TRUE(contains(c.reason(), "auto (table): pairwise from tuning table test.tune line 1")) << c.reason();
    } else {
      EXPECT_EQ(c.algo, model_pick(64)) << c.reason();
      EXPECT_TRUE(contains(c.reason(), "the table's pairwise cannot run here")) << c.reason();
    }
    alltoall_auto(64);
  }
  {
    // A paper 002 scheme aggregates only where a node holds several ranks: on one rank per
    // node the model decides instead, and no scheme recurses into itself.
    ScopedTableText table("alltoall " + std::to_string(world().size()) + " 1 0 inf send_aggregate\n");
    DupComm dup;
    const Comm flat(dup.comm, "flat");
    const auto c = choose_alltoall(AlltoallAlgo::Auto, 64, flat);
    if (world().size() > 1) {
      EXPECT_EQ(c.algo, model_pick(64, flat)) << c.reason();
      EXPECT_TRUE(contains(c.reason(), "the table's send_aggregate cannot run here")) << c.reason();
    }
    EXPECT_EQ(alltoall_auto(64, flat), c.algo);
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
    // d_cycles needs a binary cube: elsewhere the model decides.
    if (power_of_two(p)) EXPECT_EQ(ran, AllgatherAlgo::DCycles);
    else EXPECT_TRUE(contains(ran.reason(), "auto (model)")) << ran.reason();
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
    // The decision keys on the longest message of the whole call (the statistics, agreed on
    // once per site): a site of its own for this table.
    ScopedTable table({"alltoallv 0 8 two_stage", "alltoallv 9 inf mesh"});
    AlltoallvOptions site;
    site.site = 7;
    const auto ran = alltoallv<std::uint64_t>(send, sc, sd, recv, rc, rd, comm, AlltoallvAlgo::Auto, site);
    int root = 0;
    while ((root + 1) * (root + 1) <= p) ++root;
    if (stats.max_bytes <= 8) EXPECT_EQ(ran, AlltoallvAlgo::TwoStage) << ran.reason();
    else if (root * root == p) EXPECT_EQ(ran, AlltoallvAlgo::Mesh) << ran.reason();
    else EXPECT_TRUE(contains(ran.reason(), "the table's mesh cannot run here")) << ran.reason();
    // Later calls of the site run the same without asking again.
    EXPECT_EQ(alltoallv<std::uint64_t>(send, sc, sd, recv, rc, rd, comm, AlltoallvAlgo::Auto, site).algo, ran.algo);
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
  EXPECT_EQ(alltoall_auto(64, pairs, hierarchical_inter), model_pick(64, pairs, hierarchical_inter));
  EXPECT_NE(alltoall_auto(64, pairs, hierarchical_inter), AlltoallAlgo::SendAggregate);
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
  EXPECT_EQ(alltoall_auto(64), model_pick(64));  // no table: the model
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
  const ScopedPolicy policy(AutoPolicy::Table);
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
  const ScopedPolicy model(AutoPolicy::Model);
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

namespace {

// ---- online (STAR-MPI) --------------------------------------------------------------------

class AutoOnline : public MpiTest {
 protected:
  void SetUp() override { set_auto_policy(AutoPolicy::Online); }
  void TearDown() override {
    detail::set_test_slowdown("");
    reset_auto_policy();
    set_tuning_table(nullptr);
  }
};

// Online is still at its start: native for its first calls, then measuring the candidates.
bool measuring(const AlltoallChoice& c) {
  return contains(c.reason(), "measuring") || contains(c.reason(), "native for the first");
}

// Calls Auto on comm (checking every result) until the site of b-byte blocks has settled;
// returns the first settled call's choice.
AlltoallChoice settle_alltoall(std::size_t b, const Comm& comm, int* calls = nullptr) {
  for (int k = 1; k <= 400; ++k) {
    const auto p = static_cast<std::size_t>(comm.size());
    std::vector<std::byte> send(b * p), recv(b * p, std::byte{0xA5});
    for (std::size_t d = 0; d < p; ++d) apps::fill_pattern(send.data() + d * b, comm.rank(), static_cast<int>(d), b);
    const AlltoallChoice c = alltoall(send.data(), recv.data(), b, comm, AlltoallAlgo::Auto);
    for (std::size_t s = 0; s < p; ++s)
      EXPECT_EQ(apps::check_pattern(recv.data() + s * b, static_cast<int>(s), comm.rank(), b), b)
          << alltoall_algo_name(c) << " (" << c.reason() << "), block from rank " << s;
    if (!measuring(c)) {
      if (calls != nullptr) *calls = k;
      return c;
    }
  }
  ADD_FAILURE() << "online never settled";
  return {};
}

// The same algorithm on every rank of comm.
bool same_on_every_rank(int algo, const Comm& comm) {
  int lo = algo, hi = algo;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, comm.mpi());
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, comm.mpi());
  return lo == hi;
}

TEST_F(AutoOnline, MeasuresTheCandidatesThenEveryRankRunsOneWinner) {
  DupComm dup;
  const Comm comm(dup.comm);
  int calls = 0;
  const AlltoallChoice won = settle_alltoall(256, comm, &calls);
  if (comm.size() == 1) {  // nothing to measure (OneRankRunsNativeWithoutMeasuring)
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(won.algo, AlltoallAlgo::Native) << won.reason();
    return;
  }
  EXPECT_TRUE(contains(won.reason(), "auto (online):")) << won.reason();
  EXPECT_TRUE(contains(won.reason(), "measured fastest") || contains(won.reason(), "native kept")) << won.reason();
  EXPECT_GT(calls, 16 + 3) << "native for 16 calls, then at least native measured 3 times";
  EXPECT_TRUE(same_on_every_rank(static_cast<int>(won.algo), comm));
  // No more measuring: the winner, with its reason, on every later call of the class.
  for (int k = 0; k < 3; ++k) {
    const AlltoallChoice again = settle_alltoall(256, comm);
    EXPECT_EQ(again.algo, won.algo);
    EXPECT_EQ(again.reason(), won.reason());
  }
  // The candidates that lost gave back their plans: only the winner's is kept (none for
  // native, which runs the MPI library's collective).
  EXPECT_EQ(comm.cached_plan_count(), won.algo == AlltoallAlgo::Native ? 0U : 1U) << won.reason();
  // Another size class measures afresh.
  std::vector<std::byte> s(4096 * comm.size()), r(4096 * comm.size());
  EXPECT_TRUE(measuring(alltoall(s.data(), r.data(), 4096, comm, AlltoallAlgo::Auto)));
}
// A communicator of one rank has nothing to measure: online runs native from its first call.
TEST_F(AutoOnline, OneRankRunsNativeWithoutMeasuring) {
  const Comm self(MPI_COMM_SELF);
  std::vector<std::byte> send(64, std::byte{7}), recv(64);
  const AlltoallChoice c = alltoall(send.data(), recv.data(), 64, self, AlltoallAlgo::Auto);
  EXPECT_EQ(c.algo, AlltoallAlgo::Native) << c.reason();
  EXPECT_FALSE(c.measuring()) << c.reason();
  EXPECT_TRUE(contains(c.reason(), "one rank")) << c.reason();
  EXPECT_EQ(recv, send);
}

// Decisions on small sizes (calls of microseconds, where jitter is as large as what is
// measured) time each candidate four times as often, unless LIBCOMM_ONLINE_REPS says.
TEST_F(AutoOnline, SmallDecisionsTimeEachCandidateMoreOften) {
  const char* set = std::getenv("LIBCOMM_ONLINE_REPS");
  const int reps = detail::online_reps();
  const bool fixed = set != nullptr && *set != '\0';
  EXPECT_EQ(detail::online_reps_for(detail::kSmallDecisionBytes), fixed ? reps : 4 * reps);
  EXPECT_EQ(detail::online_reps_for(0), fixed ? reps : 4 * reps);
  EXPECT_EQ(detail::online_reps_for(detail::kSmallDecisionBytes + 1), reps);
}

// A candidate's first call builds its plan, windows and sub-communicators: online does not
// time it. Here the second candidate's first call is slow (cold) and its timed one fast;
// it must win, and the site must take one untimed and one timed call per candidate.
TEST_F(AutoOnline, ACandidatesFirstCallIsNotTimed) {
  std::vector<detail::Candidate> candidates{{0, "native"}, {1, "other"}};
  detail::OnlineSite site(candidates, /*reps=*/1, /*wait=*/0, /*native=*/0);
  EXPECT_EQ(site.calls_needed(), 4);
  EXPECT_FALSE(site.record(1e-3));  // native, untimed
  EXPECT_FALSE(site.record(1.0));   // other, untimed: cold
  EXPECT_FALSE(site.record(1e-3));  // native, timed
  EXPECT_TRUE(site.record(0.5e-3));  // other, timed
  site.agree(world().mpi());
  EXPECT_EQ(site.winner(), 1) << site.reason();
  EXPECT_TRUE(contains(site.reason(), "after one untimed")) << site.reason();
  // 1 % faster than native is within the margin (3 %): native keeps the site, and says why.
  detail::OnlineSite close(candidates, 1, 0, 0);
  for (double t : {1e-3, 1e-3, 1e-3, 0.99e-3}) close.record(t);
  close.agree(world().mpi());
  EXPECT_EQ(close.winner(), 0) << close.reason();
  EXPECT_TRUE(contains(close.reason(), "native kept")) << close.reason();
}


// The test-only slowdown switch (LIBCOMM_TEST_SLOW, here set from the test): the algorithm
// online picked on one communicator, slowed by 20 ms per call, must lose on a second
// communicator of the same shape and size (the same candidates).
TEST_F(AutoOnline, AvoidsAnAlgorithmSlowedOnPurpose) {
  DupComm first_dup, second_dup;
  const Comm first(first_dup.comm), second(second_dup.comm);
  const AlltoallChoice fast = settle_alltoall(64, first);
  if (first.size() == 1) {  // one rank runs native, measured or not, slowed or not
    detail::set_test_slowdown("alltoall:native:0.02");
    EXPECT_EQ(settle_alltoall(64, second).algo, AlltoallAlgo::Native);
    return;
  }
  detail::set_test_slowdown("alltoall:" + std::string(alltoall_algo_name(fast)) + ":0.02");
  const AlltoallChoice slowed = settle_alltoall(64, second);
  EXPECT_NE(slowed.algo, fast.algo) << "online kept " << alltoall_algo_name(fast) << " although it was slowed: "
                                    << slowed.reason();
  EXPECT_TRUE(same_on_every_rank(static_cast<int>(slowed.algo), second));
}

// alltoallv decides per call site and the size class its ranks agree on, again every 64
// calls of the site: a site whose first 100 calls are small and whose next 100 are large
// must not keep the small calls' winner where it loses on the large ones (here: slowed by
// 30 ms a call there). The slowdowns are tens of ms so that 9 ranks on a busy 2-core
// machine, whose exchange of 8 B took 8 ms there, still rank them as meant.
TEST_F(AutoOnline, AlltoallvSiteDecidesAgainWhenItsSizesChange) {
  DupComm dup;
  const Comm comm(dup.comm);
  const int p = comm.size();
  if (p == 1) return;  // one rank runs native throughout (OneRankRunsNativeWithoutMeasuring)
  std::string slow_but_direct;
  for (const auto& info : alltoallv_algorithms())
    if (info.name != "direct" && info.name != "auto")
      slow_but_direct += (slow_but_direct.empty() ? "" : ",") + std::string("alltoallv:") + std::string(info.name) +
                         ":0.02";
  const auto run = [&](std::int64_t elements) {
    std::vector<std::int64_t> c(static_cast<std::size_t>(p), elements), d(static_cast<std::size_t>(p));
    for (int j = 0; j < p; ++j) d[static_cast<std::size_t>(j)] = j * elements;
    std::vector<std::uint64_t> send(static_cast<std::size_t>(p * elements)), recv(send.size()), ref(send.size());
    for (std::size_t k = 0; k < send.size(); ++k) send[k] = static_cast<std::uint64_t>(comm.rank()) << 32 | k;
    const auto ran = alltoallv<std::uint64_t>(send, c, d, recv, c, d, comm, AlltoallvAlgo::Auto);
    alltoallv<std::uint64_t>(send, c, d, ref, c, d, comm, AlltoallvAlgo::Native);
    EXPECT_EQ(recv, ref) << ran.reason();
    return ran;
  };
  detail::set_test_slowdown(slow_but_direct);
  AlltoallvChoice small;
  for (int k = 0; k < 100; ++k) small = run(1);  // 8 bytes a message
  EXPECT_EQ(small.algo, AlltoallvAlgo::Direct) << small.reason();
  detail::set_test_slowdown("alltoallv:direct:0.03");
  AlltoallvChoice large;
  for (int k = 0; k < 100; ++k) large = run(8192);  // 64 KiB a message
  EXPECT_FALSE(large.measuring()) << large.reason();
  EXPECT_NE(large.algo, AlltoallvAlgo::Direct) << "the small calls' winner kept: " << large.reason();
  EXPECT_TRUE(same_on_every_rank(static_cast<int>(large.algo), comm));
  // What online learned holds each class the site agreed on, with its own winner (the
  // winner is settled at a later call than the agreement, whose sizes are not agreed).
  const std::string path = "learned_alltoallv_test." + std::to_string(p) + ".tune";
  save_learned_tuning_table(path, comm);
  const TuningTable table = TuningTable::load(path);
  for (const auto& [bytes, won] : {std::pair<std::uint64_t, AlltoallvAlgo>{8, small.algo}, {65536, large.algo}}) {
    const auto pick = table.lookup(tuning_query("alltoallv", comm, bytes));
    ASSERT_TRUE(pick.has_value()) << bytes << " B not in the learned table";
    EXPECT_EQ(pick->algo, alltoallv_algo_name(won)) << bytes << " B: " << pick->reason;
  }
  MPI_Barrier(comm.mpi());
  if (comm.rank() == 0) std::remove(path.c_str());
}

// An alltoallv whose every count is zero on every rank (agreed at the site's first call)
// runs direct at once, which sends nothing: no warm-up, no measuring, no further collective.
TEST_F(AutoOnline, AlltoallvWithNothingToExchangeDecidesAtOnce) {
  DupComm dup;
  const Comm comm(dup.comm);
  const std::vector<std::int64_t> zero(static_cast<std::size_t>(comm.size()), 0);
  std::vector<std::byte> none(1);
  for (int k = 0; k < 3; ++k) {
    const auto c = alltoallv(none.data(), zero, zero, none.data(), zero, zero, comm, AlltoallvAlgo::Auto);
    EXPECT_EQ(c.algo, AlltoallvAlgo::Direct) << c.reason();
    EXPECT_FALSE(c.measuring()) << c.reason();
  }
}

// The site's agreement is made once, by the first mode to run; the other modes' decisions
// (each their own) still see that every count is zero: direct at once, under every policy
// (the model ran native there, 207 us on 16 simulated ranks, tests/sim/native_selector.sh).
TEST_F(AutoOnline, AlltoallvWithNothingToExchangeIsDirectInEveryModeAndPolicy) {
  for (const AutoPolicy policy : {AutoPolicy::Online, AutoPolicy::Model, AutoPolicy::Table}) {
    const ScopedPolicy scoped(policy);
    DupComm dup;
    const Comm comm(dup.comm);
    const std::vector<std::int64_t> none_counts(static_cast<std::size_t>(comm.size()), 0);
    std::vector<std::byte> none(1);
    for (const AlltoallvMode mode :
         {AlltoallvMode::Blocking, AlltoallvMode::NonblockingSingle, AlltoallvMode::NonblockingDual}) {
      AlltoallvOptions o;
      o.mode = mode;
      const auto c = alltoallv(none.data(), none_counts, none_counts, none.data(), none_counts, none_counts, comm,
                               AlltoallvAlgo::Auto, o);
      EXPECT_EQ(c.algo, AlltoallvAlgo::Direct) << auto_policy_name(policy) << ", mode "
                                               << alltoallv_mode_name(mode) << ": " << c.reason();
      EXPECT_FALSE(c.measuring()) << c.reason();
    }
  }
}

// Every rank measures a different favourite (rank r slows every algorithm but one of its
// own): the one reduction still gives every rank the same winner, and the bytes are right.
TEST_F(AutoOnline, RanksThatMeasureDifferentTimesStillRunOneAlgorithm) {
  DupComm dup;
  const Comm comm(dup.comm);
  const std::vector<std::string> favourites = {"native", "linear", "ring", "bruck", "ring_sendrecv"};
  const std::string mine = favourites[static_cast<std::size_t>(comm.rank()) % favourites.size()];
  std::string spec;
  for (const auto& info : alltoall_algorithms())
    if (info.name != mine && info.name != "auto")
      spec += (spec.empty() ? "" : ",") + std::string("alltoall:") + std::string(info.name) + ":0.005:" +
              std::to_string(world().rank());
  detail::set_test_slowdown(spec);
  const AlltoallChoice won = settle_alltoall(128, comm);
  EXPECT_TRUE(same_on_every_rank(static_cast<int>(won.algo), comm)) << won.reason();
  EXPECT_EQ(settle_alltoall(128, comm).algo, won.algo);
}

// What online learned is a tuning table: it parses, names the winners of the measured size
// classes for this shape, and a later run that loads it runs those winners at once.
TEST_F(AutoOnline, LearnedTableReadsBackAsATuningTable) {
  DupComm dup;
  const Comm comm(dup.comm);
  const AlltoallChoice small = settle_alltoall(8, comm);
  const AlltoallChoice large = settle_alltoall(1000, comm);
  const std::string path = "learned_auto_test." + std::to_string(comm.size()) + ".tune";
  save_learned_tuning_table(path, comm);
  const TuningTable table = TuningTable::load(path);
  if (comm.size() == 1) {  // one rank measured nothing, so it learned no row for its shape
    EXPECT_FALSE(table.lookup(tuning_query("alltoall", comm, 8)).has_value());
    return;
  }
  const auto shape = tuning_query("alltoall", comm, 8);
  for (const auto& [bytes, won] : {std::pair<std::uint64_t, AlltoallAlgo>{8, small.algo}, {1000, large.algo}}) {
    TuningQuery q = shape;
    q.bytes = bytes;
    const auto pick = table.lookup(q);
    ASSERT_TRUE(pick.has_value()) << bytes << " B not in the learned table";
    EXPECT_EQ(pick->algo, alltoall_algo_name(won)) << bytes << " B";
  }
  // A later run starting from it: no measuring, the learned winner at the first call.
  set_tuning_table(std::make_shared<const TuningTable>(table));
  DupComm again_dup;
  const Comm again(again_dup.comm);
  std::vector<std::byte> s(1000 * comm.size()), r(1000 * comm.size());
  const AlltoallChoice first = alltoall(s.data(), r.data(), 1000, again, AlltoallAlgo::Auto);
  EXPECT_EQ(first.algo, large.algo) << first.reason();
  EXPECT_TRUE(contains(first.reason(), "learned")) << first.reason();
  MPI_Barrier(comm.mpi());
  if (comm.rank() == 0) std::remove(path.c_str());
}

}  // namespace

namespace {

// Registered separately with LIBCOMM_TEST_SLOW=alltoall:native:0.02 (tests/mpi/CMakeLists.txt):
// the environment's form of the slowdown switch, on the MPI library's own collective.
TEST_F(MpiTest, AutoOnlineAvoidsNativeSlowedByTheEnvironment) {
  const char* slow = std::getenv("LIBCOMM_TEST_SLOW");
  ASSERT_NE(slow, nullptr) << "this test runs with LIBCOMM_TEST_SLOW set (see CMakeLists.txt)";
  const ScopedPolicy online(AutoPolicy::Online);
  DupComm dup;
  const Comm comm(dup.comm);
  const AlltoallChoice won = settle_alltoall(512, comm);
  EXPECT_NE(won.algo, AlltoallAlgo::Native) << won.reason();
  EXPECT_TRUE(same_on_every_rank(static_cast<int>(won.algo), comm));
}

}  // namespace
