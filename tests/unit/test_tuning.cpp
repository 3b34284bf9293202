// Tuning tables (libcomm/tuning.hpp): the parser and its line-numbered errors, and the
// lookup Auto relies on (nearest rank count and node shape, size ranges, no row).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "error_helpers.hpp"
#include "libcomm/tuning.hpp"

namespace libcomm {
namespace {

using testing::contains;
using testing::error_of;

TuningTable parse(const std::string& text) {
  std::istringstream in(text);
  return TuningTable::parse(in, "t.tune");
}

// Two shapes of the all-to-all (8 flat ranks and 64 ranks at 8 per node), two spreads of
// alltoallv, one tree row.
const char* const kTable = R"(# comment line
alltoall   8   1  0     256   bruck     # medians as comments
alltoall   8   1  257   32K   ring
alltoall   8   1  32769 inf   pairwise

alltoall   64  8  0     1K    factor
alltoall   64  8  1025  inf   send_aggregate
alltoall   64  1  0     inf   tree_scheduled topology=tree
alltoallv  16  1  0     inf   four_stage spread=8
alltoallv  16  1  0     inf   direct spread=1.5
allgather  4   1  0     4MiB  d_cycles
reduce_scatter 4 1 0    inf   reduce_spread
)";

TEST(TuningTable, ParsesRowsWithLineNumbers) {
  const auto t = parse(kTable);
  ASSERT_EQ(t.rows().size(), 10u);
  const auto& r = t.rows()[1];
  EXPECT_EQ(r.op, "alltoall");
  EXPECT_EQ(r.ranks, 8);
  EXPECT_EQ(r.from, 257u);
  EXPECT_EQ(r.to, 32u * 1024);
  EXPECT_EQ(r.algo, "ring");
  EXPECT_EQ(r.line, 3);
  EXPECT_EQ(t.rows()[2].to, ~std::uint64_t{0});  // inf
  EXPECT_TRUE(t.rows()[5].topology);
  EXPECT_DOUBLE_EQ(t.rows()[6].spread, 8.0);
  EXPECT_EQ(t.rows()[8].to, 4u << 20);
  EXPECT_EQ(t.source(), "t.tune");
}

TEST(TuningTable, ErrorsNameTheLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\nalltoall 8 1 0 10\n", "t.tune:2: expected OP RANKS PPN FROM TO ALGORITHM"},
      {"gather 8 1 0 10 ring\n", "t.tune:1: unknown operation 'gather'"},
      {"#\n#\nalltoall x 1 0 10 ring\n", "t.tune:3: RANKS must be a positive integer, got 'x'"},
      {"alltoall 8 0 0 10 ring\n", "t.tune:1: PPN must be a positive integer"},
      {"alltoall 8 1 0 10Q ring\n", "t.tune:1: FROM and TO must be byte counts"},
      {"alltoall 8 1 -5 10 ring\n", "t.tune:1: FROM and TO must be byte counts"},
      {"alltoall 8 1 100 10 ring\n", "t.tune:1: FROM 100 is larger than TO 10"},
      {"alltoall 8 1 0 10 fastest\n", "t.tune:1: unknown all-to-all algorithm 'fastest'"},
      {"allgather 8 1 0 10 bruck\n", "t.tune:1: unknown allgather algorithm 'bruck'"},
      {"alltoall 8 1 0 10 auto\n", "t.tune:1: 'auto' cannot be a table entry"},
      {"alltoallv 8 1 0 10 direct spread=0.5\n", "t.tune:1: spread must be a number >= 1"},
      {"alltoall 8 1 0 10 ring colour=red\n", "t.tune:1: unknown field 'colour=red'"},
      {"alltoall 8 1 0 100 ring\nalltoall 8 1 50 200 bruck\n",
       "t.tune:2: size range overlaps line 1"},
  };
  for (const auto& c : cases) {  // no structured bindings: clang 14 cannot capture them
    const auto& [text, want] = c;
    const std::string msg = error_of([&c] { parse(c.first); });
    EXPECT_TRUE(contains(msg, want)) << "table:\n" << text << "message: " << msg;
  }
  EXPECT_TRUE(contains(error_of([] { TuningTable::load("/nonexistent/x.tune"); }),
                       "cannot read '/nonexistent/x.tune'"));
}

TuningQuery query(const std::string& op, int ranks, int ppn, std::uint64_t bytes) {
  TuningQuery q;
  q.op = op;
  q.ranks = ranks;
  q.ppn = ppn;
  q.bytes = bytes;
  return q;
}

std::string algo_of(const TuningTable& t, const TuningQuery& q) {
  const auto pick = t.lookup(q);
  return pick ? pick->algo : "<none>";
}

