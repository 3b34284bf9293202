// Linear all-to-all: LAM/MPI's routine as described in paper 003, section 6. Every rank
// posts all its receives and sends at once, rank i in the order i -> 0, i -> 1, ...,
// i -> P-1. As a schedule: round j holds every message to rank j, so in one round a rank
// receives up to P messages (ports = P); the executor posts everything at once.
#include "alltoall_internal.hpp"

namespace libcomm::detail {

Schedule linear_schedule(int p) {
  Schedule s{"linear", p, p, {}};
  s.rounds.resize(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < p; ++i) s.rounds[j].transfers.push_back({i, j, aapc_block(i, j, p)});
  return s;
}

}  // namespace libcomm::detail
