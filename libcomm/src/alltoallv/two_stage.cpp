// A2: the two-stage algorithm of Ranka et al. with the scan-based composition of Bader et
// al. (paper 001, section 3.1.2). Stage 1: the elements of every message are divided
// evenly among the P nodes by a counter scan (no sort): the element of message (i, j)
// scanned at counter value x goes to node x % P, the counter of j starting at j % P so that
// the remainders of different messages land on different nodes. Stage 2: every node sends
// what it holds for node j to node j. Both stages use the shift schedule of A1.
#include "alltoallv_internal.hpp"

namespace libcomm::detail {
namespace {

class TwoStage final : public StagedAlgorithm {
 public:
  explicit TwoStage(int p) : p_(p) {
    std::vector<std::vector<int>> all(1);
    for (int r = 0; r < p; ++r) all[0].push_back(r);
    schedule_.name = "two_stage";
    schedule_.nprocs = p;
    schedule_.stage_names = {"1 slice + all-to-all", "2 all-to-all to destination"};
    schedule_.stages = {shift_schedule(p, all, "two_stage 1"),
                        shift_schedule(p, all, "two_stage 2")};
  }
  void begin_stage(int stage, int) override {
    counter_.assign(static_cast<std::size_t>(p_), 0);
    if (stage == 0)
      for (int j = 0; j < p_; ++j) counter_[static_cast<std::size_t>(j)] = j % p_;
  }
  void route_units(int stage, int, const Run& run, std::vector<Routed>& out) override {
    if (stage == 0)
      split_by_counter(
          run, counter_[static_cast<std::size_t>(run.dst)], p_, [](int node) { return node; }, out);
    else
      out.push_back({run.dst, run});
  }

 private:
  int p_;
  std::vector<std::int64_t> counter_;
};


// Every message sliced evenly over the P nodes, then two all-to-all stages.
double predicted_time(const AlltoallvOp::Shape& s, const CostParams& c) {
  const double data = s.p * alltoallv_cost::mean(s), runs = alltoallv_cost::pieces(s, s.p);
  return 2 * alltoallv_cost::stage(layout_of(s), c, s.p - 1, data, runs);
}

std::unique_ptr<StagedAlgorithm> router(int p) { return std::make_unique<TwoStage>(p); }

}  // namespace

extern const AlltoallvAlgorithm two_stage_alltoallv{
    .algo = AlltoallvAlgo::TwoStage, .name = "two_stage",
    .summary = "A2: messages sliced evenly over P nodes by a counter scan, two all-to-all stages (s. 3.1.2)",
    .paper = "paper 001, s. 3.1.2", .cost = predicted_time, .plan = staged_plan,
    .run = run_staged_as<AlltoallvAlgo::TwoStage>,
    .extra = {.staged = router}};

}  // namespace libcomm::detail
