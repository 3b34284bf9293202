// Pairwise exchange (paper 002 section 2.4; MPICH's large-message routine in paper 003,
// section 6): in step j rank i exchanges with i XOR j. Only defined when P is a power of
// two; step 0 is the local copy, steps 1..P-1 are exchanges, so P - 1 network rounds.
#include "alltoall_internal.hpp"
#include "libcomm/error.hpp"

namespace libcomm::detail {

Schedule pairwise_schedule(int p) {
  require(cost::is_power_of_two(p), "pairwise: needs a power-of-two number of ranks, P = " + std::to_string(p) +
                                        " (use ring_sendrecv, or allow fallback)");
  return partner_schedule("pairwise", p, 1, [](int j, int i) { return i ^ j; });
}

namespace {

std::string needs_power_of_two(const AlltoallOp::Shape& s) {
  return cost::is_power_of_two(s.p) ? "" : "needs a power of two, P = " + std::to_string(s.p);
}

double predicted_time(const AlltoallOp::Shape& s, const CostParams& c) {
  return cost::xor_exchange_rounds(layout_of(s), c, static_cast<double>(s.block));
}

}  // namespace

extern const AlltoallAlgorithm pairwise_alltoall{
    .algo = AlltoallAlgo::Pairwise, .name = "pairwise",
    .summary = "XOR exchange i ^ j, blocking; P a power of two (else ring_sendrecv)", .paper = "paper 002, s. 2.4",
    .unfit = needs_power_of_two, .applies = "P a power of two", .fallback = AlltoallAlgo::RingSendrecv,
    .fallback_why = "the XOR partner i ^ j exists only then; ring_sendrecv is the same one-exchange-per-step "
                    "schedule for any P",
    .cost = predicted_time, .program = schedule_alltoall_program<pairwise_alltoall>, .extra = {.schedule = pairwise_schedule}};

}  // namespace libcomm::detail
