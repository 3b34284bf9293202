// A4: the four-stage algorithm for any number of nodes (paper 001, section 3.2).
//
// Nodes form a row-major array of C = ceil(sqrt P) columns and R = ceil(P / C) rows; the
// last row holds r = P % C nodes when C does not divide P (3.2, Fig. 5).
//   Stage I   R-Distribute + R-Comm: every message is cut so that, of every P elements
//             for node j, R go to each complete column and R - 1 to each incomplete
//             column (Fig. 11, load balancing 3.2.2 C); sent along the row under the
//             revised R-schedule (3.2.2 B, Fig. 10). The incomplete row sends what falls
//             on its C - r pseudo-nodes to the complete rows (3.2.2 A, Fig. 8).
//   Stage II  C-Distribute + C-Comm: evenly along the column (C-schedule, Fig. 6).
//   Stage III C-Collect + R-Comm: everything for column c to the row peer in column c
//             (again the revised R-schedule with pseudo-nodes).
//   Stage IV  R-Collect + C-Comm: everything for node j to node j.
#include <string>

#include "alltoallv_internal.hpp"

namespace libcomm {

namespace {
void set_layout(FourStageGeometry& g, int columns) {
  g.columns = columns;
  g.rows = (g.nprocs + columns - 1) / columns;
  g.incomplete = g.nprocs % columns;
}
}  // namespace

FourStageGeometry four_stage_geometry(int p) {
  require(p > 0, "four_stage: P must be positive, got " + std::to_string(p));
  FourStageGeometry g;
  g.nprocs = p;
  set_layout(g, detail::ceil_sqrt(p));
  // 3.2.2 A: the r nodes of the incomplete row need r complete rows (R - 1 >= r). That
  // fails only for P = ceil(sqrt P) * floor(sqrt P) - 1; then C = floor(sqrt P).
  if (g.incomplete > g.rows - 1) {
    set_layout(g, detail::floor_sqrt(p));
    g.rearranged = true;
    require(g.incomplete <= g.rows - 1,
            "four_stage: internal error, no layout for P = " + std::to_string(p));
  }
  return g;
}

int FourStageGeometry::row_partner(int rank, int c) const {
  const int node = row_of(rank) * columns + c;
  if (node < nprocs) return node;
  return column_of(rank) * columns + c;  // pseudo-node of the incomplete row (3.2.2 A)
}

namespace detail {
namespace {

// Revised R-schedule (3.2.2 B, Fig. 10). Row x: in step k = 1..C the node in column c
// sends to column (c + k) % C (Fig. 9; the message to itself in step C). The node in
// column m of the incomplete row sends what falls on pseudo-node column j >= r to node
// (m, j); these messages have priority. In complete row m < r the node in column
// (m - k') mod C, k' = 0 .. C - r + m, stalls once, in step r - m + k', and sends its
// remaining messages one step later. (The printed rule says step r - m + 1 + k'; Fig. 10
// and the conflict-freedom the paper claims need r - m + k', which the tests check.)
Schedule revised_r_schedule(const FourStageGeometry& g, const std::string& name) {
  const int p = g.nprocs, C = g.columns, r = g.incomplete;
  Schedule s;
  s.name = name;
  s.nprocs = p;
  s.ports = 1;
  s.rounds.resize(static_cast<std::size_t>(r > 0 ? C + 1 : C));
  auto add = [&](int step, int src, int dst) {
    s.rounds[static_cast<std::size_t>(step - 1)].transfers.push_back(
        {src, dst, aapc_block(src, dst, p)});
  };
  for (int x = 0; x < g.rows; ++x) {
    const bool complete_row = r == 0 || x < g.rows - 1;
    for (int c = 0; c < C; ++c) {
      const int node = x * C + c;
      if (node >= p) break;
      if (!complete_row) {
        for (int k = 1; k <= C; ++k) add(k, node, g.row_partner(node, (c + k) % C));
        continue;
      }
      int stall = 0;  // step of this node's stall, 0 = none
      if (r > 0 && x < r) {
        const int kk = ((x - c) % C + C) % C;
        if (kk <= C - r + x) stall = r - x + kk;
      }
      for (int k = 1; k <= C; ++k)
        add(stall > 0 && k >= stall ? k + 1 : k, node, x * C + (c + k) % C);
    }
  }
  return s;
}

std::vector<std::vector<int>> column_groups(const FourStageGeometry& g) {
  std::vector<std::vector<int>> groups(static_cast<std::size_t>(g.columns));
  for (int rank = 0; rank < g.nprocs; ++rank)
    groups[static_cast<std::size_t>(g.column_of(rank))].push_back(rank);
  return groups;
}

class FourStage final : public StagedAlgorithm {
 public:
  explicit FourStage(int p) : g_(four_stage_geometry(p)) {
    schedule_.name = "four_stage";
    schedule_.nprocs = p;
    schedule_.stage_names = {"I R-Distribute/R-Comm", "II C-Distribute/C-Comm",
                             "III C-Collect/R-Comm", "IV R-Collect/C-Comm"};
    const auto columns = column_groups(g_);
    schedule_.stages = {
        revised_r_schedule(g_, "four_stage I"), shift_schedule(p, columns, "four_stage II"),
        revised_r_schedule(g_, "four_stage III"), shift_schedule(p, columns, "four_stage IV")};
  }

