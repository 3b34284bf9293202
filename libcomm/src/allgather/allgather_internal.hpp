// Internal interface between the all-to-all broadcast dispatcher (allgather.cpp) and the
// algorithm files, one per family; also used by reduce_scatter/.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "libcomm/allgather.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/program.hpp"

namespace libcomm::detail {

// Block layout of an allgatherv: count[r] bytes from rank r at displ[r] (packed).
struct Blocks {
  std::vector<std::size_t> count, displ;
  std::size_t total = 0;
  std::size_t max = 0;
  bool equal = true;
  explicit Blocks(std::span<const std::size_t> counts);
};

// Position of rank r in the single Hamiltonian cycle and the rank at position q.
int ring_position(NodeOrder order, int p, int rank);
int ring_node(NodeOrder order, int p, int position);

// Step programs, one builder per algorithm file (ring.cpp, d_cycles.cpp, send_spread.cpp,
// butterfly.cpp): rank `rank`'s part of an allgatherv of the blocks `b` (P = b.count.size()).
// Send area: the rank's own block; recv area: all blocks packed in rank order.
StepProgram ring_allgather_program(const Blocks& b, int rank, NodeOrder order, Reorder reorder);
StepProgram dcycles_allgather_program(const Blocks& b, int rank, Reorder reorder, bool index_motion,
                                      std::size_t element_bytes);
StepProgram send_spread_allgather_program(const Blocks& b, int rank);
StepProgram butterfly_allgather_program(const Blocks& b, int rank);
// Any algorithm but native and Auto.
StepProgram build_allgather_program(AllgatherAlgo a, const Blocks& b, int rank, const AllgatherOptions& opts);

// native.cpp: MPI_Allgather(v), blocking, and the start of MPI_Iallgather(v) for a plan.
void native_allgather(const std::byte* send, std::byte* recv, std::size_t block_bytes, MPI_Comm comm);
void native_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, MPI_Comm comm);
std::function<void(const void*, void*, MPI_Request*)> native_iallgatherv(const Blocks& b, MPI_Comm comm);

// Binomial-tree broadcast of `range` from rank 0, one stage per level from `stage`; returns
// the first stage after it (send_spread's spread).
std::uint32_t binomial_broadcast(ProgramBuilder& pb, std::uint32_t stage, ByteRange range);

}  // namespace libcomm::detail
