// Internal interface between the all-to-all broadcast dispatcher (allgather.cpp) and the
// algorithm files, one per family; also used by reduce_scatter/.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "../core/driver.hpp"
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

// The all-to-all broadcast as an operation of the one driver (core/driver.hpp); members in
// allgather.cpp, cost formulas in costs.cpp.
struct AllgatherOp {
  using Algo = AllgatherAlgo;
  using Options = AllgatherOptions;
  static constexpr std::string_view name = "allgather";
  static constexpr std::string_view what = "allgather";
  static constexpr Setting setting = Setting::Allgather;
  struct Args {
    const void* send = nullptr;
    std::size_t send_bytes = 0;
    void* recv = nullptr;
    std::span<const std::size_t> counts;  // empty: the regular form, P blocks of `block`
    std::size_t block = 0;
  };
  struct Shape {
    int p = 1;
    std::span<const std::size_t> counts;  // empty: every block `largest` bytes
    std::size_t largest = 0, total = 0;
    bool equal = true;
    const NodeMap* nodes = nullptr;
    const Options* opts = nullptr;
    std::string problem;  // what makes the call invalid on this rank ("" when nothing)
    std::vector<std::size_t> all_counts() const;
  };
  static std::span<const AlgorithmEntry<AllgatherOp>> algorithms();
  static Shape shape(const Args& a, const Comm& comm, const Options& o);
  static void validate(const Shape& s, const Comm& comm);
  static std::uint64_t key_bytes(const Shape& s) { return s.largest; }
  static std::uint64_t key_options(const Shape& s);
  static std::uint64_t decision_bytes(const Shape& s) { return s.largest; }
  static bool one_node_shared(const Shape& s) { return s.p > 1 && s.nodes->num_nodes() == 1; }
  static ArgumentCheck argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo, const Options& o,
                                      bool have_buffers);
  static std::string sizes_differ(const Args&, std::uint64_t, std::uint64_t) {
    return "counts (block sizes) differ across ranks";
  }
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

// Applicability the all-to-all broadcast and the reduction share (paper 004: the d cycles
// and the Gray-code ring live on a binary d-cube).
template <class Shape>
std::string needs_cube(const Shape& s) {
  if (cube::log2_exact(s.p) >= 0) return "";
  return "needs a power-of-two number of ranks (a binary d-cube), P = " + std::to_string(s.p);
}
// The Gray-code path of s. 4.1 is a Hamiltonian cycle only on 2^d nodes.
template <class Shape>
std::string gray_needs_cube(const Shape& s) {
  if (s.opts->order != NodeOrder::Gray || cube::log2_exact(s.p) >= 0) return "";
  return "with order gray needs a power-of-two number of ranks (the binary-reflected Gray code is a cycle only on "
         "2^d nodes), P = " + std::to_string(s.p);
}

// Cost formulas (costs.cpp; docs/algorithms.md "Cost formulas"), seconds of one call.
namespace allgather_cost {
double ring(const AllgatherOp::Shape& s, const CostParams& c);
double d_cycles(const AllgatherOp::Shape& s, const CostParams& c);
double d_cycles_im(const AllgatherOp::Shape& s, const CostParams& c);
double send_spread(const AllgatherOp::Shape& s, const CostParams& c);
double butterfly(const AllgatherOp::Shape& s, const CostParams& c);
double shared_window(const AllgatherOp::Shape& s, const CostParams& c);
double native(const AllgatherOp::Shape& s, const CostParams& c);
// The terms the reduction's formulas share (the reversed motions, reduce_scatter/costs.cpp).
double linear_gather(const Layout& l, const CostParams& c, double n);  // every rank's n bytes to one
// n bytes over the d dimensions in `messages` messages
// (`sending`: how many nodes take part; all by default.)
double dcycles_step(const Layout& l, const CostParams& c, double n, double messages, int d, double sending = 0);
}  // namespace allgather_cost

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
StepProgram shared_window_allgather_program(const Blocks& b, int rank);  // one node (shared_window.cpp)
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
