// Internal interface between the all-to-all reduction dispatcher and its algorithm files.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "../allgather/allgather_internal.hpp"
#include "libcomm/reduce_scatter.hpp"

namespace libcomm::detail {

// Block layout in elements plus the element type and combiner.
struct ReduceBlocks {
  std::vector<std::size_t> count, displ;  // elements
  std::size_t total = 0, max = 0;
  ElemType type = ElemType::Double;
  ReduceOp op = ReduceOp::Sum;
  std::size_t es = 8;  // bytes per element
  ReduceBlocks(std::span<const std::size_t> counts, ElemType t, ReduceOp o);
  std::size_t bytes(std::size_t elements) const { return elements * es; }
};

// native.cpp: MPI_Reduce_scatter, blocking, and the start of MPI_Ireduce_scatter for a plan.
void native_reduce_scatter(const std::byte* send, std::byte* recv, const ReduceBlocks& b, MPI_Comm comm);
std::function<void(const void*, void*, MPI_Request*)> native_ireduce_scatter(const ReduceBlocks& b,
                                                                             MPI_Comm comm);
// Any algorithm but native and Auto.
StepProgram build_reduce_scatter_program(ReduceScatterAlgo a, const ReduceBlocks& b, int rank,
                                         const ReduceScatterOptions& opts);
// Step programs, one builder per algorithm file. Send area: the rank's whole vector (all
// blocks); recv area: its own block.
StepProgram ring_reduce_scatter_program(const ReduceBlocks& b, int rank, NodeOrder order);
StepProgram dcycles_reduce_scatter_program(const ReduceBlocks& b, int rank);
StepProgram reduce_spread_reduce_scatter_program(const ReduceBlocks& b, int rank);

}  // namespace libcomm::detail
