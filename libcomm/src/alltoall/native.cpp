// The MPI library's own MPI_Alltoall: the reference every test and benchmark compares with.
#include "../core/mpi_bytes.hpp"
#include "alltoall_internal.hpp"

namespace libcomm::detail {

void native_alltoall(const std::byte* send, std::byte* recv, std::size_t block_bytes,
                     MPI_Comm comm) {
  const MpiBytes block(block_bytes);
  check_mpi(MPI_Alltoall(send, block.count(), block.type(), recv, block.count(), block.type(),
                         comm),
            "MPI_Alltoall");
}

}  // namespace libcomm::detail