  void begin_stage(int stage, int me) override {
    const int p = g_.nprocs;
    counter_.assign(static_cast<std::size_t>(p), 0);
    if (stage == 0) {
      // Fig. 11: count[j] starts at j % C.
      for (int j = 0; j < p; ++j) counter_[static_cast<std::size_t>(j)] = j % g_.columns;
    } else if (stage == 1) {
      // C-Distribute: count[j] starts at j % (column height).
      const int h = g_.column_height(g_.column_of(me));
      for (int j = 0; j < p; ++j) counter_[static_cast<std::size_t>(j)] = j % h;
    }
  }

  void route_units(int stage, int me, const Run& run, std::vector<Routed>& out) override {
    switch (stage) {
      case 0:
        r_distribute(me, run, out);
        return;
      case 1: {
        const int c = g_.column_of(me), h = g_.column_height(c), C = g_.columns;
        split_by_counter(
            run, counter_[static_cast<std::size_t>(run.dst)], h,
            [&](int row) { return row * C + c; }, out);
        return;
      }
      case 2:
        out.push_back({g_.row_partner(me, g_.column_of(run.dst)), run});
        return;
      default:
        out.push_back({run.dst, run});
        return;
    }
  }

 private:
  // R-Distribute (Fig. 11): the element scanned at counter value x goes to bucket
  // F(x) = (x % P) % C. For every P consecutive counter values the first r buckets get R
  // elements and the others R - 1 (3.2.2 C). Counts per bucket in closed form; each
  // bucket's elements as one contiguous slice of the run.
  void r_distribute(int me, const Run& run, std::vector<Routed>& out) {
    const std::int64_t P = g_.nprocs, C = g_.columns;
    std::int64_t& counter = counter_[static_cast<std::size_t>(run.dst)];
    const std::int64_t start = counter, end = counter + run.n;
    counter = end;
    // Number of x in [0, t) with (x % P) % C == b.
    auto below = [&](std::int64_t t, std::int64_t b) {
      const std::int64_t full = P / C + (P % C > b ? 1 : 0);
      const std::int64_t u = t % P;
      return (t / P) * full + u / C + (u % C > b ? 1 : 0);
    };
    const std::int64_t first_bucket = (start % P) % C;
    std::int64_t offset = 0;
    for (std::int64_t k = 0; k < C && offset < run.n; ++k) {
      const std::int64_t b = (first_bucket + k) % C;
      const std::int64_t count = below(end, b) - below(start, b);
      if (count == 0) continue;
      out.push_back(
          {g_.row_partner(me, static_cast<int>(b)), {run.src, run.dst, run.first + offset, count}});
      offset += count;
    }
  }

  FourStageGeometry g_;
  std::vector<std::int64_t> counter_;
};

// Theorem 2: 4 ceil(sqrt P) + 2 start-ups over four stages, each moving the rank's data
// (balanced by the load-balancing of s. 3.2).
double predicted_time(const AlltoallvOp::Shape& s, const CostParams& c) {
  const int q = ceil_sqrt(s.p);
  const double data = s.p * alltoallv_cost::mean(s), runs = alltoallv_cost::pieces(s, 1);
  return 4 * alltoallv_cost::stage(layout_of(s), c, (4.0 * q + 2) / 4, data, runs);
}

std::unique_ptr<StagedAlgorithm> router(int p) { return std::make_unique<FourStage>(p); }

}  // namespace

extern const AlltoallvAlgorithm four_stage_alltoallv{
    .algo = AlltoallvAlgo::FourStage, .name = "four_stage",
    .summary = "A4: four balanced stages on ceil(sqrt P) columns, any P (pseudo-nodes, stalls; s. 3.2)",
    .paper = "paper 001, s. 3.2", .cost = predicted_time, .plan = staged_plan,
    .run = run_staged_as<AlltoallvAlgo::FourStage>,
    .extra = {.staged = router}};

}  // namespace detail
}  // namespace libcomm
