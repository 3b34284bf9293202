// Internal interface between the all-to-all broadcast dispatcher (allgather.cpp) and the
// algorithm files, one per family; also used by reduce_scatter/.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "libcomm/allgather.hpp"
#include "libcomm/comm.hpp"

namespace libcomm::detail {

// Block layout of an allgatherv: count[r] bytes from rank r at displ[r] (packed).
struct Blocks {
  std::vector<std::size_t> count, displ;
  std::size_t total = 0;
  std::size_t max = 0;
  bool equal = true;
  explicit Blocks(std::span<const std::size_t> counts);
};

// One blocking exchange of byte ranges (either side may be empty: pass n = 0).
void sendrecv_bytes(const std::byte* send, std::size_t send_n, int dst, std::byte* recv,
                    std::size_t recv_n, int src, int tag, MPI_Comm comm);
// Non-blocking halves (no request is posted for n = 0).
void isend_bytes(const std::byte* buf, std::size_t n, int dst, int tag, MPI_Comm comm,
                 std::vector<MPI_Request>& reqs);
void irecv_bytes(std::byte* buf, std::size_t n, int src, int tag, MPI_Comm comm,
                 std::vector<MPI_Request>& reqs);
void wait_all(std::vector<MPI_Request>& reqs);

// Position of rank r in the single Hamiltonian cycle and the rank at position q.
int ring_position(NodeOrder order, int p, int rank);
int ring_node(NodeOrder order, int p, int position);

void native_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, MPI_Comm comm);
void ring_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, const Comm& comm,
                     NodeOrder order, Reorder reorder);
void dcycles_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, const Comm& comm,
                        Reorder reorder, bool index_motion, std::size_t element_bytes);
void send_spread_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, const Comm& comm);
void butterfly_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, const Comm& comm);

}  // namespace libcomm::detail
