// Internal interface between the all-to-all reduction dispatcher and its algorithm files.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "../allgather/allgather_internal.hpp"
#include "libcomm/reduce_scatter.hpp"

namespace libcomm::detail {

// The all-to-all reduction as an operation of the one driver (core/driver.hpp); members
// in reduce_scatter.cpp, cost formulas in costs.cpp.
struct ReduceScatterOp {
  using Algo = ReduceScatterAlgo;
  using Options = ReduceScatterOptions;
  static constexpr std::string_view name = "reduce_scatter";
  static constexpr std::string_view what = "reduce_scatter";
  static constexpr Setting setting = Setting::ReduceScatter;
  struct Args {
    const void* send = nullptr;
    void* recv = nullptr;
    std::span<const std::size_t> counts;  // bytes
    ElemType type = ElemType::Double;
    ReduceOp op = ReduceOp::Sum;
  };
  struct Shape {
    int p = 1;
    std::span<const std::size_t> counts;
    std::size_t largest = 0, total = 0;  // bytes
    bool equal = true;
    ElemType type = ElemType::Double;
    ReduceOp op = ReduceOp::Sum;
    const NodeMap* nodes = nullptr;
    const Options* opts = nullptr;
    std::string problem;  // what makes the call invalid on this rank ("" when nothing)
  };
  static std::span<const AlgorithmEntry<ReduceScatterOp>> algorithms();
  static Shape shape(const Args& a, const Comm& comm, const Options& o);
  static void validate(const Shape& s, const Comm& comm);
  static std::uint64_t key_bytes(const Shape& s) { return s.largest; }
  static std::uint64_t key_options(const Shape& s);
  static std::uint64_t decision_bytes(const Shape& s) { return s.largest; }
  static bool one_node_shared(const Shape& s) { return s.p > 1 && s.nodes->num_nodes() == 1; }
  static ArgumentCheck argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo, const Options& o,
                                      bool have_buffers);
  static std::string sizes_differ(const Args&, std::uint64_t, std::uint64_t) { return "counts differ across ranks"; }
  static std::string modes_differ(Algo algo, const Options& o);
  static void check_agreement(const Args& a, const Comm& comm, const Options& o);
  static PlanKey plan_key(Algo ran, const Shape& s);
  static std::span<const std::size_t> plan_shape(const Shape& s) {
    return s.equal ? std::span<const std::size_t>() : s.counts;
  }
  static std::shared_ptr<PlanState> state(const Choice<Algo>& c, const Args& a, const Shape& s, const Comm& comm,
                                          Form form);
  static void native(const Args& a, const Shape& s, const Comm& comm);
  static bool empty(const Shape& s) { return s.total == 0; }
};

namespace reduce_scatter_cost {
double ring(const ReduceScatterOp::Shape& s, const CostParams& c);
double d_cycles(const ReduceScatterOp::Shape& s, const CostParams& c);
double reduce_spread(const ReduceScatterOp::Shape& s, const CostParams& c);
double shared_window(const ReduceScatterOp::Shape& s, const CostParams& c);
double native(const ReduceScatterOp::Shape& s, const CostParams& c);
}  // namespace reduce_scatter_cost

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
StepProgram shared_window_reduce_scatter_program(const ReduceBlocks& b, int rank);  // one node

}  // namespace libcomm::detail
