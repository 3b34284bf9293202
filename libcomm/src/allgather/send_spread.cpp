// Send-and-spread (paper 004, s. 5, alternative 3): all nodes send their block to a
// dedicated node (rank 0) concurrently (all-to-one personalized communication, the CM-200
// "send"), which then broadcasts the whole vector (the "spread", here MPI_Bcast). It moves
// the data twice, which is why the cycle algorithms beat it (Tables 4-6).
#include <cstring>

#include "../core/mpi_bytes.hpp"
#include "allgather_internal.hpp"

namespace libcomm::detail {

void send_spread_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, const Comm& c) {
  const int p = c.size(), me = c.rank();
  const MPI_Comm comm = c.internal();
  constexpr int kRoot = 0, kTag = 7403;
  std::vector<MPI_Request> reqs;
  if (me == kRoot) {
    if (b.count[0]) std::memcpy(recv + b.displ[0], send, b.count[0]);
    for (int r = 1; r < p; ++r) irecv_bytes(recv + b.displ[r], b.count[r], r, kTag, comm, reqs);
  } else {
    isend_bytes(send, b.count[static_cast<std::size_t>(me)], kRoot, kTag, comm, reqs);
  }
  wait_all(reqs);
  const MpiBytes all(b.total);
  check_mpi(MPI_Bcast(recv, all.count(), all.type(), kRoot, comm), "MPI_Bcast");
}

}  // namespace libcomm::detail
