// Ring all-to-all (paper 003, section 6): in step j rank i sends to i + j and receives
// from i - j (mod P). Step 0 is the local copy. The same schedule runs two ways:
//   ring           MPICH's medium-message routine: all steps posted at once, non-blocking;
//   ring_sendrecv  MPICH's fallback for large messages and P not a power of two: one
//                  blocking send-recv per step.
#include "alltoall_internal.hpp"

namespace libcomm::detail {

Schedule ring_schedule(int p) {
  Schedule s{"ring", p, 1, {}};
  s.rounds.resize(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < p; ++i) {
      const int dst = (i + j) % p;
      s.rounds[j].transfers.push_back({i, dst, aapc_block(i, dst, p)});
    }
  return s;
}

}  // namespace libcomm::detail
