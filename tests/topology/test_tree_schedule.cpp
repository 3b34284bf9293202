// The AAPC tree scheduler (paper 003, section 4): Table 4 cell by cell, the global
// scheduling of Fig. 3, and the properties of the Theorem on thousands of random trees.
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <set>

#include "libcomm/tree_schedule.hpp"

namespace libcomm {
namespace {

const std::string kDir = LIBCOMM_TOPOLOGY_DIR;

// t_{i,x} of the paper's example: t0 = (n0, n1, n2), t1 = (n3, n4), t2 = (n5).
int machine(int i, int x) { return i == 0 ? x : i == 1 ? 3 + x : 5; }

struct Cell {
  int phase, si, sx, di, dx;  // t_{si,sx} -> t_{di,dx} in phase
};

// Table 4, every global and local message, transcribed row by row.
const std::vector<Cell> kTable4 = {
    {0, 0, 0, 1, 1}, {0, 1, 0, 2, 0}, {0, 2, 0, 0, 1}, {0, 0, 1, 0, 0},
    {1, 0, 1, 1, 0}, {1, 1, 1, 2, 0}, {1, 2, 0, 0, 2}, {1, 0, 2, 0, 1},
    {2, 0, 2, 1, 1}, {2, 2, 0, 0, 0}, {2, 0, 0, 0, 2},
    {3, 0, 0, 1, 0}, {3, 1, 0, 0, 2}, {3, 0, 2, 0, 0},
    {4, 0, 1, 1, 1}, {4, 1, 0, 0, 0}, {4, 0, 0, 0, 1}, {4, 1, 1, 1, 0},
    {5, 0, 2, 1, 0}, {5, 1, 0, 0, 1}, {5, 0, 1, 0, 2},
    {6, 0, 0, 2, 0}, {6, 1, 1, 0, 0},
    {7, 0, 1, 2, 0}, {7, 1, 1, 0, 1}, {7, 2, 0, 1, 0}, {7, 1, 0, 1, 1},
    {8, 0, 2, 2, 0}, {8, 1, 1, 0, 2}, {8, 2, 0, 1, 1},
};

TEST(TreeSchedule, Fig1RootSubtreesAndGlobalScheduling) {
  const Topology t = Topology::load(kDir + "/fig1.topo");
  const auto s = schedule_tree_aapc(t);
  EXPECT_EQ(t.name(s.root), "s1");
  ASSERT_EQ(s.subtrees.size(), 3u);
  EXPECT_EQ(t.name(s.subtree_node[0]), "s0");
  EXPECT_EQ(t.name(s.subtree_node[1]), "s3");
  EXPECT_EQ(t.name(s.subtree_node[2]), "n5");
  EXPECT_EQ(s.subtrees[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(s.subtrees[1], (std::vector<int>{3, 4}));
  EXPECT_EQ(s.subtrees[2], (std::vector<int>{5}));
  EXPECT_EQ(s.num_phases, 9);
  // Fig. 3 / section 4.2: t1 -> t2 starts at 0, t0 -> t2 at 6, t2 -> t0 at 0.
  EXPECT_EQ(s.group_start(1, 2), 0);
  EXPECT_EQ(s.group_start(0, 2), 6);
  EXPECT_EQ(s.group_start(2, 0), 0);
  EXPECT_EQ(s.group_start(0, 1), 0);
  EXPECT_EQ(s.group_start(1, 0), 3);  // Table 4: t1 -> t0 in phases 3 to 8
  EXPECT_EQ(s.group_start(2, 1), 7);  // Table 4: t2 -> t1 in phases 7 and 8
}

TEST(TreeSchedule, Fig1ReproducesTable4CellByCell) {
  const Topology t = Topology::load(kDir + "/fig1.topo");
  const auto s = schedule_tree_aapc(t);
  ASSERT_EQ(kTable4.size(), 30u);  // |M| (|M| - 1) messages
  std::set<std::pair<int, int>> seen;
  for (const auto& c : kTable4) {
    const int src = machine(c.si, c.sx), dst = machine(c.di, c.dx);
    EXPECT_TRUE(seen.insert({src, dst}).second) << "table lists n" << src << " -> n" << dst << " twice";
    EXPECT_EQ(s.phase(src, dst), c.phase) << "t" << c.si << "," << c.sx << " -> t" << c.di << "," << c.dx
                                          << " (n" << src << " -> n" << dst << ")";
    EXPECT_EQ(s.is_global(src, dst), c.si != c.di);
  }
}

// The checks of the Theorem: |M0| (|M| - |M0|) phases = the AAPC load, every message in
// exactly one phase (verify_aapc_schedule), no two messages of a phase share a directed
// edge, and every subtree holds at most |M| / 2 machines (Lemma 1).
void check_properties(const Topology& t, const std::string& what) {
  const auto s = schedule_tree_aapc(t);
  const int M = t.num_machines();
  const auto M0 = static_cast<std::int64_t>(s.subtrees[0].size());
  ASSERT_EQ(s.num_phases, M0 * (M - M0)) << what;
  ASSERT_EQ(s.num_phases, t.aapc_load()) << what;
  for (const auto& sub : s.subtrees) ASSERT_LE(2 * static_cast<int>(sub.size()), M) << what;
  for (std::size_t i = 1; i < s.subtrees.size(); ++i) ASSERT_LE(s.subtrees[i].size(), s.subtrees[i - 1].size());
  // The root touches a bottleneck link (4.1).
  bool touches = false;
  for (const auto& l : t.bottleneck_links()) touches |= l.a == s.root || l.b == s.root;
  EXPECT_TRUE(touches) << what;
  const Schedule rs = tree_rank_schedule(s, t);
  ASSERT_EQ(rs.num_rounds(), static_cast<std::size_t>(s.num_phases)) << what;
  const auto v = verify_aapc_schedule(rs);
  ASSERT_TRUE(v.ok) << what << "\n" << v.summary();
  const auto c = verify_contention_free(rs, t);
  ASSERT_TRUE(c.ok) << what << "\n" << c.summary();
  ASSERT_TRUE(verify_contention_free(s, t, ContentionCheck::Segments).ok) << what;
  ASSERT_TRUE(verify_contention_free(s, t, ContentionCheck::WalkPaths).ok) << what;
}

TEST(TreeSchedule, Fig1AndFig5Properties) {
  for (const char* f : {"fig1", "fig5a", "fig5b", "fig5c"})
    check_properties(Topology::load(kDir + "/" + f + ".topo"), f);
  // Fig. 5 (b): root s0, subtrees of 8; (c): root s1 or s2 with a 16-machine subtree.
  const auto b = schedule_tree_aapc(Topology::load(kDir + "/fig5b.topo"));
  EXPECT_EQ(b.subtrees.size(), 11u);  // 8 machines of s0 plus s1, s2, s3
  EXPECT_EQ(b.num_phases, 8 * 24);
  const auto c = schedule_tree_aapc(Topology::load(kDir + "/fig5c.topo"));
  EXPECT_EQ(c.subtrees[0].size(), 16u);
  EXPECT_EQ(c.num_phases, 256);
  const auto a = schedule_tree_aapc(Topology::load(kDir + "/fig5a.topo"));
  EXPECT_EQ(a.num_phases, 23);
}

TEST(TreeSchedule, ThousandsOfRandomTrees) {
  std::mt19937_64 rng(2024);
  int checked = 0;
#ifdef LIBCOMM_SANITIZED_BUILD
  const int trees = 300;  // a tenth in a sanitized build: each test under 10 s there
#else
  const int trees = 3000;
#endif
  for (int n = 0; n < trees; ++n) {
    const int machines = 3 + static_cast<int>(rng() % 62);  // 3 .. 64
    const int switches = 1 + static_cast<int>(rng() % (n % 3 == 0 ? 3 : 24));
    const double chain = n % 4 == 0 ? 0.95 : n % 4 == 1 ? 0.0 : 0.5;  // deep / flat / mixed
    Topology t = Topology::random(machines, switches, rng(), chain);
    if (n % 5 == 0) {  // a random rank -> machine mapping
      std::vector<int> m(machines);
      std::iota(m.begin(), m.end(), 0);
      std::shuffle(m.begin(), m.end(), rng);
      t.set_machine_of_rank(m);
    }
    check_properties(t, "tree " + std::to_string(n) + ":\n" + t.to_text());
    if (HasFatalFailure()) return;
    ++checked;
  }
  EXPECT_EQ(checked, trees);
}

TEST(TreeSchedule, SpecialShapes) {
  // Two equal halves (k = 2), a chain of single machines, a star of stars, switch-only
  // branches, a root found after walking down several bottleneck links.
  const std::vector<std::string> shapes = {
      "switch a b\nmachine n[0-3]\nlink a b n0 n1\nlink b n2 n3\n",
      "switch s[0-4]\nmachine n[0-4]\nlink s0 s1 n0\nlink s1 s2 n1\nlink s2 s3 n2\nlink s3 s4 n3\nlink s4 n4\n",
      "switch r x y z e\nmachine n[0-8]\nlink r x y z e\nlink x n[0-2]\nlink y n[3-5]\nlink z n[6-8]\n",
      "switch a b c d\nmachine n[0-6]\nlink a b\nlink b c\nlink c d\nlink d n[0-6]\n",
      "switch a b c\nmachine n[0-2]\nlink a b c n0\nlink b n1\nlink c n2\n",
  };
  for (const auto& text : shapes) check_properties(Topology::parse(text), text);
  // Two equal halves: phases = 2 x 2.
  EXPECT_EQ(schedule_tree_aapc(Topology::parse(shapes[0])).num_phases, 4);
}

TEST(TreeSchedule, RotatePatternOfTable2) {
  // t0 of 6 machines sending to a t1 of 4 machines: the rotate pattern of Table 2
  // (step 1). Root r, subtrees x (6 machines) and y (4) plus 2 single machines so
  // that |M0| = 6 <= |M| / 2.
  const Topology t = Topology::parse(
      "switch r x y\nmachine a[0-5] b[0-3] c d\nlink r x y c d\nlink x a[0-5]\nlink y b[0-3]\n");
  const auto s = schedule_tree_aapc(t);
  ASSERT_EQ(s.subtrees[0].size(), 6u);
  ASSERT_EQ(s.subtrees[1].size(), 4u);
  const auto start = s.group_start(0, 1);
  EXPECT_EQ(start, 0);
  // Senders of Table 2: base sequence twice, then rotated once, twice.
  const int senders[24] = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0};
  std::map<int, std::pair<int, int>> at;
  for (int x = 0; x < 6; ++x)
    for (int y = 0; y < 4; ++y) at[s.phase(s.subtrees[0][x], s.subtrees[1][y])] = {x, y};
  const auto T = s.num_phases;
  for (int q = 0; q < 24; ++q) {
    ASSERT_TRUE(at.count(static_cast<int>(start) + q));
    EXPECT_EQ(at[static_cast<int>(start) + q].first, senders[q]) << "phase " << q;
    // Step 1.a: receiver t_{1, (p - T) mod |M1|}.
    EXPECT_EQ(at[static_cast<int>(start) + q].second, static_cast<int>((((start + q - T) % 4) + 4) % 4));
  }
}

// verify_contention_free checks a round in O(1) a message (vertical segments in DFS
// order, contention_check.cpp); here every path is walked instead, on random rounds of
// random trees, and the two must agree round by round.
bool round_shares_a_link(const Topology& t, const std::vector<std::pair<int, int>>& round) {
  std::set<int> used;
  std::vector<int> path;
  for (const auto& [src, dst] : round) {
    path.clear();
    t.path_edge_ids(t.machine_node(src), t.machine_node(dst), path);
    for (int e : path)
      if (!used.insert(e).second) return true;
  }
  return false;
}

TEST(TreeSchedule, ContentionCheckAgreesWithWalkingThePaths) {
  std::mt19937_64 rng(77);
  int free_rounds = 0, contended_rounds = 0;
  for (int n = 0; n < 4000; ++n) {
    const int machines = 3 + static_cast<int>(rng() % 38);  // 3 .. 40
    const int switches = 1 + static_cast<int>(rng() % (n % 3 == 0 ? 3 : 16));
    const double chain = n % 4 == 0 ? 0.95 : n % 4 == 1 ? 0.0 : 0.5;
    // Every tenth tree is rooted at a machine (node 0 is the first node declared).
    Topology t = n % 10 == 0
                     ? Topology::parse("machine m0\n" + Topology::random(machines, switches, rng(), chain).to_text() +
                                       "link s0 m0\n")
                     : Topology::random(machines, switches, rng(), chain);
    const int M = t.num_machines();
    // Sparse rounds (2-4 messages: about as often free as not), denser ones, local copies
    // and repeated senders mixed in.
    const int k = n % 3 == 0 ? 2 + static_cast<int>(rng() % 3) : 1 + static_cast<int>(rng() % M);
    std::vector<std::pair<int, int>> round;
    Schedule s;
    s.nprocs = M;
    s.rounds.resize(1);
    for (int i = 0; i < k; ++i) {
      const int src = static_cast<int>(rng() % M), dst = static_cast<int>(rng() % M);
      round.push_back({t.machine_of_rank()[src], t.machine_of_rank()[dst]});
      s.rounds[0].transfers.push_back({src, dst, 0});
    }
    const bool contended = round_shares_a_link(t, round);
    for (auto how : {ContentionCheck::Segments, ContentionCheck::WalkPaths, ContentionCheck::Automatic}) {
      const auto v = verify_contention_free(s, t, how);
      ASSERT_EQ(v.ok, !contended) << "tree " << n << ", check " << static_cast<int>(how) << ":\n"
                                  << t.to_text() << v.summary();
      if (!v.ok) {
        ASSERT_FALSE(v.problems.empty()) << "tree " << n;
      }
    }
    (contended ? contended_rounds : free_rounds) += 1;
  }
  EXPECT_GT(free_rounds, 500);
  EXPECT_GT(contended_rounds, 500);
}

TEST(TreeSchedule, ContentionCheckNamesTheSharedLink) {
  // Fig. 1's AAPC schedule with one message moved into another phase.
  const Topology t = Topology::load(kDir + "/fig1.topo");
  Schedule rs = tree_rank_schedule(schedule_tree_aapc(t), t);
  ASSERT_TRUE(verify_contention_free(rs, t).ok);
  const Transfer moved = rs.rounds[1].transfers.back();
  rs.rounds[1].transfers.pop_back();
  rs.rounds[2].transfers.push_back(moved);
  for (auto how : {ContentionCheck::Segments, ContentionCheck::WalkPaths}) {
    const auto v = verify_contention_free(rs, t, how);
    ASSERT_FALSE(v.ok);
    EXPECT_NE(v.summary().find("round 2"), std::string::npos) << v.summary();
    EXPECT_NE(v.summary().find("share edge"), std::string::npos) << v.summary();
  }
}

}  // namespace
}  // namespace libcomm
