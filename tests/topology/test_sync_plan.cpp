// Pairwise synchronisation plan (paper 003, section 5), checked by brute force: every
// pair of contending messages in different phases stays ordered by the kept
// synchronisations plus each rank's own send order, and no kept synchronisation is
// implied by the others.
#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <set>

#include "libcomm/error.hpp"

#include "libcomm/tree_schedule.hpp"

namespace libcomm {
namespace {

const std::string kDir = LIBCOMM_TOPOLOGY_DIR;

struct Msg {
  int round, src, dst;
  std::set<int> edges;
};

std::vector<Msg> messages(const Schedule& s, const Topology& t) {
  std::vector<Msg> out;
  for (std::size_t r = 0; r < s.rounds.size(); ++r)
    for (const auto& tr : s.rounds[r].transfers) {
      if (tr.src == tr.dst) continue;
      Msg m{static_cast<int>(r), tr.src, tr.dst, {}};
      for (const auto& e : t.path(t.machine_node(t.machine_of_rank()[tr.src]),
                                  t.machine_node(t.machine_of_rank()[tr.dst])))
        m.edges.insert(t.edge_id(e.from, e.to));
      out.push_back(m);
    }
  return out;
}

bool contend(const Msg& a, const Msg& b) {
  for (int e : a.edges)
    if (b.edges.count(e)) return true;
  return false;
}

// reach[i][j]: message j cannot start before message i is done, through the graph of
// `syncs` (minus `skip`) and program order.
std::vector<std::vector<bool>> closure(const std::vector<Msg>& msgs, const std::vector<SyncMessage>& syncs,
                                       int skip) {
  const std::size_t n = msgs.size();
  std::vector<std::vector<int>> succ(n);
  auto find = [&](int round, int src) {
    for (std::size_t i = 0; i < n; ++i)
      if (msgs[i].round == round && msgs[i].src == src) return static_cast<int>(i);
    return -1;
  };
  for (std::size_t k = 0; k < syncs.size(); ++k) {
    if (static_cast<int>(k) == skip) continue;
    const int a = find(syncs[k].after, syncs[k].from), b = find(syncs[k].before, syncs[k].to);
    EXPECT_GE(a, 0);
    EXPECT_GE(b, 0);
    if (a >= 0 && b >= 0) succ[a].push_back(b);
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (msgs[i].src == msgs[j].src && msgs[i].round < msgs[j].round) succ[i].push_back(static_cast<int>(j));
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<int> stack = {static_cast<int>(i)};
    while (!stack.empty()) {
      const int x = stack.back();
      stack.pop_back();
      for (int y : succ[x])
        if (!reach[i][y]) reach[i][y] = true, stack.push_back(y);
    }
  }
  return reach;
}

void check_plan(const Topology& t, const std::string& what) {
  const Schedule s = tree_rank_schedule(schedule_tree_aapc(t), t);
  const SyncPlan plan = plan_synchronisation(s, t);
  const auto msgs = messages(s, t);
  std::int64_t pairs = 0;
  for (std::size_t i = 0; i < msgs.size(); ++i)
    for (std::size_t j = 0; j < msgs.size(); ++j)
      if (msgs[i].round < msgs[j].round && contend(msgs[i], msgs[j])) ++pairs;
  EXPECT_EQ(plan.contending_pairs, pairs) << what;
  EXPECT_EQ(static_cast<std::int64_t>(plan.syncs.size()),
            plan.consecutive_pairs - plan.same_sender_pairs - plan.redundant)
      << what;
  for (const auto& y : plan.syncs) {
    EXPECT_LT(y.after, y.before) << what;
    EXPECT_NE(y.from, y.to) << what;
  }
  // Sufficient: every contending pair is ordered.
  const auto reach = closure(msgs, plan.syncs, -1);
  for (std::size_t i = 0; i < msgs.size(); ++i)
    for (std::size_t j = 0; j < msgs.size(); ++j)
      if (msgs[i].round < msgs[j].round && contend(msgs[i], msgs[j]))
        ASSERT_TRUE(reach[i][j]) << what << ": round " << msgs[i].round << " " << msgs[i].src << "->"
                                 << msgs[i].dst << " is not ordered before round " << msgs[j].round
                                 << " " << msgs[j].src << "->" << msgs[j].dst;
  // Minimal: dropping any kept synchronisation loses an ordering.
  for (std::size_t k = 0; k < plan.syncs.size(); ++k) {
    const auto without = closure(msgs, plan.syncs, static_cast<int>(k));
    bool needed = false;
    for (std::size_t i = 0; i < msgs.size() && !needed; ++i)
      for (std::size_t j = 0; j < msgs.size() && !needed; ++j)
        needed = msgs[i].round < msgs[j].round && contend(msgs[i], msgs[j]) && !without[i][j];
    EXPECT_TRUE(needed) << what << ": synchronisation " << plan.syncs[k].from << " -> "
                        << plan.syncs[k].to << " (rounds " << plan.syncs[k].after << " -> "
                        << plan.syncs[k].before << ") is redundant";
  }
}

TEST(SyncPlan, Fig1IsOrderedAndMinimal) {
  const Topology t = Topology::load(kDir + "/fig1.topo");
  check_plan(t, "fig1");
  const Schedule s = tree_rank_schedule(schedule_tree_aapc(t), t);
  const SyncPlan plan = plan_synchronisation(s, t);
  EXPECT_GT(plan.redundant, 0);  // the example has implied synchronisations to drop
  std::cout << "fig1: " << plan.contending_pairs << " contending pairs, " << plan.consecutive_pairs
            << " consecutive, " << plan.same_sender_pairs << " same sender, " << plan.redundant
            << " redundant, " << plan.syncs.size() << " synchronisations\n";
}

TEST(SyncPlan, RandomSmallTreesAreOrderedAndMinimal) {
  std::mt19937_64 rng(7);
  for (int n = 0; n < 60; ++n) {
    Topology t = Topology::random(3 + static_cast<int>(rng() % 8), 1 + static_cast<int>(rng() % 5), rng(),
                                  n % 2 ? 0.9 : 0.2);
    check_plan(t, "tree " + std::to_string(n) + ":\n" + t.to_text());
    if (HasFailure()) return;
  }
}

TEST(SyncPlan, Fig5Counts) {
  for (const char* f : {"fig5a", "fig5b", "fig5c"}) {
    const Topology t = Topology::load(kDir + "/" + f + ".topo");
    const Schedule s = tree_rank_schedule(schedule_tree_aapc(t), t);
    const SyncPlan plan = plan_synchronisation(s, t);
    EXPECT_GT(plan.syncs.size(), 0u) << f;
    EXPECT_LT(static_cast<std::int64_t>(plan.syncs.size()), plan.consecutive_pairs) << f;
    std::cout << f << ": " << plan.contending_pairs << " contending pairs, " << plan.consecutive_pairs
              << " consecutive, " << plan.same_sender_pairs << " same sender, " << plan.redundant
              << " redundant, " << plan.syncs.size() << " synchronisations\n";
  }
}

TEST(SyncPlan, RejectsContention) {
  // Round 0 of this schedule sends n0 -> n2 and n1 -> n2 over the same edge (s, n2).
  const Topology t = Topology::parse("switch s\nmachine n0 n1 n2\nlink s n0 n1 n2\n");
  Schedule s;
  s.nprocs = 3;
  s.rounds.resize(1);
  s.rounds[0].transfers = {{0, 2, 2}, {1, 2, 5}};
  EXPECT_THROW(plan_synchronisation(s, t), Error);
  const auto v = verify_contention_free(s, t);
  EXPECT_FALSE(v.ok);
  ASSERT_FALSE(v.problems.empty());
  EXPECT_NE(v.problems[0].find("(s, n2)"), std::string::npos) << v.problems[0];
}

}  // namespace
}  // namespace libcomm
