// RankPlan: the part of a schedule one rank executes.
#include <gtest/gtest.h>

#include "libcomm/alltoall.hpp"
#include "libcomm/schedule.hpp"

namespace libcomm {
namespace {

TEST(RankPlan, SplitsSendsReceivesAndLocalCopies) {
  const int p = 5;
  const Schedule s = alltoall_schedule(AlltoallAlgo::Ring, p);
  for (int me = 0; me < p; ++me) {
    const RankPlan plan(s, me);
    EXPECT_EQ(plan.rank(), me);
    EXPECT_EQ(plan.nprocs(), p);
    EXPECT_TRUE(plan.single_ported());
    ASSERT_EQ(plan.steps().size(), static_cast<std::size_t>(p));
    // Step 0: the local copy only.
    const RankStep& first = plan.steps()[0];
    EXPECT_TRUE(first.sends.empty());
    EXPECT_TRUE(first.recvs.empty());
    ASSERT_EQ(first.local.size(), 1u);
    EXPECT_EQ(first.local[0], (Transfer{me, me, aapc_block(me, me, p)}));
    // Step j: send to me + j, receive from me - j.
    for (int j = 1; j < p; ++j) {
      const RankStep& step = plan.steps()[j];
      EXPECT_TRUE(step.local.empty());
      ASSERT_EQ(step.sends.size(), 1u);
      ASSERT_EQ(step.recvs.size(), 1u);
      const int to = (me + j) % p, from = (me - j + p) % p;
      EXPECT_EQ(step.sends[0], (Transfer{me, to, aapc_block(me, to, p)}));
      EXPECT_EQ(step.recvs[0], (Transfer{from, me, aapc_block(from, me, p)}));
    }
  }
}

TEST(RankPlan, EveryRankSendsAndReceivesEachMessageOnce) {
  for (AlltoallAlgo a : {AlltoallAlgo::Linear, AlltoallAlgo::Ring, AlltoallAlgo::Pairwise,
                         AlltoallAlgo::Factor, AlltoallAlgo::FactorGrouped})
    for (int p : {1, 2, 4, 5, 6, 8}) {
      if (a == AlltoallAlgo::Pairwise && (p & (p - 1)) != 0) continue;
      if (a == AlltoallAlgo::FactorGrouped && p % 2 != 0) continue;
      const Schedule s = alltoall_schedule(a, p);
      for (int me = 0; me < p; ++me) {
        const RankPlan plan(s, me);
        std::vector<int> sent(p), received(p);
        int local = 0;
        for (const auto& step : plan.steps()) {
          for (const auto& t : step.sends) {
            EXPECT_EQ(t.src, me);
            EXPECT_NE(t.dst, me);
            ++sent[t.dst];
          }
          for (const auto& t : step.recvs) {
            EXPECT_EQ(t.dst, me);
            EXPECT_NE(t.src, me);
            ++received[t.src];
          }
          for (const auto& t : step.local) {
            EXPECT_EQ(t.src, me);
            EXPECT_EQ(t.dst, me);
            ++local;
          }
        }
        EXPECT_EQ(local, 1);
        for (int q = 0; q < p; ++q) {
          EXPECT_EQ(sent[q], q == me ? 0 : 1) << alltoall_algo_name(a) << " P=" << p;
          EXPECT_EQ(received[q], q == me ? 0 : 1) << alltoall_algo_name(a) << " P=" << p;
        }
      }
    }
}

TEST(RankPlan, SinglePortedFlag) {
  // Linear posts every message for rank j in round j: rank j receives P - 1 messages in
  // one round, so no rank's plan is single-ported once P >= 3.
  for (int p = 3; p <= 9; ++p) {
    const Schedule s = alltoall_schedule(AlltoallAlgo::Linear, p);
    for (int me = 0; me < p; ++me)
      EXPECT_FALSE(RankPlan(s, me).single_ported()) << "linear P = " << p << " rank " << me;
  }
  for (int p : {1, 2}) {
    const Schedule s = alltoall_schedule(AlltoallAlgo::Linear, p);
    for (int me = 0; me < p; ++me) EXPECT_TRUE(RankPlan(s, me).single_ported());
  }
  for (AlltoallAlgo a : {AlltoallAlgo::Ring, AlltoallAlgo::RingSendrecv, AlltoallAlgo::Pairwise,
                         AlltoallAlgo::Factor, AlltoallAlgo::FactorGrouped})
    for (int p : {2, 4, 8, 16}) {
      const Schedule s = alltoall_schedule(a, p);
      for (int me = 0; me < p; ++me)
        EXPECT_TRUE(RankPlan(s, me).single_ported()) << alltoall_algo_name(a) << " P = " << p;
    }
}

TEST(RankPlan, DefaultIsEmpty) {
  const RankPlan plan;
  EXPECT_TRUE(plan.steps().empty());
  EXPECT_TRUE(plan.single_ported());
}

}  // namespace
}  // namespace libcomm
