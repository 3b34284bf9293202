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
  std::unique_ptr<StagedAlgorithm> clone() const override {
    return std::make_unique<TwoStage>(*this);
  }

 private:
  int p_;
  std::vector<std::int64_t> counter_;
};

}  // namespace

std::unique_ptr<StagedAlgorithm> make_two_stage(int nprocs) {
  return std::make_unique<TwoStage>(nprocs);
}

}  // namespace libcomm::detail
