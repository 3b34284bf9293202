// Pairwise synchronisation plan (paper 003, section 5), checked by brute force: every
// pair of contending messages in different phases stays ordered by the kept
// synchronisations plus each rank's own send order, and no kept synchronisation is
// implied by the others.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "libcomm/error.hpp"

#include "libcomm/program.hpp"
#include "libcomm/tree_schedule.hpp"
#include "sync_plan_reference.hpp"

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
      if (msgs[i].round < msgs[j].round && contend(msgs[i], msgs[j])) {
        ASSERT_TRUE(reach[i][j]) << what << ": round " << msgs[i].round << " " << msgs[i].src << "->"
                                 << msgs[i].dst << " is not ordered before round " << msgs[j].round
                                 << " " << msgs[j].src << "->" << msgs[j].dst;
      }
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

// The synchronisations (and the barrier variant's barriers) order messages only if a data
// send completes once the receiver has it: every data send of both variants is
// synchronous, no synchronisation message is, and every rank sends to each other rank once.
TEST(TreeProgram, DataSendsAreSynchronous) {
  const Topology t = Topology::load(kDir + "/fig5b.topo");
  const Schedule s = tree_rank_schedule(schedule_tree_aapc(t), t);
  const SyncPlan plan = plan_synchronisation(s, t);
  for (TreeSync mode : {TreeSync::Pairwise, TreeSync::Barrier}) {
    for (int rank = 0; rank < s.nprocs; ++rank) {
      const StepProgram p = tree_program(s, plan, rank, 1024, mode);
      int data = 0, sync = 0;
      for (const Step& st : p.steps) {
        if (st.kind != StepKind::Send) continue;
        if (st.tag == TagKind::Data) {
          ++data;
          EXPECT_TRUE(st.synchronous) << "rank " << rank << ": " << p.to_string();
        } else {
          ++sync;
          EXPECT_FALSE(st.synchronous) << "rank " << rank << ": a synchronisation message";
        }
      }
      EXPECT_EQ(data, s.nprocs - 1) << "rank " << rank;
      EXPECT_GT(sync, 0) << "rank " << rank;  // pairwise notifications, or the barriers
    }
  }
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

// Synchronisations between one pair of ranks carry nothing to tell them apart, so they
// must be consumed in the order they are sent: in `before` order, each pair's `after`
// increases strictly (and no two share a `before`). plan_synchronisation relies on the
// reduction for this instead of checking it.
void expect_no_crossing(const SyncPlan& plan, const std::string& what) {
  std::map<std::pair<int, int>, std::pair<std::int32_t, std::int32_t>> last;  // (from, to) -> (after, before)
  for (const auto& y : plan.syncs) {
    auto [it, first] = last.try_emplace({y.from, y.to}, y.after, y.before);
    if (!first) {
      EXPECT_LT(it->second.first, y.after) << what << ": crossing synchronisations " << y.from << " -> " << y.to;
      EXPECT_LT(it->second.second, y.before) << what << ": two synchronisations " << y.from << " -> " << y.to
                                             << " before round " << y.before;
      it->second = {y.after, y.before};
    }
  }
}

// The fast plan against the reference implementation (the first, direct one): the same
// synchronisations in the same order and the same counts.
void expect_same_plan(const SyncPlan& plan, const SyncPlan& ref, const std::string& what) {
  EXPECT_EQ(plan.synchronisations, static_cast<std::int64_t>(ref.syncs.size())) << what;
  EXPECT_EQ(plan.contending_pairs, ref.contending_pairs) << what;
  EXPECT_EQ(plan.consecutive_pairs, ref.consecutive_pairs) << what;
  EXPECT_EQ(plan.same_sender_pairs, ref.same_sender_pairs) << what;
  EXPECT_EQ(plan.redundant, ref.redundant) << what;
  expect_no_crossing(plan, what);
  ASSERT_EQ(plan.syncs.size(), ref.syncs.size()) << what;
  for (std::size_t k = 0; k < ref.syncs.size(); ++k)
    ASSERT_EQ(plan.syncs[k], ref.syncs[k]) << what << ": synchronisation " << k << " differs: " << plan.syncs[k].from
                                           << " -> " << plan.syncs[k].to << " (rounds " << plan.syncs[k].after
                                           << " -> " << plan.syncs[k].before << ")";
}

// The plan with the sweep cut into `threads` chunks.
SyncPlanOptions with_threads(int threads, bool keep_syncs = true) {
  SyncPlanOptions o;
  o.threads = threads;
  o.keep_syncs = keep_syncs;
  return o;
}

// Both entry points against the reference, on 1, 2 and 3 threads (each later chunk of
// the sweep starts from the last users it finds by looking back, and its hub labels are
// completed after the earlier chunks); and the counts alone, without the synchronisations.
void expect_same_as_reference(const Topology& t, const std::string& what) {
  const TreeAapcSchedule s = schedule_tree_aapc(t);
  const Schedule rs = tree_rank_schedule(s, t);
  const SyncPlan ref = reference_plan_synchronisation(rs, t);
  for (int threads : {1, 2, 3}) {
    const auto o = with_threads(threads);
    for (const SyncPlan& plan : {plan_synchronisation(s, t, o), plan_synchronisation(rs, t, o)}) {
      expect_same_plan(plan, ref, what + " (" + std::to_string(threads) + " threads)");
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  // Every question the labels leave open answered by the spread sweep (no search), and by
  // searches of at most 3 steps, the rest by the sweep.
  for (int budget : {0, 3}) {
    auto o = with_threads(budget == 0 ? 1 : 2);
    o.search_budget = budget;
    expect_same_plan(plan_synchronisation(s, t, o), ref, what + " (search budget " + std::to_string(budget) + ")");
    if (::testing::Test::HasFatalFailure()) return;
  }
  SyncPlan counts = plan_synchronisation(s, t, with_threads(2, false));
  EXPECT_TRUE(counts.syncs.empty()) << what;
  counts.syncs = ref.syncs;  // the counts must match the reference's
  expect_same_plan(counts, ref, what + " (counts only)");
}

TEST(SyncPlan, SameAsReferenceOnRandomTrees) {
  // 300 trees of 3-64 machines: flat, bushy and chained switch trees, every third with a
  // random rank placement (100 in a sanitized build: under 10 s there).
#ifdef LIBCOMM_SANITIZED_BUILD
  const int trees = 100;
#else
  const int trees = 300;
#endif
  std::mt19937_64 rng(2024);
  for (int n = 0; n < trees; ++n) {
    const int machines = 3 + static_cast<int>(rng() % 62);
    const int switches = 1 + static_cast<int>(rng() % (machines / 2 + 1));
    const double chain = n % 3 == 0 ? 0.0 : n % 3 == 1 ? 0.5 : 0.95;
    Topology t = Topology::random(machines, switches, rng(), chain);
    if (n % 3 == 2) {
      std::vector<int> order(static_cast<std::size_t>(machines));
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      t.set_machine_of_rank(order);
    }
    expect_same_as_reference(t, "tree " + std::to_string(n) + ":\n" + t.to_text());
    if (HasFailure()) return;
  }
}

TEST(SyncPlan, SameAsReferenceOnLargerTrees) {
  for (const char* f : {"fig1", "fig5a", "fig5b", "fig5c"})
    expect_same_as_reference(Topology::load(kDir + "/" + f + ".topo"), f);
  // 128-200 machines: one switch, two levels, a deep chain.
  expect_same_as_reference(Topology::random(128, 1, 11, 0.0), "128 on one switch");
  expect_same_as_reference(Topology::random(200, 9, 12, 0.0), "200 on 9 switches");
  expect_same_as_reference(Topology::random(160, 40, 13, 0.9), "160 on a chain of 40 switches");
  expect_same_as_reference(Topology::random(150, 12, 14, 0.4), "150 on 12 switches");
}

TEST(SyncPlan, SameAsReferenceOnPartialSchedules) {
  // Not a full all-to-all (some messages left out, some rounds empty): contending pairs
  // are counted from the paths and the hub is the edge with the most messages.
  std::mt19937_64 rng(99);
  for (int n = 0; n < 60; ++n) {
    const int machines = 3 + static_cast<int>(rng() % 40);
    const Topology t = Topology::random(machines, 1 + static_cast<int>(rng() % (machines / 2 + 1)), rng(),
                                        n % 2 ? 0.9 : 0.2);
    Schedule s = tree_rank_schedule(schedule_tree_aapc(t), t);
    for (auto& round : s.rounds)
      std::erase_if(round.transfers, [&](const Transfer&) { return rng() % 3 == 0; });
    const std::string what = "partial schedule " + std::to_string(n) + ":\n" + t.to_text();
    const SyncPlan ref = reference_plan_synchronisation(s, t);
    for (int threads : {1, 2, 4}) expect_same_plan(plan_synchronisation(s, t, with_threads(threads)), ref, what);
    SyncPlanOptions spread_only;
    spread_only.search_budget = 0;
    expect_same_plan(plan_synchronisation(s, t, spread_only), ref, what + " (no search)");
    if (HasFailure()) return;
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

// schedgen takes the plan's sweep as its contention check (it walks every edge of every
// path in phase order): the plan must refuse exactly the schedules that
// verify_contention_free rejects. One message moved to another round, on random trees.
TEST(SyncPlan, RefusesExactlyWhatVerifyRejects) {
  std::mt19937_64 rng(7);
  int refused = 0, accepted = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int machines = 3 + static_cast<int>(rng() % 40);
    const Topology t = Topology::random(machines, 1 + static_cast<int>(rng() % 8), rng(), trial % 2 ? 0.9 : 0.2);
    Schedule s = tree_rank_schedule(schedule_tree_aapc(t), t);
    const std::size_t from = 1 + rng() % (s.rounds.size() - 1);  // round 0 also holds the self copies
    std::size_t to = rng() % s.rounds.size();
    if (to == from) to = (to + 1) % s.rounds.size();
    auto& moved = s.rounds[from].transfers;
    const std::size_t k = rng() % moved.size();
    s.rounds[to].transfers.push_back(moved[k]);
    moved.erase(moved.begin() + static_cast<std::ptrdiff_t>(k));
    bool threw = false;
    std::string message;
    try {
      (void)plan_synchronisation(s, t);
    } catch (const Error& e) {
      threw = true;
      message = e.what();
    }
    // Cut into chunks, the sweep refuses the same schedules with the same message (the
    // earliest problem), whichever chunk holds it.
    for (int threads : {2, 3}) {
      std::string chunked = "accepted";
      try {
        (void)plan_synchronisation(s, t, with_threads(threads));
      } catch (const Error& e) {
        chunked = e.what();
      }
      EXPECT_EQ(chunked, threw ? message : "accepted") << "trial " << trial << ", " << threads << " threads";
    }
    const bool rejected = !verify_contention_free(s, t).ok;
    EXPECT_EQ(threw, rejected) << "trial " << trial << ": moved a message from round " << from << " to " << to
                               << "\n" << t.to_text();
    (threw ? refused : accepted) += 1;
    if (HasFailure()) return;
  }
  // Both outcomes occur, so the check is not vacuous.
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace libcomm
