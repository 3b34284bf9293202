// The all-to-all reduction as an operation of the one driver (driver/algorithm.hpp): its
// traits, defined in reduce_scatter.cpp, and what its algorithm files share. Each
// algorithm is one file exporting its descriptor; reduce_scatter.cpp lists them. The local
// combiner is the executor's (program/reduction.cpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "../algorithm/operation.hpp"
#include "../cycles/cycles.hpp"
#include "libcomm/reduce_scatter.hpp"

namespace libcomm::detail {

struct ReduceScatterOp : OperationBase<ReduceScatterAlgo, ReduceScatterOptions, Setting::ReduceScatter, "reduce_scatter"> {
  struct Args {
    const void* send = nullptr;
    void* recv = nullptr;
    std::span<const std::size_t> counts;  // bytes
    ElemType type = ElemType::Double;
    ReduceOp op = ReduceOp::Sum;
  };
  struct Shape : ShapeBase {
    ElemType type = ElemType::Double;
    ReduceOp op = ReduceOp::Sum;
    const Options* opts = nullptr;
  };
  static std::span<const Algorithm<ReduceScatterOp>> algorithms();
  static Shape shape(const Args& a, const Comm& comm, const Options& o);
  // A shape without a Comm: blocks of `counts` bytes on `nodes`.
  static Shape shape(std::span<const std::size_t> counts, ElemType type, ReduceOp op, const NodeMap& nodes,
                     const Options& o);
  static std::uint64_t options(const Shape& s);
  static ArgumentCheck argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo, const Options& o,
                                      bool have_buffers);
  static std::string modes_differ(Algo algo, const Options& o);
  static void check_agreement(const Args& a, const Comm& comm, const Options& o);
};

using ReduceScatterAlgorithm = Algorithm<ReduceScatterOp>;

// Block layout in elements plus the element type and combiner.
struct ReduceBlocks {
  std::vector<std::size_t> count, displ;  // elements
  std::size_t total = 0, max = 0;
  ElemType type = ElemType::Double;
  ReduceOp op = ReduceOp::Sum;
  std::size_t es = 8;  // bytes per element
  ReduceBlocks(std::span<const std::size_t> counts, ElemType t, ReduceOp o);
  explicit ReduceBlocks(const ReduceScatterOp::Shape& s);
  std::size_t bytes(std::size_t elements) const { return elements * es; }
};

// Rank `rank`'s step program of a builder over the shape's blocks (each algorithm file has
// one: send area the rank's whole vector, recv area its own block).
template <StepProgram (*build)(const ReduceBlocks&, int, const ReduceScatterOptions&)>
StepProgram blocks_program(const ReduceScatterOp::Shape& s, int rank) {
  return build(ReduceBlocks(s), rank, *s.opts);
}

// The one-node program the unit tests check by itself (shared_window.cpp).
StepProgram shared_window_reduce_scatter_program(const ReduceBlocks& b, int rank);

}  // namespace libcomm::detail
