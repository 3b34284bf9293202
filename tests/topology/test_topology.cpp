// The switch-tree model and its text format (paper 003, section 3).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include "libcomm/error.hpp"
#include "libcomm/topology.hpp"

namespace libcomm {
namespace {

const std::string kDir = LIBCOMM_TOPOLOGY_DIR;

std::string error_of(const std::string& text) {
  try {
    Topology::parse(text, "t.topo");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> path_names(const Topology& t, const std::string& a, const std::string& b) {
  std::vector<std::string> out;
  for (const auto& e : t.path(t.find(a), t.find(b))) out.push_back(t.name(e.from) + ">" + t.name(e.to));
  return out;
}

TEST(Topology, Fig1PathOfTheText) {
  const Topology t = Topology::load(kDir + "/fig1.topo");
  EXPECT_EQ(t.num_machines(), 6);
  EXPECT_EQ(t.num_nodes(), 10);
  // Section 3: path(n0, n3) = {(n0,s0), (s0,s1), (s1,s3), (s3,n3)}.
  EXPECT_EQ(path_names(t, "n0", "n3"), (std::vector<std::string>{"n0>s0", "s0>s1", "s1>s3", "s3>n3"}));
  EXPECT_EQ(path_names(t, "n3", "n0"), (std::vector<std::string>{"n3>s3", "s3>s1", "s1>s0", "s0>n0"}));
  EXPECT_TRUE(t.path(t.find("n2"), t.find("n2")).empty());
  for (int m = 0; m < 6; ++m) EXPECT_EQ(t.name(t.machine_node(m)), "n" + std::to_string(m));
}

TEST(Topology, Fig1LoadsBottleneckAndBound) {
  const Topology t = Topology::load(kDir + "/fig1.topo");
  // Link s0 -- s1 splits 3 | 3: load 9, the bottleneck; s1 -- s3: 2 x 4 = 8; s1 -- n5: 5.
  EXPECT_EQ(t.aapc_load(), 9);
  const auto b = t.bottleneck_links();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(std::set<std::string>({t.name(b[0].a), t.name(b[0].b)}), (std::set<std::string>{"s0", "s1"}));
  for (const auto& l : t.links()) {
    const std::set<std::string> ends = {t.name(l.a), t.name(l.b)};
    const std::int64_t want = ends == std::set<std::string>{"s1", "s3"}   ? 8
                              : ends == std::set<std::string>{"s1", "n5"} ? 5
                              : ends == std::set<std::string>{"s0", "n0"} ? 5
                                                                          : l.load();
    EXPECT_EQ(l.load(), want);
    EXPECT_EQ(l.machines_a + l.machines_b, 6);
  }
  // |M| (|M| - 1) B / (|Mu| |Mv|) = 30 B / 9.
  EXPECT_DOUBLE_EQ(t.peak_aggregate_throughput(100.0), 30.0 * 100.0 / 9.0);
}

TEST(Topology, Fig5Bounds) {
  const Topology a = Topology::load(kDir + "/fig5a.topo");
  EXPECT_EQ(a.num_machines(), 24);
  EXPECT_EQ(a.aapc_load(), 23);
  EXPECT_EQ(a.bottleneck_links().size(), 24u);
  EXPECT_DOUBLE_EQ(a.peak_aggregate_throughput(100.0), 2400.0);
  const Topology b = Topology::load(kDir + "/fig5b.topo");
  EXPECT_EQ(b.num_machines(), 32);
  EXPECT_EQ(b.aapc_load(), 8 * 24);
  EXPECT_EQ(b.bottleneck_links().size(), 3u);
  EXPECT_NEAR(b.peak_aggregate_throughput(100.0), 516.67, 0.01);
  const Topology c = Topology::load(kDir + "/fig5c.topo");
  EXPECT_EQ(c.aapc_load(), 16 * 16);
  ASSERT_EQ(c.bottleneck_links().size(), 1u);
  EXPECT_DOUBLE_EQ(c.peak_aggregate_throughput(100.0), 387.5);
}

TEST(Topology, RangesCommentsAndRankLine) {
  const Topology t = Topology::parse(
      "# comment\n\nswitch s[0-1]   # two switches\nmachine n[1-3]x m\nlink s0 s1 n1x\n"
      "link s1 n2x n3x m\nranks m n3x n2x n1x\n",
      "x");
  EXPECT_EQ(t.num_machines(), 4);
  EXPECT_EQ(t.name(t.machine_node(0)), "n1x");
  EXPECT_EQ(t.name(t.machine_node(3)), "m");
  EXPECT_EQ(t.machine_of_rank(), (std::vector<int>{3, 2, 1, 0}));
  EXPECT_EQ(t.rank_of_machine(3), 0);
  EXPECT_EQ(t.declared_line(t.find("m")), 4);
}

TEST(Topology, DefaultRankMappingIsListingOrder) {
  const Topology t = Topology::parse("switch s\nmachine c b a\nlink s a b c\n");
  EXPECT_EQ(t.machine_of_rank(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(t.name(t.machine_node(t.machine_of_rank()[0])), "c");
}

TEST(Topology, ToTextRoundTrips) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Topology t = Topology::random(7 + static_cast<int>(seed), 4, seed, 0.5);
    if (seed % 2) {
      std::vector<int> m(t.num_machines());
      for (int r = 0; r < t.num_machines(); ++r) m[r] = (r * 5 + 1) % t.num_machines();
      if (std::set<int>(m.begin(), m.end()).size() == m.size()) t.set_machine_of_rank(m);
    }
    const Topology u = Topology::parse(t.to_text(), "roundtrip");
    ASSERT_EQ(u.num_machines(), t.num_machines());
    EXPECT_EQ(u.machine_of_rank(), t.machine_of_rank());
    EXPECT_EQ(u.aapc_load(), t.aapc_load());
    for (int a = 0; a < t.num_machines(); ++a)
      for (int b = 0; b < t.num_machines(); ++b)
        EXPECT_EQ(u.path(u.machine_node(a), u.machine_node(b)).size(),
                  t.path(t.machine_node(a), t.machine_node(b)).size());
  }
}

// Paths against an independent breadth-first search, and loads against counting paths.
TEST(Topology, PathsAndLoadsOnRandomTrees) {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const Topology t = Topology::random(3 + static_cast<int>(seed % 20), 1 + static_cast<int>(seed % 7),
                                        seed, (seed % 3) / 2.0);
    const int n = t.num_nodes();
    std::map<std::pair<int, int>, std::int64_t> use;
    for (int a = 0; a < t.num_machines(); ++a)
      for (int b = 0; b < t.num_machines(); ++b) {
        const int u = t.machine_node(a), v = t.machine_node(b);
        std::vector<int> prev(n, -1);
        std::queue<int> q;
        q.push(u);
        prev[u] = u;
        while (!q.empty()) {
          const int x = q.front();
          q.pop();
          for (int y : t.neighbours(x))
            if (prev[y] < 0) prev[y] = x, q.push(y);
        }
        std::vector<Topology::Edge> want;
        for (int x = v; x != u; x = prev[x]) want.insert(want.begin(), {prev[x], x});
        const auto got = t.path(u, v);
        ASSERT_EQ(got, want) << "seed " << seed;
        std::vector<int> ids;
        t.path_edge_ids(u, v, ids);
        ASSERT_EQ(ids.size(), got.size());
        for (std::size_t k = 0; k < ids.size(); ++k) EXPECT_EQ(ids[k], t.edge_id(got[k].from, got[k].to));
        for (const auto& e : got) ++use[{e.from, e.to}];
      }
    std::int64_t max_use = 0;
    for (const auto& [e, c] : use) max_use = std::max(max_use, c);
    EXPECT_EQ(t.aapc_load(), max_use) << "seed " << seed;
    for (const auto& l : t.links()) {
      const std::pair<int, int> down(l.a, l.b), up(l.b, l.a);
      EXPECT_EQ(use[down], l.load());
      EXPECT_EQ(use[up], l.load());
    }
  }
}

TEST(TopologyErrors, NameTheLine) {
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {"switch s\nmachine a b c\nlink s a b x\n", "t.topo:3: unknown node 'x'"},
      {"switch s t\nmachine a b c\nlink s a b c t\nlink t a\n", "t.topo:4: machine 'a' is not a leaf"},
      {"switch s t u\nmachine a b c\nlink s t a b c\nlink t u\nlink u s\n", "t.topo:5: link u -- s closes a cycle"},
      {"switch s t\nmachine a b c\nlink s t a b c\nlink t s\n", "t.topo:4: link t -- s closes a cycle"},
      {"switch s t\nmachine a b c d\nlink s a b c\nlink t d\n", "t.topo:1: disconnected part: node 't'"},
      {"switch s\nmachine a b c d\nlink s a b c\n", "t.topo:2: disconnected part: node 'd'"},
      {"switch s\nmachine a b\nlink s a b\n", "t.topo:2: the tree has 2 machine(s); at least 3"},
      {"switch s\nmachine a b c\nlink s a b c\nhub h\n", "t.topo:4: unknown directive 'hub'"},
      {"switch s\nmachine a b s\n", "t.topo:2: node 's' is already declared at line 1"},
      {"switch s\nmachine a b c\nlink s s\n", "t.topo:3: node 's' linked to itself"},
      {"switch s\nmachine a b c\nlink s\n", "t.topo:3: 'link A B [C ...]' needs at least two"},
      {"switch s\nmachine a n[3-1]\n", "t.topo:2: empty range 'n[3-1]'"},
      {"switch s\nmachine a b c\nlink s a b c\nranks a b\n", "t.topo:4: 'ranks' lists 2 machines"},
      {"switch s\nmachine a b c\nlink s a b c\nranks a b s\n", "t.topo:4: 'ranks' lists 's', which is a switch"},
      {"switch s\nmachine a b c\nlink s a b c\nranks a b a\n", "t.topo:4: 'ranks' lists machine 'a' twice"},
      {"", "t.topo: no nodes declared"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(c.text);
    EXPECT_TRUE(contains(msg, c.expect)) << "input:\n" << c.text << "message: '" << msg << "'\nexpected: '"
                                         << c.expect << "'";
  }
  EXPECT_THROW(Topology::load("/nonexistent/x.topo"), Error);
}

TEST(Topology, SingleSwitchAndSwitchOnlyBranches) {
  const Topology t = Topology::single_switch(5);
  EXPECT_EQ(t.aapc_load(), 4);
  // A switch leaf with no machine is allowed and carries no load.
  const Topology u = Topology::parse("switch s e\nmachine a b c\nlink s a b c e\n");
  for (const auto& l : u.links()) {
    if (u.name(l.b) == "e" || u.name(l.a) == "e") {
      EXPECT_EQ(l.load(), 0);
    }
  }
  EXPECT_EQ(u.aapc_load(), 2);
}

TEST(Topology, RegularTrees) {
  // 64 switches of 64 machines under one root: the 64 root links are the bottlenecks,
  // 64 | 4032 machines each.
  const Topology t = Topology::regular({64, 64});
  EXPECT_EQ(t.num_machines(), 4096);
  EXPECT_EQ(t.num_nodes(), 4096 + 65);
  EXPECT_EQ(t.aapc_load(), 64 * 4032);
  EXPECT_EQ(t.bottleneck_links().size(), 64u);
  EXPECT_DOUBLE_EQ(t.peak_aggregate_throughput(1.0), 4096.0 * 4095.0 / (64.0 * 4032.0));
  // Machines in listing order, the first 16 on the first leaf switch of the 16 x 16 x 16 tree.
  const Topology u = Topology::regular({16, 16, 16});
  EXPECT_EQ(u.num_machines(), 4096);
  EXPECT_EQ(u.name(u.parent(u.machine_node(0))), u.name(u.parent(u.machine_node(15))));
  EXPECT_NE(u.name(u.parent(u.machine_node(15))), u.name(u.parent(u.machine_node(16))));
  EXPECT_EQ(u.depth(u.machine_node(4095)), 3);
  // One level is one switch (single_switch is regular({m})): 4 | 1 machines on every link.
  const Topology one = Topology::regular({5});
  EXPECT_EQ(one.num_nodes(), 6);
  EXPECT_EQ(one.aapc_load(), 4);
  EXPECT_EQ(one.bottleneck_links().size(), 5u);
  // Bad shapes are refused with the reason.
  auto message = [](const std::vector<int>& fanout) {
    try {
      (void)Topology::regular(fanout);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_TRUE(contains(message({}), "at least one fan-out")) << message({});
  EXPECT_TRUE(contains(message({4, 0}), "fan-out 0 at level 2")) << message({4, 0});
  EXPECT_TRUE(contains(message({2}), "2 machines")) << message({2});
  EXPECT_TRUE(contains(message({300, 300}), "more than 65536 nodes")) << message({300, 300});
}

}  // namespace
}  // namespace libcomm

TEST(Topology, RestrictedKeepsTheSubCommunicatorsMachinesAndTheSwitchesBetweenThem) {
  using libcomm::Topology;
  // 4 switches of 4 machines under a root: ranks 0, 1 and 5 keep two leaf switches and the
  // root; ranks 4..7 of one switch lose the root; sub-rank k runs on rank ranks[k]'s machine.
  const Topology t = Topology::regular({4, 4});
  const Topology a = t.restricted({5, 0, 1});
  EXPECT_EQ(a.num_machines(), 3);
  EXPECT_EQ(a.num_nodes(), 6);  // root, two switches, three machines
  EXPECT_EQ(a.name(a.machine_node(a.machine_of_rank()[0])), t.name(t.machine_node(t.machine_of_rank()[5])));
  EXPECT_EQ(a.path(a.machine_node(a.machine_of_rank()[0]), a.machine_node(a.machine_of_rank()[1])).size(), 4u);
  EXPECT_EQ(a.path(a.machine_node(a.machine_of_rank()[1]), a.machine_node(a.machine_of_rank()[2])).size(), 2u);
  const Topology b = t.restricted({4, 5, 6, 7});
  EXPECT_EQ(b.num_nodes(), 5);  // one switch and its four machines
  EXPECT_EQ(b.aapc_load(), 3);  // a star: each machine's link carries its 3 messages
  EXPECT_THROW(t.restricted({0, 0, 1}), libcomm::Error);
  EXPECT_THROW(t.restricted({0, 99, 1}), libcomm::Error);
  EXPECT_THROW(t.restricted({0, 1}), libcomm::Error);
}
