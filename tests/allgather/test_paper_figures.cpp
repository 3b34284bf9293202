// Regenerates the schedules of paper 004 from libcomm's cube formulas (the ones the MPI
// algorithms execute) and compares them cell by cell with the tables of the paper text
// (paper_tables.hpp, copied verbatim): Table 1 (Gray code), Figs. 5 and 6 (single cycle),
// Fig. 7 (Gray path on binary node addresses), Figs. 8-11 (which element sits in which
// node's memory after each d-cycles broadcast step, d = 3, binary and Gray node order,
// d and 2d elements per node), Fig. 12 (all-to-one reduction) and Figs. 13-19 (sender /
// receiver / done per memory location and step of the all-to-all reduction).
//
// The text was extracted from a PDF; where a cell of the text is provably damaged, the
// test lists it in kKnownDefects with the reason, and requires the mismatches to be
// exactly that list (so a regression anywhere else, or a fix of the data, fails).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "libcomm/allgather.hpp"
#include "paper_tables.hpp"

namespace {

using namespace libcomm;
using Rows = std::vector<std::vector<std::string>>;

Rows parse(const char* text) {
  Rows rows;
  std::stringstream ss(text);
  std::string line;
  std::getline(ss, line);  // header
  while (std::getline(ss, line)) {
    std::vector<std::string> cells;
    std::string cell;
    std::stringstream ls(line);
    while (std::getline(ls, cell, '\t')) cells.push_back(cell);
    if (!line.empty() && line.back() == '\t') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

std::string cell_at(const Rows& r, std::size_t row, std::size_t col) {
  if (row >= r.size() || col >= r[row].size()) return "";
  return r[row][col];
}

// Compares `computed` with `paper` (same shape: rows x columns given by computed),
// appending "Figure N r<row> c<col>: paper 'x' computed 'y'" for every difference.
void compare(const std::string& name, const Rows& paper, const Rows& computed,
             std::vector<std::string>& diffs) {
  if (paper.size() != computed.size())
    diffs.push_back(name + " rows: paper " + std::to_string(paper.size()) + " computed " +
                    std::to_string(computed.size()));
  for (std::size_t r = 0; r < computed.size(); ++r)
    for (std::size_t c = 0; c < computed[r].size(); ++c) {
      const std::string p = cell_at(paper, r, c);
      if (p != computed[r][c])
        diffs.push_back(name + " r" + std::to_string(r) + " c" + std::to_string(c) + ": paper '" + p +
                        "' computed '" + computed[r][c] + "'");
    }
}

std::string bits(std::uint32_t x, int d) {
  std::string s;
  for (int b = d - 1; b >= 0; --b) s += ((x >> b) & 1u) ? '1' : '0';
  return s;
}

constexpr int kD = 3, kP = 8;

// Figs. 8-11: broadcast with d = 3, `blocks` blocks of d elements per node. The table is
// produced by simulating the exchanges (every node swaps its current slot-i element with
// the neighbour across dimension dcycles_dim(u, i)) and the simulated content is checked
// against the placement formula dcycles_broadcast_origin that the MPI code uses.
Rows broadcast_table(int blocks, bool gray_labels, std::vector<std::string>& formula_errors) {
  const auto label = [&](std::uint32_t pa) { return gray_labels ? cube::gray_inverse(pa) : pa; };
  Rows rows;
  // cur[pa][i] = origin (cube address) of the element in node pa's working slot i
  std::vector<std::vector<std::uint32_t>> cur(kP, std::vector<std::uint32_t>(kD));
  for (std::uint32_t pa = 0; pa < kP; ++pa)
    for (int i = 0; i < kD; ++i) cur[pa][i] = pa;
  const auto emit = [&](const std::string& step, int u) {
    for (int k = 0; k < blocks; ++k)
      for (int i = 0; i < kD; ++i) {
        std::vector<std::string> row = {(k == 0 && i == 0) ? step : "", std::to_string(k * kD + i)};
        for (std::uint32_t pa = 0; pa < kP; ++pa) {
          std::string v = std::to_string(i) + (blocks > 1 ? std::to_string(k) : "") +
                          std::to_string(label(cur[pa][i]));
          row.push_back(v);
        }
        row.push_back(u < 0 ? "" : std::to_string(cube::dcycles_dim(kD, u, i)));
        rows.push_back(row);
      }
  };
  emit("Init.", -1);
  for (int u = 0; u < kP - 1; ++u) {
    auto next = cur;
    for (std::uint32_t pa = 0; pa < kP; ++pa)
      for (int i = 0; i < kD; ++i) {
        next[pa][i] = cur[pa ^ (1u << cube::dcycles_dim(kD, u, i))][i];
        if (next[pa][i] != cube::dcycles_broadcast_origin(kD, pa, u + 1, i))
          formula_errors.push_back("step " + std::to_string(u) + " node " + std::to_string(pa));
      }
    cur = next;
    emit(std::to_string(u), u);
  }
  return rows;
}

// Figs. 12-19: reduction status per (memory location, node) in step u. The marks come
// from the per-node block selection the MPI code runs (dcycles_reduce_send_block /
// _recv_block); "○" marks a node whose partial already left in an earlier step.
std::vector<std::vector<std::string>> reduce_marks(int u, int blocks) {
  std::vector<std::vector<std::string>> m(static_cast<std::size_t>(blocks * kD), std::vector<std::string>(kP));
  for (int v = 0; v <= u; ++v)
    for (std::uint32_t pa = 0; pa < kP; ++pa)
      for (int i = 0; i < kD; ++i) {
        const std::uint32_t js = cube::dcycles_reduce_send_block(kD, pa, i, v);
        const std::uint32_t jr = cube::dcycles_reduce_recv_block(kD, pa, i, v);
        if (static_cast<int>(js) < blocks) m[js * kD + i][pa] = v == u ? "●" : "○";
        if (v == u && static_cast<int>(jr) < blocks) m[jr * kD + i][pa] = "+";
      }
  return m;
}

// Cells where the paper's table disagrees with the schedule, each provably a defect of
// the table (typo or a glyph lost / shifted in the PDF): the neighbouring figures, which
// show the same sums one step earlier and later, agree with the schedule. The tests
// require the mismatches to be exactly this list, so a regression anywhere else, or a
// change of the data, fails.
const std::set<std::string> kKnownDefects = {
    // Fig. 10, step 3: the memory column reads 0,1,2,4,5,6 instead of 0..5 (the element
    // columns of those rows agree with the computation).
    "Figure 10 r27 c1: paper '4' computed '3'",
    "Figure 10 r28 c1: paper '5' computed '4'",
    "Figure 10 r29 c1: paper '6' computed '5'",
    // Fig. 17 (step 4), memory 11 (block 3, location 2): the path of this sum is
    // 1,5,4,0,2,6,7,3; P7 is marked done although Fig. 18 shows it receiving (+) in step 5.
    "Figure 17 r11 c8: paper '○' computed ''",
    // Fig. 17, memory 22 (block 7, location 1, path 6,4,0,2,3,1,5,7): the done marks of
    // P4 and P6 are printed one column right (P5, P7); Figs. 16 and 18 mark P4 and P6.
    "Figure 17 r22 c5: paper '' computed '○'",
    "Figure 17 r22 c6: paper '○' computed ''",
    "Figure 17 r22 c7: paper '' computed '○'",
    "Figure 17 r22 c8: paper '○' computed ''",
    // Fig. 18 (step 5), memory 20 (block 6, location 2, path 4,0,1,5,7,3,2,6): the done
    // mark of P5 is missing (present in Figs. 17 and 19).
    "Figure 18 r20 c6: paper '' computed '○'",
    // Fig. 19 (step 6), memory 15 (block 5, location 0): the marks are one column right
    // (P5 sends to P6 in dimension 0 is impossible: 5 ^ 6 = 3; block 5 must end in P5).
    "Figure 19 r15 c5: paper '○' computed '●'",
    "Figure 19 r15 c6: paper '●' computed '+'",
    "Figure 19 r15 c7: paper '+' computed '○'",
    // Fig. 19, memories 19, 21, 22, 23: the row has a receiver (+) but no sender; the
    // filled circle of the last sender (the node one dimension away) is printed open.
    "Figure 19 r19 c5: paper '○' computed '●'",
    "Figure 19 r21 c7: paper '○' computed '●'",
    "Figure 19 r22 c6: paper '○' computed '●'",
    "Figure 19 r23 c4: paper '○' computed '●'",
};

// Every difference must be a known defect of one of `figures`, and every known defect
// of those figures must still be seen.
void expect_only_known_defects(const std::vector<std::string>& diffs, const std::vector<std::string>& figures) {
  const auto of = [&](const std::string& d) {
    for (const auto& f : figures)
      if (d.rfind(f + " ", 0) == 0) return true;
    return false;
  };
  const std::set<std::string> got(diffs.begin(), diffs.end());
  for (const auto& d : got)
    if (!kKnownDefects.count(d)) ADD_FAILURE() << "unexpected difference: " << d;
  for (const auto& d : kKnownDefects)
    if (of(d) && !got.count(d)) ADD_FAILURE() << "known defect no longer seen: " << d;
}

// A sanity check of the defect list itself: in every row of Figs. 12-19 that is not
// listed, the paper has exactly one sender and one receiver, across the row's dimension.
std::size_t count_defective_rows(const Rows& paper, const std::string& name, std::size_t first_node_col) {
  std::size_t bad = 0;
  for (std::size_t r = 0; r < paper.size(); ++r) {
    int sender = -1, receiver = -1, senders = 0, receivers = 0;
    for (int pa = 0; pa < kP; ++pa) {
      const std::string c = cell_at(paper, r, first_node_col + static_cast<std::size_t>(pa));
      if (c == "●") { sender = pa; ++senders; }
      if (c == "+") { receiver = pa; ++receivers; }
    }
    const int dim = std::stoi(cell_at(paper, r, first_node_col + kP));
    const bool ok = senders == 1 && receivers == 1 && (sender ^ receiver) == (1 << dim);
    if (!ok) {
      ++bad;
      bool listed = false;
      for (const auto& d : kKnownDefects)
        listed |= d.rfind(name + " r" + std::to_string(r) + " ", 0) == 0;
      EXPECT_TRUE(listed) << name << " row " << r << " is inconsistent in the paper but not listed";
    }
  }
  return bad;
}

TEST(PaperFigures, Table1GrayCodeAndTransitionSequence) {
  const Rows paper = parse(paper004::kTable1);
  Rows computed;
  for (std::uint32_t x = 0; x < 8; ++x) computed.push_back({std::to_string(x), bits(cube::gray(x), 3)});
  std::vector<std::string> diffs;
  compare("Table 1", paper, computed, diffs);
  EXPECT_TRUE(diffs.empty()) << diffs.front();
  EXPECT_EQ(cube::transition_sequence(3), (std::vector<int>{0, 1, 0, 2, 0, 1, 0}));
  for (std::uint32_t x = 0; x < 4096; ++x) ASSERT_EQ(cube::gray_inverse(cube::gray(x)), x);
}

TEST(PaperFigures, Figure5SingleCycleBroadcast) {
  // Left cyclic shifts on 4 nodes; memory m of node j after step s holds X_{(j+m) mod 4}.
  Rows computed;
  for (int s = 0; s < 4; ++s)
    for (int m = 0; m <= s; ++m) {
      std::vector<std::string> row = {m == 0 ? std::to_string(s) : ""};
      for (std::uint32_t j = 0; j < 4; ++j)
        row.push_back("X" + std::to_string(cube::ring_origin(NodeOrder::Binary, 4, j, m)));
      computed.push_back(row);
    }
  std::vector<std::string> diffs;
  compare("Figure 5", parse(paper004::kFigure5), computed, diffs);
  EXPECT_TRUE(diffs.empty()) << diffs.front();
}

TEST(PaperFigures, Figure6SingleCycleReduction) {
  // terms[j][b]: number of contributions in node j's partial for block b (0 = sent away).
  const int n = 4;
  std::vector<std::vector<int>> terms(n, std::vector<int>(n, 1));
  Rows computed;
  const auto emit = [&](int s) {
    for (int b = 0; b < n; ++b) {
      std::vector<std::string> row = {b == 0 ? std::to_string(s) : ""};
      for (int j = 0; j < n; ++j) {
        std::string v;
        for (int t = 0; t < terms[j][b]; ++t) v += (t ? "+Y" : "Y") + std::to_string(b);
        row.push_back(terms[j][b] ? v : "-");
      }
      computed.push_back(row);
    }
  };
  emit(0);
  for (int s = 1; s < n; ++s) {
    auto next = terms;
    for (int j = 0; j < n; ++j) {
      const auto bo = cube::ring_reduce_block(NodeOrder::Binary, n, static_cast<std::uint32_t>(j), s);
      const int to = (j + 1) % n;
      ASSERT_EQ(cube::ring_reduce_block(NodeOrder::Binary, n, static_cast<std::uint32_t>(to), s + 1), bo);
      next[to][bo] += terms[j][bo];
      next[j][bo] = 0;
    }
    terms = next;
    emit(s);
  }
  std::vector<std::string> diffs;
  compare("Figure 6", parse(paper004::kFigure6), computed, diffs);
  EXPECT_TRUE(diffs.empty()) << diffs.front();
  for (int j = 0; j < n; ++j) EXPECT_EQ(terms[j][j], n);
}

TEST(PaperFigures, Figure7GrayPathOnBinaryAddresses) {
  Rows computed;
  {
    std::vector<std::string> row;
    for (int j = 0; j < 8; ++j) row.push_back(std::to_string(j));
    computed.push_back(row);
  }
  for (int s = 0; s < 8; ++s) {
    std::vector<std::string> row;
    for (std::uint32_t pa = 0; pa < 8; ++pa) row.push_back(bits(cube::ring_origin(NodeOrder::Gray, 8, pa, s), 3));
    computed.push_back(row);
  }
  std::vector<std::string> diffs;
  compare("Figure 7", parse(paper004::kFigure7), computed, diffs);
  EXPECT_TRUE(diffs.empty()) << diffs.front();
}

TEST(PaperFigures, Figures8to11DCyclesBroadcast) {
  struct Fig {
    const char* text;
    std::string name;
    int blocks;
    bool gray;
  };
  const Fig figs[] = {{paper004::kFigure8, "Figure 8", 1, false},
                      {paper004::kFigure9, "Figure 9", 1, true},
                      {paper004::kFigure10, "Figure 10", 2, false},
                      {paper004::kFigure11, "Figure 11", 2, true}};
  std::vector<std::string> diffs;
  for (const auto& f : figs) {
    std::vector<std::string> formula_errors;
    const Rows computed = broadcast_table(f.blocks, f.gray, formula_errors);
    EXPECT_TRUE(formula_errors.empty()) << f.name << ": simulation differs from the placement formula at "
                                        << formula_errors.front();
    Rows paper = parse(f.text);
    if (f.name == "Figure 11") {
      // Step 3 of Fig. 11 is damaged in the text: its six rows are printed with two-digit
      // labels (element, node: the block digit is missing) and the labels of block 0
      // repeated for block 1. Compare those rows on what they carry: element and node
      // digit of the computed label.
      for (std::size_t r = 24; r < 30; ++r) {
        ASSERT_EQ(paper[r].size() >= 10, true);
        for (std::size_t c = 2; c < 10; ++c) {
          const std::string& want = computed[r][c];
          const std::string two = std::string(1, want[0]) + want.back();
          const std::string block0 = computed[r - (r >= 27 ? 3 : 0)][c];
          const std::string two0 = std::string(1, block0[0]) + block0.back();
          EXPECT_EQ(paper[r][c], r >= 27 ? two0 : two) << "Figure 11 step 3 row " << r << " col " << c;
          paper[r][c] = want;  // checked above; the full comparison below covers the rest
        }
      }
    }
    compare(f.name, paper, computed, diffs);
  }
  expect_only_known_defects(diffs, {"Figure 8", "Figure 9", "Figure 10", "Figure 11"});
}

TEST(PaperFigures, Figure12AllToOneReduction) {
  const Rows paper = parse(paper004::kFigure12);
  Rows computed;
  for (int u = 0; u < kP - 1; ++u) {
    const auto m = reduce_marks(u, 1);
    for (int i = 0; i < kD; ++i) {
      std::vector<std::string> row = {i == 0 ? std::to_string(u) : "", std::to_string(i)};
      for (int pa = 0; pa < kP; ++pa) row.push_back(m[i][pa]);
      row.push_back(std::to_string(cube::dcycles_dim(kD, u, i)));
      computed.push_back(row);
    }
  }
  std::vector<std::string> diffs;
  compare("Figure 12", paper, computed, diffs);
  for (const auto& d : diffs) ADD_FAILURE() << d;
  // Fig. 12 has step and memory columns: nodes start at column 2.
  Rows nodes_only = paper;
  for (auto& row : nodes_only) row.erase(row.begin());
  EXPECT_EQ(count_defective_rows(nodes_only, "Figure 12", 1), 0u);
}

TEST(PaperFigures, Figures13to19AllToAllReductionSteps) {
  const char* texts[] = {paper004::kFigure13, paper004::kFigure14, paper004::kFigure15, paper004::kFigure16,
                         paper004::kFigure17, paper004::kFigure18, paper004::kFigure19};
  std::vector<std::string> diffs;
  std::size_t defective_rows = 0;
  for (int u = 0; u < kP - 1; ++u) {
    const auto m = reduce_marks(u, kP);
    Rows computed;
    for (int s = 0; s < kP * kD; ++s) {
      std::vector<std::string> row = {std::to_string(s)};
      for (int pa = 0; pa < kP; ++pa) row.push_back(m[s][pa]);
      row.push_back(std::to_string(cube::dcycles_dim(kD, u, s % kD)));
      computed.push_back(row);
    }
    compare("Figure " + std::to_string(13 + u), parse(texts[u]), computed, diffs);
    defective_rows += count_defective_rows(parse(texts[u]), "Figure " + std::to_string(13 + u), 1);
  }
  expect_only_known_defects(diffs, {"Figure 13", "Figure 14", "Figure 15", "Figure 16", "Figure 17",
                                    "Figure 18", "Figure 19"});
  // Rows where the paper itself has no single sender/receiver pair: 19/15, 19/19, 19/21,
  // 19/22, 19/23 (the ones with done-mark-only defects keep a consistent pair).
  EXPECT_EQ(defective_rows, 5u);
}

// Properties the MPI code relies on, for every cube dimension up to 10.
TEST(CubeSchedules, DCyclesInvariants) {
  for (int d = 1; d <= 10; ++d) {
    const std::uint32_t p = 1u << d;
    const auto t = cube::transition_sequence(d);
    for (std::size_t u = 0; u < t.size(); ++u) ASSERT_EQ(t[u], t[t.size() - 1 - u]) << "symmetry";
    for (int u = 0; u + 1 < static_cast<int>(p); ++u) {
      std::set<int> dims;
      for (int i = 0; i < d; ++i) dims.insert(cube::dcycles_dim(d, u, i));
      ASSERT_EQ(static_cast<int>(dims.size()), d) << "d channels at once, d = " << d << " u = " << u;
    }
    // Broadcast: every node receives every other node's subblock i exactly once.
    for (std::uint32_t pa = 0; pa < p; pa += std::max(1u, p / 16))
      for (int i = 0; i < d; ++i) {
        std::set<std::uint32_t> seen;
        for (int j = 0; j < static_cast<int>(p); ++j) seen.insert(cube::dcycles_broadcast_origin(d, pa, j, i));
        ASSERT_EQ(seen.size(), p);
      }
    // Reduction: the path of (j, i) visits every node once, ends at j, partners agree.
    for (std::uint32_t j = 0; j < p; j += std::max(1u, p / 16))
      for (int i = 0; i < d; ++i) {
        std::set<std::uint32_t> senders;
        for (int u = 0; u + 1 < static_cast<int>(p); ++u) {
          const auto s = cube::dcycles_reduce_sender(d, j, i, u), r = cube::dcycles_reduce_receiver(d, j, i, u);
          ASSERT_EQ(s ^ r, 1u << cube::dcycles_dim(d, u, i));
          ASSERT_EQ(cube::dcycles_reduce_send_block(d, s, i, u), j);
          ASSERT_EQ(cube::dcycles_reduce_recv_block(d, r, i, u), j);
          if (u > 0) {
            ASSERT_EQ(s, cube::dcycles_reduce_receiver(d, j, i, u - 1));
          }
          senders.insert(s);
        }
        ASSERT_EQ(senders.size(), p - 1);
        ASSERT_FALSE(senders.count(j));
        ASSERT_EQ(cube::dcycles_reduce_receiver(d, j, i, static_cast<int>(p) - 2), j);
      }
  }
}

TEST(CubeSchedules, Figure20Partitioning) {
  for (std::size_t n : {0u, 1u, 2u, 5u, 7u, 24u, 1000u})
    for (int d = 1; d <= 9; ++d) {
      std::size_t next = 0;
      const std::size_t beta = (n + d - 1) / d;
      for (int i = 0; i < d; ++i) {
        const auto part = cube::subblock(n, d, i);
        ASSERT_EQ(part.offset, next);
        const std::size_t gamma = n - d * (beta == 0 ? 0 : beta - 1);
        ASSERT_EQ(part.size, beta == 0 ? 0 : (static_cast<std::size_t>(i) < gamma ? beta : beta - 1));
        next += part.size;
      }
      ASSERT_EQ(next, n);
    }
  // CM-200 consecutive allocation: 10 elements on 4 nodes -> 3, 3, 3, 1; 9 on 4 -> 3,3,3,0.
  EXPECT_EQ(cube::consecutive_counts(10, 4), (std::vector<std::size_t>{3, 3, 3, 1}));
  EXPECT_EQ(cube::consecutive_counts(9, 4), (std::vector<std::size_t>{3, 3, 3, 0}));
  EXPECT_EQ(cube::consecutive_counts(5, 4), (std::vector<std::size_t>{2, 2, 1, 0}));
}

}  // namespace
