// NodeMap specs (ppn=, sizes=, map=, file:, flat) and their errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "error_helpers.hpp"
#include "libcomm/error.hpp"
#include "libcomm/node_map.hpp"

namespace libcomm {
namespace {

using testing::contains;
using testing::error_of;

// Every accessor tells the same story.
void expect_consistent(const NodeMap& m) {
  int total = 0;
  for (int n = 0; n < m.num_nodes(); ++n) {
    const auto& ranks = m.ranks_of_node(n);
    EXPECT_EQ(static_cast<int>(ranks.size()), m.node_size(n));
    EXPECT_GT(m.node_size(n), 0);
    EXPECT_TRUE(std::is_sorted(ranks.begin(), ranks.end()));
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      EXPECT_EQ(m.node_of(ranks[i]), n);
      EXPECT_EQ(m.local_index(ranks[i]), static_cast<int>(i));
    }
    total += m.node_size(n);
  }
  EXPECT_EQ(total, m.num_ranks());
  for (int r = 0; r < m.num_ranks(); ++r) {
    EXPECT_EQ(m.ranks_of_node(m.node_of(r)).at(m.local_index(r)), r);
    EXPECT_EQ(m.node_of_rank()[r], m.node_of(r));
  }
  EXPECT_EQ(static_cast<int>(m.node_sizes().size()), m.num_nodes());
}

// A temporary file removed at the end of the test.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    path = (std::filesystem::temp_directory_path() /
            ("libcomm_nodes_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
               .string();
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
  static inline int counter = 0;
};

TEST(NodeMap, PpnSplitsConsecutiveRanksWithASmallerLastNode) {
  const NodeMap m = NodeMap::from_spec("ppn=4", 10);
  EXPECT_EQ(m.num_ranks(), 10);
  EXPECT_EQ(m.num_nodes(), 3);
  EXPECT_EQ(m.node_sizes(), (std::vector<int>{4, 4, 2}));
  EXPECT_EQ(m.ranks_of_node(2), (std::vector<int>{8, 9}));
  EXPECT_EQ(m.node_of(5), 1);
  EXPECT_EQ(m.local_index(5), 1);
  EXPECT_EQ(m.describe(), "3 nodes: sizes 4,4,2");
  expect_consistent(m);
  EXPECT_EQ(NodeMap::from_spec("ppn=4", 8).node_sizes(), (std::vector<int>{4, 4}));
  EXPECT_EQ(NodeMap::from_spec("ppn=16", 3).node_sizes(), (std::vector<int>{3}));
  EXPECT_EQ(NodeMap::from_spec("ppn=1", 3), NodeMap::one_rank_per_node(3));
}

TEST(NodeMap, Sizes) {
  const NodeMap m = NodeMap::from_spec("sizes=1,2,3", 6);
  EXPECT_EQ(m.node_sizes(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(m.node_of_rank(), (std::vector<int>{0, 1, 1, 2, 2, 2}));
  EXPECT_EQ(m.local_index(4), 1);
  EXPECT_EQ(m, NodeMap::from_sizes({1, 2, 3}));
  expect_consistent(m);
}

TEST(NodeMap, MapRenumbersNodesInOrderOfFirstAppearance) {
  const NodeMap m = NodeMap::from_spec("map=7,7,3,5,3,7", 6);
  EXPECT_EQ(m.num_nodes(), 3);
  EXPECT_EQ(m.node_of_rank(), (std::vector<int>{0, 0, 1, 2, 1, 0}));
  EXPECT_EQ(m.ranks_of_node(0), (std::vector<int>{0, 1, 5}));
  EXPECT_EQ(m.ranks_of_node(1), (std::vector<int>{2, 4}));
  EXPECT_EQ(m.local_index(5), 2);
  EXPECT_EQ(m.local_index(4), 1);
  expect_consistent(m);
  // Interleaved nodes (non-consecutive ranks).
  const NodeMap alt = NodeMap::from_spec("map=0,1,0,1,0", 5);
  EXPECT_EQ(alt.node_sizes(), (std::vector<int>{3, 2}));
  EXPECT_EQ(alt.ranks_of_node(1), (std::vector<int>{1, 3}));
  expect_consistent(alt);
}

TEST(NodeMap, FileWithComments) {
  const TempFile f("# three nodes of a test cluster\n"
                   "2 3   # two sizes on one line\n"
                   "\n"
                   "   1\n"
                   "# trailing comment\n");
  const NodeMap m = NodeMap::from_spec("file:" + f.path, 6);
  EXPECT_EQ(m.node_sizes(), (std::vector<int>{2, 3, 1}));
  expect_consistent(m);
}

TEST(NodeMap, FlatAndOneRankPerNode) {
  const NodeMap m = NodeMap::from_spec("flat", 7);
  EXPECT_EQ(m.num_nodes(), 7);
  EXPECT_EQ(m, NodeMap::one_rank_per_node(7));
  for (int r = 0; r < 7; ++r) {
    EXPECT_EQ(m.node_of(r), r);
    EXPECT_EQ(m.local_index(r), 0);
  }
  EXPECT_EQ(NodeMap::from_spec("flat", 1).describe(), "1 node: sizes 1");
  expect_consistent(m);
}

TEST(NodeMap, ManyShapesAreConsistent) {
  for (int p = 1; p <= 20; ++p) {
    for (int ppn = 1; ppn <= p + 1; ++ppn) {
      const NodeMap m = NodeMap::from_spec("ppn=" + std::to_string(ppn), p);
      EXPECT_EQ(m.num_ranks(), p);
      EXPECT_EQ(m.num_nodes(), (p + ppn - 1) / ppn);
      expect_consistent(m);
    }
    std::string spec = "map=";
    for (int r = 0; r < p; ++r) spec += (r ? "," : "") + std::to_string((r * 7) % 3);
    expect_consistent(NodeMap::from_spec(spec, p));
  }
}

struct BadSpec {
  std::string spec;
  int nranks;
  std::vector<std::string> message_parts;
};

TEST(NodeMap, ErrorsNameTheProblem) {
  const TempFile garbage_file("2 3\n4 x # bad\n");
  const TempFile zero_file("2 0\n");
  const TempFile empty_file("# nothing here\n\n");
  const TempFile short_file("1 2\n");
  const std::vector<BadSpec> cases = {
      {"sizes=1,2", 6, {"sizes=1,2", "covers 3 ranks", "has 6"}},
      {"sizes=1,2,3,4", 6, {"covers 10 ranks"}},
      {"sizes=2,0,4", 6, {"size 0", "positive"}},
      {"sizes=-1,7", 6, {"size -1", "positive"}},
      // Found by fuzz_node_map: a huge first size with a zero after it must fail on the
      // zero without first allocating the huge node (the fuzzer ran out of memory).
      {"sizes=440000000,0", 7, {"node 1", "size 0", "positive"}},
      {"sizes=", 3, {"not an integer"}},
      {"sizes=1,,2", 3, {"not an integer"}},
      {"sizes=a,b", 2, {"'a'", "not an integer"}},
      {"sizes=1.5,1.5", 3, {"not an integer"}},
      {"ppn=0", 4, {"ppn", "positive"}},
      {"ppn=-2", 4, {"ppn", "positive"}},
      {"ppn=x", 4, {"not an integer"}},
      {"ppn=2,2", 4, {"ppn must be one positive integer"}},
      {"map=0,0", 3, {"covers 2 ranks", "has 3"}},
      {"map=0,-1", 2, {"negative"}},
      {"garbage", 4, {"unknown spec 'garbage'", "ppn=N"}},
      {"", 4, {"unknown spec"}},
      {"shared", 4, {"unknown spec 'shared'"}},  // needs MPI: Comm handles it
      {"PPN=2", 4, {"unknown spec"}},
      {"file:/nonexistent/libcomm/nodes.txt", 4, {"/nonexistent/libcomm/nodes.txt", "cannot open"}},
      {"file:" + garbage_file.path, 9, {garbage_file.path, "line 2", "'x'"}},
      {"file:" + zero_file.path, 2, {"line 1", "'0'", "positive"}},
      {"file:" + empty_file.path, 2, {"no node sizes"}},
      {"file:" + short_file.path, 4, {"covers 3 ranks", "has 4"}},
      {"flat", 0, {"positive"}},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of([&] { NodeMap::from_spec(c.spec, c.nranks); });
    ASSERT_FALSE(msg.empty()) << "spec '" << c.spec << "' with P = " << c.nranks
                              << " was accepted";
    for (const auto& part : c.message_parts)
      EXPECT_TRUE(contains(msg, part)) << "spec '" << c.spec << "': message '" << msg
                                       << "' does not mention '" << part << "'";
  }
  EXPECT_THROW(NodeMap::from_sizes({3, 0}), Error);
}

}  // namespace
}  // namespace libcomm
