// Linear all-to-all: LAM/MPI's routine as described in paper 003, section 6. Every rank
// posts all its receives and sends at once, rank i in the order i -> 0, i -> 1, ...,
// i -> P-1. As a schedule: round j holds every message to rank j, so in one round a rank
// receives up to P messages (ports = P); the executor posts everything at once.
#include "alltoall_internal.hpp"

namespace libcomm::detail {

namespace {

Schedule linear_schedule(int p) {
  return partner_schedule("linear", p, p, [](int j, int) { return j; });
}

}  // namespace

// Cost: every message at once (the rank's own block is copied while its messages travel: not
// on the critical path).
extern const AlltoallAlgorithm linear_alltoall{
    .algo = AlltoallAlgo::Linear, .name = "linear", .summary = "LAM/MPI: post all receives and sends, i -> 0, 1, ..., P-1",
    .paper = "paper 003, s. 6", .cost = all_at_once, .program = schedule_alltoall_program<linear_alltoall>,
    .extra = {.schedule = linear_schedule, .run = ScheduleRun::AllAtOnce}};

}  // namespace libcomm::detail