TEST(TuningTable, SizeRangesAreInclusive) {
  const auto t = parse(kTable);
  EXPECT_EQ(algo_of(t, query("alltoall", 8, 1, 0)), "bruck");
  EXPECT_EQ(algo_of(t, query("alltoall", 8, 1, 256)), "bruck");
  EXPECT_EQ(algo_of(t, query("alltoall", 8, 1, 257)), "ring");
  EXPECT_EQ(algo_of(t, query("alltoall", 8, 1, 32768)), "ring");
  EXPECT_EQ(algo_of(t, query("alltoall", 8, 1, 32769)), "pairwise");
  EXPECT_EQ(algo_of(t, query("alltoall", 8, 1, std::uint64_t{1} << 40)), "pairwise");
  const auto pick = t.lookup(query("alltoall", 8, 1, 300));
  ASSERT_TRUE(pick);
  EXPECT_TRUE(contains(pick->reason, "t.tune line 3")) << pick->reason;
  EXPECT_TRUE(contains(pick->reason, "257..32768 B")) << pick->reason;
}

TEST(TuningTable, NearestRankCountThenNodeShape) {
  const auto t = parse(kTable);
  // 10 ranks: 8 is nearer than 64 (log scale); the reason says it is a neighbour's row.
  EXPECT_EQ(algo_of(t, query("alltoall", 10, 1, 100)), "bruck");
  EXPECT_TRUE(contains(t.lookup(query("alltoall", 10, 1, 100))->reason, "nearest to P = 10"));
  // 40 ranks at 8 per node: 64 is nearer than 8 (40/8 = 5 > 64/40 = 1.6).
  EXPECT_EQ(algo_of(t, query("alltoall", 40, 8, 100)), "factor");
  EXPECT_EQ(algo_of(t, query("alltoall", 40, 8, 4096)), "send_aggregate");
  // 64 ranks, 4 per node: ppn 8 (distance log 2) beats ppn 1 (log 4).
  EXPECT_EQ(algo_of(t, query("alltoall", 64, 4, 100)), "factor");
  // 64 ranks, 1 per node: without a tree the flat shape ppn 1 still wins on ppn distance.
  EXPECT_EQ(algo_of(t, query("alltoall", 64, 1, 100)), "tree_scheduled");
  // P = 16: 8 is at distance log 2, 64 at log 4.
  EXPECT_EQ(algo_of(t, query("alltoall", 16, 1, 100)), "bruck");
}

TEST(TuningTable, OneRankPerNodeAndMultiRankNodesDoNotMix) {
  // Only multi-rank shapes: a call with one rank per node (the leaders' communicator of a
  // hierarchical scheme) finds no row, and the built-in rule decides.
  const auto multi = parse("alltoall 64 8 0 inf leader\n");
  EXPECT_FALSE(multi.lookup(query("alltoall", 8, 1, 100)));
  EXPECT_EQ(algo_of(multi, query("alltoall", 8, 2, 100)), "leader");
  // Only flat shapes: a call on nodes of several ranks finds none either.
  const auto flat = parse("alltoall 64 1 0 inf linear\n");
  EXPECT_FALSE(flat.lookup(query("alltoall", 64, 8, 100)));
  EXPECT_EQ(algo_of(flat, query("alltoall", 8, 1, 100)), "linear");
  // kTable has both: 64 ranks at 8 per node take the 8-rank flat shape no more.
  EXPECT_EQ(algo_of(parse(kTable), query("alltoall", 8, 8, 100)), "factor");
}

TEST(TuningTable, TopologyAndSpreadSelectTheShape) {
  const auto t = parse(kTable);
  auto q = query("alltoall", 64, 1, 100);
  q.topology = true;
  EXPECT_EQ(algo_of(t, q), "tree_scheduled");
  auto v = query("alltoallv", 16, 1, 1000);
  v.spread = 10;
  EXPECT_EQ(algo_of(t, v), "four_stage");
  v.spread = 1.0;
  EXPECT_EQ(algo_of(t, v), "direct");
  v.spread = 3.0;  // log 2 from 1.5, log 2.67 from 8
  EXPECT_EQ(algo_of(t, v), "direct");
}

TEST(TuningTable, NoRowMeansFallback) {
  const auto t = parse(kTable);
  // An operation without rows, and a size beyond the nearest shape's ranges.
  EXPECT_FALSE(parse("alltoall 8 1 0 inf ring\n").lookup(query("allgather", 8, 1, 8)));
  EXPECT_FALSE(t.lookup(query("allgather", 4, 1, (4u << 20) + 1)));
  EXPECT_EQ(algo_of(t, query("allgather", 4, 1, 4u << 20)), "d_cycles");
  EXPECT_FALSE(parse("").lookup(query("alltoall", 2, 1, 8)));
}

// apps/tune's size ranges: boundaries where the interpolated times of the measured
// algorithms cross, not halfway between the measured sizes.
std::string ranges_of(const std::vector<TunedRange>& r) {
  std::string out;
  for (const auto& x : r)
    out += std::to_string(x.from) + ".." + (x.to == UINT64_MAX ? "inf" : std::to_string(x.to)) +
           ":" + std::to_string(x.algo) + " ";
  return out;
}
constexpr double kDidNotRun = std::numeric_limits<double>::quiet_NaN();

