// Linear all-to-all: LAM/MPI's routine as described in paper 003, section 6. Every rank
// posts all its receives and sends at once, rank i in the order i -> 0, i -> 1, ...,
// i -> P-1. As a schedule: round j holds every message to rank j, so in one round a rank
// receives up to P messages (ports = P); the executor posts everything at once.
#include "alltoall_internal.hpp"

namespace libcomm::detail {

namespace {

Schedule linear_schedule(int p) {
  Schedule s{"linear", p, p, {}};
  s.rounds.resize(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < p; ++i) s.rounds[j].transfers.push_back({i, j, aapc_block(i, j, p)});
  return s;
}

// (The rank's own block is copied while its messages travel: not on the critical path.)
double predicted_time(const AlltoallOp::Shape& s, const CostParams& c) {
  return cost::all_at_once(layout_of(s), c, static_cast<double>(s.block));
}

}  // namespace

extern const AlltoallAlgorithm linear_alltoall{
    .algo = AlltoallAlgo::Linear, .name = "linear", .summary = "LAM/MPI: post all receives and sends, i -> 0, 1, ..., P-1",
    .paper = "paper 003, s. 6", .cost = predicted_time, .program = schedule_alltoall_program<linear_alltoall>,
    .extra = {.schedule = linear_schedule, .run = ScheduleRun::AllAtOnce}};

}  // namespace libcomm::detail
