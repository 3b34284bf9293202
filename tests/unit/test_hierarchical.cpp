// Clustered factor schedule (paper 000, section 3, Fig. 2, Theorem 1) checked without MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <random>
#include <tuple>

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

// MPI_Alltoall's result: recv block i of rank r is block r of rank i's send buffer.
VerifyResult verify_alltoall(const std::vector<StepProgram>& progs, std::size_t b) {
  const std::size_t n = progs.size() * b;
  return verify_programs(
      progs, [n](int) { return n; },
      [b](int r, std::size_t k) {
        return ByteOrigin{static_cast<int>(k / b), static_cast<std::size_t>(r) * b + k % b};
      });
}

// Whether the programs run a node's exchanges with other nodes one after the other. Every
// rank's stages are events (start, end) of a graph: a stage starts after the previous one
// ends, ends after it starts, and a receive completes (its `complete` stage ends) only after
// the matching send was posted (its stage started); sends may complete at once (eager), so
// nothing else orders them. Then for each node, the stage holding its k-th exchange with
// another node (in the schedule's round order) must end before the stage of its (k+1)-th
// starts. Returns "" or the first exchange pair left unordered.
std::string node_exchanges_ordered(const std::vector<StepProgram>& progs, const Schedule& s,
                                   const NodeMap& nodes) {
  const int p = static_cast<int>(progs.size());
  std::vector<int> base(p + 1, 0);  // event id of (rank, stage, end) = 2 * (base[r] + stage) + end
  for (int r = 0; r < p; ++r) base[r + 1] = base[r] + static_cast<int>(progs[r].stages);
  std::vector<std::vector<int>> next(2 * base[p]);
  const auto ev = [&](int r, std::uint32_t st, int end) { return 2 * (base[r] + static_cast<int>(st)) + end; };
  for (int r = 0; r < p; ++r)
    for (std::uint32_t st = 0; st < progs[r].stages; ++st) {
      next[ev(r, st, 0)].push_back(ev(r, st, 1));
      if (st + 1 < progs[r].stages) next[ev(r, st, 1)].push_back(ev(r, st + 1, 0));
    }
  // Match messages in posting order per (sender, receiver, tag).
  std::map<std::tuple<int, int, int>, std::vector<std::uint32_t>> sends, recvs;  // stage / complete
  for (int r = 0; r < p; ++r)
    for (const Step& st : progs[r].steps) {
      if (st.kind == StepKind::Send) sends[{r, st.peer, static_cast<int>(st.tag)}].push_back(st.stage);
      if (st.kind == StepKind::Recv) recvs[{st.peer, r, static_cast<int>(st.tag)}].push_back(st.complete);
    }
  for (const auto& [key, posted] : sends) {
    const auto& done = recvs[key];
    if (done.size() != posted.size()) return "unmatched messages";
    for (std::size_t i = 0; i < posted.size(); ++i)
      next[ev(std::get<0>(key), posted[i], 0)].push_back(ev(std::get<1>(key), done[i], 1));
  }
  const auto reaches = [&](int from, int to) {
    std::vector<char> seen(next.size(), 0);
    std::vector<int> todo{from};
    while (!todo.empty()) {
      const int e = todo.back();
      todo.pop_back();
      if (e == to) return true;
      for (int f : next[e])
        if (!seen[f]) seen[f] = 1, todo.push_back(f);
    }
    return false;
  };
  // Each rank's stages holding its messages to other nodes, in order: one per round it has any.
  std::vector<std::vector<std::uint32_t>> off_stages(p);
  for (int r = 0; r < p; ++r)
    for (const Step& st : progs[r].steps)
      if ((st.kind == StepKind::Send || st.kind == StepKind::Recv) && st.tag == TagKind::Data &&
          nodes.node_of(st.peer) != nodes.node_of(r) &&
          (off_stages[r].empty() || off_stages[r].back() != st.stage))
        off_stages[r].push_back(st.stage);
  std::vector<std::size_t> used(p, 0);
  std::vector<std::pair<int, std::uint32_t>> last(nodes.num_nodes(), {-1, 0});  // per node: rank, stage
  for (const auto& round : s.rounds) {
    std::map<int, int> holder;  // node -> its process in this round's off-node exchange
    for (const auto& t : round.transfers)
      if (nodes.node_of(t.src) != nodes.node_of(t.dst))
        holder[nodes.node_of(t.src)] = t.src, holder[nodes.node_of(t.dst)] = t.dst;
    for (const auto& [node, r] : holder) {
      if (used[r] >= off_stages[r].size()) return "rank " + std::to_string(r) + ": fewer off-node stages than rounds";
      const std::uint32_t st = off_stages[r][used[r]++];
      const auto [before, before_stage] = last[node];
      if (before >= 0 && before != r && !reaches(ev(before, before_stage, 1), ev(r, st, 0)))
        return "node " + std::to_string(node) + ": rank " + std::to_string(r) + "'s exchange (stage " +
               std::to_string(st) + ") may start before rank " + std::to_string(before) + "'s (stage " +
               std::to_string(before_stage) + ") ends";
      last[node] = {r, st};
    }
  }
  return "";
}