TEST(TunedRanges, BoundaryWhereTheLinesCross) {
  // A: 10 -> 30, B: 20 -> 25 between 1000 and 2000 bytes; equal at 1666.7 (the geometric
  // midpoint would be 1414).
  EXPECT_EQ(ranges_of(tuned_ranges({1000, 2000}, {{10, 30}, {20, 25}})), "0..1666:0 1667..inf:1 ");
  // The same winner at every size: one range.
  EXPECT_EQ(ranges_of(tuned_ranges({8, 16, 32}, {{1, 2, 3}, {2, 3, 4}})), "0..inf:0 ");
}

TEST(TunedRanges, AnAlgorithmCanWinOnlyBetweenMeasuredSizes) {
  // A falls behind, B catches up, C is flat and lowest in the middle.
  EXPECT_EQ(ranges_of(tuned_ranges({100, 200}, {{1, 5}, {5, 1}, {2.5, 2.5}})),
            "0..137:0 138..162:2 163..inf:1 ");
  // Several intervals; the crossing is in the first.
  EXPECT_EQ(ranges_of(tuned_ranges({100, 200, 400}, {{1, 3, 9}, {2, 2.5, 5}})),
            "0..166:0 167..inf:1 ");
}

TEST(TunedRanges, MissingMeasurementsAndTies) {
  // A did not run at 16: no line for it, so the switch is halfway (geometrically).
  EXPECT_EQ(ranges_of(tuned_ranges({8, 16}, {{1, kDidNotRun}, {2, 3}})), "0..11:0 12..inf:1 ");
  // A tie at a measured size goes to the lower index there.
  EXPECT_EQ(ranges_of(tuned_ranges({8, 16}, {{1, 3}, {2, 3}})), "0..inf:0 ");
  EXPECT_EQ(ranges_of(tuned_ranges({8, 16}, {{2, 3}, {1, 3}})), "0..15:1 16..inf:0 ");
}

TEST(TunedRanges, ErrorsNameTheProblem) {
  EXPECT_TRUE(contains(error_of([] {
                         tuned_ranges({16, 8}, {{1, 2}});
                       }),
                       "sizes must increase (16 then 8)"));
  EXPECT_TRUE(contains(error_of([] {
                         tuned_ranges({8, 16}, {{1, kDidNotRun}});
                       }),
                       "no algorithm ran at 16 bytes"));
  EXPECT_TRUE(contains(error_of([] {
                         tuned_ranges({8, 16}, {{1}});
                       }),
                       "algorithm 0 has 1 times for 2 sizes"));
  EXPECT_TRUE(contains(error_of([] { tuned_ranges({}, {}); }), "no sizes"));
}

// tune prints this winner beside every measured size; the table's ranges start from it.
TEST(FastestAtEachSize, SkipsWhatDidNotRunAndTiesToTheLowerIndex) {
  EXPECT_EQ(fastest_at_each_size("t", {8, 16, 32}, {{1, kDidNotRun, 5}, {2, 3, 5}, {0.5, 4, 6}}),
            (std::vector<std::size_t>{2, 1, 0}));
  EXPECT_TRUE(contains(error_of([] {
                         fastest_at_each_size("alltoall", {8, 16}, {{1, kDidNotRun}});
                       }),
                       "alltoall: no algorithm ran at 16 bytes"));
  EXPECT_TRUE(contains(error_of([] { fastest_at_each_size("alltoall", {8}, {}); }),
                       "alltoall: no sizes or no algorithms"));
}

TEST(RefinementSizes, MidpointsWhereTheWinnerChanges) {
  // Winners A, A, B, A: midpoints of (2K, 4K) and (4K, 8K), multiples of 8 (sqrt(8M) = 2896.3).
  EXPECT_EQ(refinement_sizes({1024, 2048, 4096, 8192}, {{1, 2, 9, 4}, {5, 6, 3, 8}}),
            (std::vector<std::uint64_t>{2896, 5792}));
  // The same winner everywhere: nothing to refine.
  EXPECT_TRUE(refinement_sizes({8, 64, 512}, {{1, 2, 3}, {2, 3, 4}}).empty());
  // No multiple of 8 strictly between 8 and 16, nor between 1000 and 1006.
  EXPECT_TRUE(refinement_sizes({8, 16}, {{1, 3}, {2, 2}}).empty());
  EXPECT_TRUE(refinement_sizes({1000, 1006}, {{1, 3}, {2, 2}}).empty());
  // A did not run at the larger size, so B wins there. sqrt(16 * 32) = 22.6 rounds down
  // to 16, not strictly inside; sqrt(16 * 64) = 32 is.
  EXPECT_TRUE(refinement_sizes({16, 32}, {{1, kDidNotRun}, {2, 3}}).empty());
  EXPECT_EQ(refinement_sizes({16, 64}, {{1, kDidNotRun}, {2, 3}}),
            (std::vector<std::uint64_t>{32}));
}

TEST(RefinementSizes, ErrorsNameTheFunction) {
  EXPECT_TRUE(contains(error_of([] {
                         refinement_sizes({16, 8}, {{1, 2}});
                       }),
                       "refinement_sizes: sizes must increase (16 then 8)"));
  EXPECT_TRUE(contains(error_of([] { refinement_sizes({8}, {{kDidNotRun}}); }),
                       "refinement_sizes: no algorithm ran at 8 bytes"));
}

}  // namespace
}  // namespace libcomm
