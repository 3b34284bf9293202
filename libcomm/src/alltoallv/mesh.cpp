// A3: two-stage combining on a sqrt(P) x sqrt(P) mesh (paper 001, section 3.1.3, after
// Hambrusch et al.). The message from node (i1, j1) to (i2, j2) goes first along the row to
// the intermediate node (i1, j2), combined with everything else row i1 sends to column j2,
// and then along the column to (i2, j2). 2 sqrt(P) messages per node, no load balancing.
// P must be a perfect square: otherwise some intermediate nodes do not exist and the
// algorithm refuses (the paper's "straightforward extensions" add hot spots).
#include <limits>
#include <string>

#include "alltoallv_internal.hpp"

namespace libcomm::detail {
namespace {

class Mesh final : public StagedAlgorithm {
 public:
  explicit Mesh(int p) : q_(exact_sqrt(p)) {
    require(q_ > 0,
            "mesh: needs a perfect-square number of ranks (a sqrt(P) x sqrt(P) mesh), P = " +
                std::to_string(p) + "; use four_stage for any P");
    std::vector<std::vector<int>> rows(static_cast<std::size_t>(q_)),
        cols(static_cast<std::size_t>(q_));
    for (int r = 0; r < p; ++r) {
      rows[static_cast<std::size_t>(r / q_)].push_back(r);
      cols[static_cast<std::size_t>(r % q_)].push_back(r);
    }
    schedule_.name = "mesh";
    schedule_.nprocs = p;
    schedule_.stage_names = {"1 row combine", "2 column deliver"};
    schedule_.stages = {shift_schedule(p, rows, "mesh 1"), shift_schedule(p, cols, "mesh 2")};
  }
  void begin_stage(int, int) override {}
  void route_units(int stage, int me, const Run& run, std::vector<Routed>& out) override {
    if (stage == 0)
      out.push_back({(me / q_) * q_ + run.dst % q_, run});
    else
      out.push_back({run.dst, run});
  }

 private:
  int q_;
};

std::string needs_square(const AlltoallvOp::Shape& s) {
  if (exact_sqrt(s.p) != 0) return "";
  return "needs a perfect-square number of ranks (a sqrt(P) x sqrt(P) mesh), P = " + std::to_string(s.p);
}

// Row combine then column deliver, 2 (sqrt P - 1) steps; the longest message travels whole
// in both stages.
double predicted_time(const AlltoallvOp::Shape& s, const CostParams& c) {
  const int q = exact_sqrt(s.p);
  if (q == 0) return std::numeric_limits<double>::infinity();
  const double data = s.p * alltoallv_cost::mean(s), runs = alltoallv_cost::pieces(s, 1);
  return 2 * (alltoallv_cost::stage(layout_of(s), c, q - 1, data, runs) + alltoallv_cost::spike(s, c));
}

std::unique_ptr<StagedAlgorithm> router(int p) { return std::make_unique<Mesh>(p); }

}  // namespace

extern const AlltoallvAlgorithm mesh_alltoallv{
    .algo = AlltoallvAlgo::Mesh, .name = "mesh",
    .summary = "A3: row combine then column deliver on a sqrt(P) x sqrt(P) mesh; perfect squares only (s. 3.1.3)",
    .paper = "paper 001, s. 3.1.3", .unfit = needs_square, .applies = "P a perfect square",
    .fallback = AlltoallvAlgo::FourStage,
    .fallback_why = "A3 runs on a sqrt(P) x sqrt(P) mesh; A4 is the paper's generalisation to any P (paper 001, "
                    "s. 3.2)",
    .cost = predicted_time, .plan = staged_plan,
    .run = run_staged_as<AlltoallvAlgo::Mesh>,
    .extra = {.staged = router}};

}  // namespace libcomm::detail
