// The MPI library's MPI_Allgather / MPI_Allgatherv: the reference.
#include <climits>

#include "../core/mpi_bytes.hpp"
#include "allgather_internal.hpp"

namespace libcomm::detail {

void native_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, MPI_Comm comm) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  if (b.equal) {
    const MpiBytes block(b.count.empty() ? 0 : b.count[0]);
    check_mpi(MPI_Allgather(send, block.count(), block.type(), recv, block.count(), block.type(), comm),
              "MPI_Allgather");
    return;
  }
  require(b.total <= static_cast<std::size_t>(INT_MAX),
          "allgather native: rank " + std::to_string(me) + ": unequal counts adding up to " +
              std::to_string(b.total) + " bytes exceed MPI_Allgatherv's int displacements; use ring, "
              "d_cycles or butterfly");
  std::vector<int> counts(b.count.size()), displs(b.count.size());
  for (std::size_t r = 0; r < counts.size(); ++r) {
    counts[r] = static_cast<int>(b.count[r]);
    displs[r] = static_cast<int>(b.displ[r]);
  }
  check_mpi(MPI_Allgatherv(send, counts[static_cast<std::size_t>(me)], MPI_BYTE, recv, counts.data(),
                           displs.data(), MPI_BYTE, comm),
            "MPI_Allgatherv");
}

}  // namespace libcomm::detail
