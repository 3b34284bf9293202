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

void native_reduce_scatter(const std::byte* send, std::byte* recv, const ReduceBlocks& b, MPI_Comm comm);
void ring_reduce_scatter(const std::byte* send, std::byte* recv, const ReduceBlocks& b, const Comm& c,
                         NodeOrder order);
void dcycles_reduce_scatter(const std::byte* send, std::byte* recv, const ReduceBlocks& b, const Comm& c);
void reduce_spread_reduce_scatter(const std::byte* send, std::byte* recv, const ReduceBlocks& b,
                                  const Comm& c);

}  // namespace libcomm::detail
