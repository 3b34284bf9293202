// Algorithm names and the size-based / fallback choice of the all-to-all dispatcher.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "error_helpers.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/cost_params.hpp"
#include "libcomm/error.hpp"

namespace libcomm {
namespace {

using testing::contains;
using testing::error_of;

// Auto without a Comm is the cost model on one rank per node (libcomm/cost_params.hpp):
// log P rounds where start-ups dominate (never a P - 1 step algorithm there), one
// exchange per peer where bytes dominate (never Bruck's P/2 log P blocks), and a reason that
// names the prediction.
TEST(AlltoallChoice, AutoIsTheCostModelsCheapest) {
  CostParams c;
  c.alpha = 5e-6, c.beta = 1e-9, c.overhead = 0.5e-6, c.copy = 2e-10;
  set_cost_params(c);
  const std::set<AlltoallAlgo> p_minus_one = {AlltoallAlgo::Linear, AlltoallAlgo::Ring, AlltoallAlgo::RingSendrecv,
                                              AlltoallAlgo::Pairwise, AlltoallAlgo::Factor,
                                              AlltoallAlgo::FactorGrouped};
  for (int p : {64, 100, 256}) {
    const auto small = choose_alltoall(AlltoallAlgo::Auto, 8, p);
    EXPECT_FALSE(p_minus_one.count(small.algo)) << "P = " << p << ": " << small.reason();
    EXPECT_TRUE(contains(small.reason(), "auto (model)")) << small.reason();
    EXPECT_TRUE(contains(small.reason(), "predicted")) << small.reason();
    const auto large = choose_alltoall(AlltoallAlgo::Auto, 1 << 20, p);
    EXPECT_NE(large.algo, AlltoallAlgo::Bruck) << "P = " << p << ": " << large.reason();
  }
  // The hierarchical schemes are no candidates on one rank per node (nothing to aggregate).
  for (int p : {1, 2, 3, 8})
    for (std::size_t b : {8, 4096, 1 << 20})
      EXPECT_FALSE(is_hierarchical(choose_alltoall(AlltoallAlgo::Auto, b, p).algo)) << p << " " << b;
  set_cost_params(CostParams{});
}

TEST(AlltoallChoice, PairwiseFallsBackOnlyWhenAllowed) {
  AlltoallOptions fallback, strict;
  strict.allow_fallback = false;
  const auto c = choose_alltoall(AlltoallAlgo::Pairwise, 1024, 6, fallback);
  EXPECT_EQ(c.algo, AlltoallAlgo::RingSendrecv);
  EXPECT_TRUE(contains(c.reason(), "power")) << c.reason();
  const std::string msg = error_of([&] { choose_alltoall(AlltoallAlgo::Pairwise, 1024, 6, strict); });
  EXPECT_TRUE(contains(msg, "power")) << "'" << msg << "'";
  EXPECT_TRUE(contains(msg, "P = 6")) << msg;
  for (int p : {1, 2, 4, 8, 64}) {
    EXPECT_EQ(choose_alltoall(AlltoallAlgo::Pairwise, 8, p, strict).algo, AlltoallAlgo::Pairwise);
    EXPECT_EQ(choose_alltoall(AlltoallAlgo::Pairwise, 8, p, fallback).algo, AlltoallAlgo::Pairwise);
  }
}

TEST(AlltoallChoice, FactorGroupedFallsBackToFactorOnOddP) {
  AlltoallOptions strict;
  strict.allow_fallback = false;
  EXPECT_EQ(choose_alltoall(AlltoallAlgo::FactorGrouped, 8, 5).algo, AlltoallAlgo::Factor);
  EXPECT_EQ(choose_alltoall(AlltoallAlgo::FactorGrouped, 8, 6).algo, AlltoallAlgo::FactorGrouped);
  EXPECT_EQ(choose_alltoall(AlltoallAlgo::FactorGrouped, 8, 6, strict).algo,
            AlltoallAlgo::FactorGrouped);
  const std::string msg =
      error_of([&] { choose_alltoall(AlltoallAlgo::FactorGrouped, 8, 5, strict); });
  EXPECT_TRUE(contains(msg, "even")) << "'" << msg << "'";
}

TEST(AlltoallChoice, OtherAlgorithmsRunAsRequested) {
  for (const auto& info : alltoall_algorithms()) {
    if (info.algo == AlltoallAlgo::Auto || info.algo == AlltoallAlgo::Pairwise ||
        info.algo == AlltoallAlgo::FactorGrouped)
      continue;
    for (int p : {1, 3, 7, 8})
      EXPECT_EQ(choose_alltoall(info.algo, 100, p).algo, info.algo) << info.name << " P=" << p;
  }
}

TEST(AlltoallNames, EveryNameRoundTrips) {
  std::set<std::string> names;
  std::set<AlltoallAlgo> algos;
  for (const auto& info : alltoall_algorithms()) {
    EXPECT_FALSE(info.name.empty());
    EXPECT_FALSE(info.summary.empty()) << info.name;
    EXPECT_EQ(alltoall_algo_from_name(info.name), info.algo) << info.name;
    EXPECT_EQ(alltoall_algo_name(info.algo), info.name);
    EXPECT_TRUE(names.insert(std::string(info.name)).second) << "duplicate name " << info.name;
    EXPECT_TRUE(algos.insert(info.algo).second) << "duplicate entry for " << info.name;
  }
  // The names DESIGN.md and the command line rely on.
  for (const char* n : {"auto", "native", "linear", "ring", "ring_sendrecv", "pairwise", "factor",
                        "factor_grouped", "bruck"})
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(AlltoallNames, UnknownNameListsTheValidOnes) {
  for (const char* bad : {"nosuch", "", "Factor", "ring ", "pairwise,ring"}) {
    const std::string msg = error_of([&] { alltoall_algo_from_name(bad); });
    ASSERT_FALSE(msg.empty()) << "'" << bad << "' was accepted";
    EXPECT_TRUE(contains(msg, "'" + std::string(bad) + "'")) << msg;
    for (const auto& info : alltoall_algorithms())
      EXPECT_TRUE(contains(msg, std::string(info.name))) << msg << " misses " << info.name;
  }
}

TEST(AlltoallNames, FromEnvironment) {
  ::unsetenv("LIBCOMM_ALLTOALL");
  EXPECT_EQ(alltoall_algo_from_env(), AlltoallAlgo::Auto);
  EXPECT_EQ(alltoall_algo_from_env(AlltoallAlgo::Bruck), AlltoallAlgo::Bruck);
  ::setenv("LIBCOMM_ALLTOALL", "factor", 1);
  EXPECT_EQ(alltoall_algo_from_env(), AlltoallAlgo::Factor);
  ::setenv("LIBCOMM_ALLTOALL", "", 1);
  EXPECT_EQ(alltoall_algo_from_env(AlltoallAlgo::Ring), AlltoallAlgo::Ring);
  ::setenv("LIBCOMM_ALLTOALL", "bogus", 1);
  const std::string msg = error_of([] { alltoall_algo_from_env(); });
  EXPECT_TRUE(contains(msg, "LIBCOMM_ALLTOALL")) << msg;
  EXPECT_TRUE(contains(msg, "bogus")) << msg;
  ::unsetenv("LIBCOMM_ALLTOALL");
}

TEST(AlltoallNames, HierarchicalFlag) {
  for (AlltoallAlgo a : {AlltoallAlgo::ClusteredFactor, AlltoallAlgo::ClusteredFactorFill,
                         AlltoallAlgo::Leader, AlltoallAlgo::SendAggregate,
                         AlltoallAlgo::RecvDistribute})
    EXPECT_TRUE(is_hierarchical(a)) << alltoall_algo_name(a);
  for (AlltoallAlgo a : {AlltoallAlgo::Auto, AlltoallAlgo::Native, AlltoallAlgo::Linear,
                         AlltoallAlgo::Ring, AlltoallAlgo::RingSendrecv, AlltoallAlgo::Pairwise,
                         AlltoallAlgo::Factor, AlltoallAlgo::FactorGrouped, AlltoallAlgo::Bruck})
    EXPECT_FALSE(is_hierarchical(a)) << alltoall_algo_name(a);
}

}  // namespace
}  // namespace libcomm