void check_one_matching(const std::vector<int>& sizes, bool fill, bool copies) {
  const auto nodes = NodeMap::from_sizes(sizes);
  const int p = nodes.num_ranks();
  ClusteredFactorOptions o{.copies_take_a_step = copies, .intra_fill = fill, .one_matching_per_step = true};
  std::vector<StepProgram> progs;
  for (int r = 0; r < p; ++r) progs.push_back(clustered_factor_program(nodes, r, 3, o));
  const auto res = verify_alltoall(progs, 3);
  EXPECT_TRUE(res.ok) << res.summary();
  EXPECT_EQ(node_exchanges_ordered(progs, clustered_factor_schedule(nodes, o).schedule, nodes), "");
}

TEST(ClusteredFactor, OneMatchingPerStepRunsEachNodesExchangesInTurn) {
  // The paper's layouts and random maps: every byte delivered, no deadlock, and every
  // node's exchanges with other nodes ordered one after the other.
  for (const auto& sizes : std::vector<std::vector<int>>{
           {4, 4, 4, 4, 4, 4}, {2, 3, 4, 4, 3, 2}, {4, 1, 4, 1, 4, 1}, {2, 1, 3, 1, 4, 4}, {1, 2, 3}, {1}, {5}, {3, 3}})
    for (bool fill : {false, true})
      for (bool copies : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "sizes " << ::testing::PrintToString(sizes) << " fill " << fill
                                          << " copies " << copies);
        check_one_matching(sizes, fill, copies);
      }
  std::mt19937 rng(41);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<int> sizes(std::uniform_int_distribution<int>(1, 6)(rng));
    for (auto& s : sizes) s = std::uniform_int_distribution<int>(1, 5)(rng);
    SCOPED_TRACE(::testing::Message() << "sizes " << ::testing::PrintToString(sizes));
    check_one_matching(sizes, trial % 2 == 1, false);
  }
}

TEST(ClusteredFactor, WithoutOneMatchingANodesExchangesOverlap) {
  // The check above can fail: the default programs let a node's processes start their
  // exchanges with other nodes as soon as their own partners are there.
  const auto nodes = NodeMap::from_sizes({4, 4, 4});
  std::vector<StepProgram> progs;
  for (int r = 0; r < nodes.num_ranks(); ++r) progs.push_back(clustered_factor_program(nodes, r, 3));
  EXPECT_TRUE(verify_alltoall(progs, 3).ok);
  EXPECT_NE(node_exchanges_ordered(progs, clustered_factor_schedule(nodes).schedule, nodes), "");
}

TEST(ClusteredFactor, PageRecordIsWhatTheLibraryBuilds) {
  // docs/algorithms/hierarchical.md quotes these counts from its record; they must be what
  // the library builds.
  std::ifstream in(LIBCOMM_SOURCE_DIR "/docs/algorithms/records/clustered_factor_steps.txt");
  ASSERT_TRUE(in) << "no record";
  std::map<std::string, std::vector<int>> rec;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name;
    words >> name;
    for (int v; words >> v;) rec[name].push_back(v);
  }
  const auto one = [&](const std::string& name) {
    EXPECT_EQ(rec[name].size(), 1u) << name;
    return rec[name].empty() ? -1 : rec[name][0];
  };
  const std::vector<int> fig3 = rec["fig3_sizes"], equal = rec["equal_sizes"];
  ASSERT_FALSE(fig3.empty());
  ASSERT_FALSE(equal.empty());
  EXPECT_EQ(build(fig3, true).steps, one("fig3_theorem_steps"));
  EXPECT_EQ(clustered_factor_theorem_steps(NodeMap::from_sizes(fig3)), one("fig3_theorem_steps"));
  EXPECT_EQ(build(fig3, false).steps, one("fig3_executed_steps"));
  EXPECT_EQ(build(fig3, false).rounds_per_phase, rec["fig3_rounds_per_phase"]);
  EXPECT_EQ(build(fig3, false, true).phases, one("fig3_fill_phases"));
  EXPECT_EQ(build(fig3, false, true).steps, one("fig3_fill_steps"));
  EXPECT_EQ(build(equal, false).steps, one("equal_executed_steps"));
  // Without self-messages a node of n processes sends n (P - 1) messages, one a step.
  const int p = std::accumulate(equal.begin(), equal.end(), 0);
  EXPECT_EQ(*std::max_element(equal.begin(), equal.end()) * (p - 1), one("equal_lower_bound"));
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
