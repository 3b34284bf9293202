// Clustered factor schedule (paper 000, section 3, Fig. 2, Theorem 1) checked without MPI.
#include <gtest/gtest.h>

#include <random>

#include "libcomm/hierarchical.hpp"

namespace libcomm {
namespace {

ClusteredFactorSchedule build(const std::vector<int>& sizes, bool copies_take_a_step,
                              bool fill = false) {
  ClusteredFactorOptions o;
  o.copies_take_a_step = copies_take_a_step;
  o.intra_fill = fill;
  return clustered_factor_schedule(NodeMap::from_sizes(sizes), o);
}

TEST(ClusteredFactor, Fig3HasThreePhasesOfThreeTwoOneRounds) {
  for (bool copies : {false, true}) {
    const auto cf = build({1, 2, 3}, copies);
    EXPECT_EQ(cf.phases, 3);
    EXPECT_EQ(cf.rounds_per_phase, (std::vector<int>{3, 2, 1}));
  }
}

TEST(ClusteredFactor, Fig3StepCountsBothWays) {
  // The caption of Fig. 3 counts 15 steps: messages between different processes only.
  EXPECT_EQ(build({1, 2, 3}, false).steps, 15);
  // Theorem 1's proof counts the self-message m_uu too: p * n = 6 * 3 = 18.
  EXPECT_EQ(build({1, 2, 3}, true).steps, 18);
  EXPECT_EQ(clustered_factor_theorem_steps(NodeMap::from_sizes({1, 2, 3})), 18);
}

TEST(ClusteredFactor, Fig3StepSixOfPhaseOneIsIntraNodeOnly) {
  // "Step 6 of phase 1 in which no inter-node communication takes place".
  const auto nodes = NodeMap::from_sizes({1, 2, 3});
  const auto cf = build({1, 2, 3}, true);
  const auto& step6 = cf.schedule.rounds.at(5);
  ASSERT_EQ(cf.phase_of_step.at(5), 0);
  ASSERT_FALSE(step6.transfers.empty());
  for (const auto& t : step6.transfers) EXPECT_EQ(nodes.node_of(t.src), nodes.node_of(t.dst));
}

void check_properties(const std::vector<int>& sizes) {
  const auto nodes = NodeMap::from_sizes(sizes);
  std::string label = "sizes";
  for (int s : sizes) label += " " + std::to_string(s);
  SCOPED_TRACE(label);
  for (bool copies : {false, true})
    for (bool fill : {false, true}) {
      const auto cf = build(sizes, copies, fill);
      const auto ok = verify_aapc_schedule(cf.schedule);
      EXPECT_TRUE(ok.ok) << ok.summary();
      const auto port = verify_node_single_port(cf.schedule, nodes);
      EXPECT_TRUE(port.ok) << port.summary();
      const int p = nodes.num_ranks();
      if (copies && !fill) {
        // Theorem 1: steps = largest number of messages a node's processes send.
        EXPECT_EQ(cf.steps, clustered_factor_theorem_steps(nodes));
      }
      // In the single-port node model a node of n processes sends its n (P - n)
      // inter-node messages one per step, so no schedule is shorter than the largest such
      // count; the fill never makes things longer.
      long long bound = 0;
      for (int s : sizes) bound = std::max(bound, static_cast<long long>(s) * (p - s));
      EXPECT_GE(cf.steps, bound);
      EXPECT_LE(cf.steps, build(sizes, copies, false).steps);
    }
}

TEST(ClusteredFactor, PropertiesOnPaperLayouts) {
  check_properties({4, 4, 4, 4, 4, 4});
  check_properties({2, 3, 4, 4, 3, 2});
  check_properties({4, 1, 4, 1, 4, 1});
  check_properties({1});
  check_properties({5});
  check_properties({1, 1, 1, 1, 1, 1, 1});
  check_properties({3, 3, 3});
}

TEST(ClusteredFactor, PropertiesOnManyRandomNodeMaps) {
  std::mt19937 rng(2026);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 9)(rng);
    const int max = std::uniform_int_distribution<int>(1, 8)(rng);
    std::vector<int> sizes(n);
    for (auto& s : sizes) s = std::uniform_int_distribution<int>(1, max)(rng);
    check_properties(sizes);
  }
}

TEST(ClusteredFactor, FillSavesThePhaseOfTheLoneLargestNode) {
  // Section 4: extra intra-node work in self-paired rounds can save rounds "in subsequent
  // phases where |A| is either even or one". Fig. 3's last phase has |A| = 1.
  const auto base = build({1, 2, 3}, false), fill = build({1, 2, 3}, false, true);
  EXPECT_EQ(fill.phases, 2);
  EXPECT_LT(fill.steps, base.steps);
}

TEST(ClusteredFactor, FlatMapIsTheFactorAlgorithm) {
  // One process per node: every node has size 1, one phase of P rounds.
  const auto cf = build({1, 1, 1, 1, 1}, true);
  EXPECT_EQ(cf.phases, 1);
  EXPECT_EQ(cf.steps, 5);
}

TEST(ClusteredFactor, NodePortVerifierCatchesTwoSendersOfOneNode) {
  const auto nodes = NodeMap::from_sizes({2, 2});
  Schedule s{"bad", 4, 1, {}};
  s.rounds.push_back({{{0, 2, aapc_block(0, 2, 4)}, {1, 3, aapc_block(1, 3, 4)}}});
  const auto res = verify_node_single_port(s, nodes);
  EXPECT_FALSE(res.ok);
  ASSERT_FALSE(res.problems.empty());
  EXPECT_NE(res.problems[0].find("node 0"), std::string::npos) << res.problems[0];
}

}  // namespace
}  // namespace libcomm
