// Ring all-to-all (paper 003, section 6): in step j rank i sends to i + j and receives
// from i - j (mod P). Step 0 is the local copy. The same schedule runs two ways:
//   ring           MPICH's medium-message routine: all steps posted at once, non-blocking;
//   ring_sendrecv  MPICH's fallback for large messages and P not a power of two: one
//                  blocking send-recv per step.
#include "alltoall_internal.hpp"

namespace libcomm::detail {

namespace {

Schedule ring_schedule(int p, const char* name) {
  return partner_schedule(name, p, 1, [p](int j, int i) { return (i + j) % p; });
}

}  // namespace

// Every message posted at once (linear's too, linear.cpp).
double all_at_once(const AlltoallOp::Shape& s, const CostParams& c) {
  return cost::all_at_once(layout_of(s), c, static_cast<double>(s.block));
}

// One blocking exchange per round (also the grouped 1-factor's, factor.cpp).
double one_exchange_per_round(const AlltoallOp::Shape& s, const CostParams& c) {
  return cost::one_exchange_per_round(layout_of(s), c, static_cast<double>(s.block));
}

extern const AlltoallAlgorithm ring_alltoall{
    .algo = AlltoallAlgo::Ring, .name = "ring", .summary = "MPICH medium: post all, i -> i+1, i+2, ..., non-blocking",
    .paper = "paper 003, s. 6", .cost = all_at_once, .program = schedule_alltoall_program<ring_alltoall>,
    .extra = {.schedule = [](int p) { return ring_schedule(p, "ring"); }, .run = ScheduleRun::AllAtOnce}};

extern const AlltoallAlgorithm ring_sendrecv_alltoall{
    .algo = AlltoallAlgo::RingSendrecv, .name = "ring_sendrecv",
    .summary = "blocking ring: step j send to i+j, receive from i-j", .paper = "paper 003, s. 6",
    .cost = one_exchange_per_round, .program = schedule_alltoall_program<ring_sendrecv_alltoall>,
    .extra = {.schedule = [](int p) { return ring_schedule(p, "ring_sendrecv"); }}};

}  // namespace libcomm::detail
