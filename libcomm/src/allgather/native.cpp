// The MPI library's MPI_Allgather / MPI_Allgatherv (and their non-blocking forms): the
// reference.
#include <climits>

#include "../core/mpi_bytes.hpp"
#include "allgather_internal.hpp"

namespace libcomm::detail {

namespace {

// MPI_Allgatherv's int counts and displacements (unequal blocks).
struct IntLayout {
  std::vector<int> count, displ;
  IntLayout(const Blocks& b, MPI_Comm comm) : count(b.count.size()), displ(b.count.size()) {
    int me = 0;
    MPI_Comm_rank(comm, &me);
    require(b.total <= static_cast<std::size_t>(INT_MAX),
            "allgather native: rank " + std::to_string(me) + ": unequal counts adding up to " +
                std::to_string(b.total) + " bytes exceed MPI_Allgatherv's int displacements; use ring, "
                "d_cycles or butterfly");
    for (std::size_t r = 0; r < count.size(); ++r) {
      count[r] = static_cast<int>(b.count[r]);
      displ[r] = static_cast<int>(b.displ[r]);
    }
  }
};

}  // namespace

void native_allgather(const std::byte* send, std::byte* recv, std::size_t block_bytes, MPI_Comm comm) {
  const MpiBytes block(block_bytes);
  check_mpi(MPI_Allgather(send, block.count(), block.type(), recv, block.count(), block.type(), comm),
            "MPI_Allgather");
}

void native_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, MPI_Comm comm) {
  if (b.equal) {
    native_allgather(send, recv, b.count.empty() ? 0 : b.count[0], comm);
    return;
  }
  int me = 0;
  MPI_Comm_rank(comm, &me);
  const IntLayout l(b, comm);
  check_mpi(MPI_Allgatherv(send, l.count[static_cast<std::size_t>(me)], MPI_BYTE, recv, l.count.data(),
                           l.displ.data(), MPI_BYTE, comm),
            "MPI_Allgatherv");
}

std::function<void(const void*, void*, MPI_Request*)> native_iallgatherv(const Blocks& b, MPI_Comm comm) {
  if (b.equal) {
    const std::size_t n = b.count.empty() ? 0 : b.count[0];
    return [n, comm](const void* s, void* r, MPI_Request* q) {
      const MpiBytes block(n);  // freeing the type while the operation is pending is allowed
      check_mpi(MPI_Iallgather(s, block.count(), block.type(), r, block.count(), block.type(), comm, q),
                "MPI_Iallgather");
    };
  }
  int me = 0;
  MPI_Comm_rank(comm, &me);
  // The layout lives in the plan: MPI reads the arrays until the operation completes.
  auto l = std::make_shared<const IntLayout>(b, comm);
  return [l, me, comm](const void* s, void* r, MPI_Request* q) {
    check_mpi(MPI_Iallgatherv(s, l->count[static_cast<std::size_t>(me)], MPI_BYTE, r, l->count.data(),
                              l->displ.data(), MPI_BYTE, comm, q),
              "MPI_Iallgatherv");
  };
}

}  // namespace libcomm::detail
