// Pairwise exchange (paper 002 section 2.4; MPICH's large-message routine in paper 003,
// section 6): in step j rank i exchanges with i XOR j. Only defined when P is a power of
// two; step 0 is the local copy, steps 1..P-1 are exchanges, so P - 1 network rounds.
#include "alltoall_internal.hpp"
#include "libcomm/error.hpp"

namespace libcomm::detail {

bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

Schedule pairwise_schedule(int p) {
  require(is_power_of_two(p), "pairwise: needs a power-of-two number of ranks, P = " +
                                  std::to_string(p) + " (use ring_sendrecv, or allow fallback)");
  Schedule s{"pairwise", p, 1, {}};
  s.rounds.resize(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < p; ++i) {
      const int partner = i ^ j;
      s.rounds[j].transfers.push_back({i, partner, aapc_block(i, partner, p)});
    }
  return s;
}

}  // namespace libcomm::detail
