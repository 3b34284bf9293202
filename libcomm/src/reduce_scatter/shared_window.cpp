// The all-to-all reduction of ranks that share one node's memory: every rank copies its
// whole vector into its slot of the node's shared window, a node barrier (the only
// messages), then every rank combines its own block from the P slots in rank order
// (the same order on every rank). One copy of the vector and P - 1 combines of a block per
// rank, where the message-based algorithms pay a start-up per step (issue 33).
#include <limits>
#include <numeric>

#include "../runtime/node_channel.hpp"
#include "reduce_scatter_internal.hpp"

namespace libcomm::detail {

StepProgram shared_window_reduce_scatter_program(const ReduceBlocks& b, int me) {
  const int p = static_cast<int>(b.count.size());
  const auto ume = static_cast<std::size_t>(me);
  ProgramBuilder pb("shared_window", me, p);
  pb.set_reduction(b.type, b.op, b.es);
  const std::size_t all = b.bytes(b.total), mine = b.bytes(b.count[ume]), at = b.bytes(b.displ[ume]);
  pb.set_extents(all, mine);
  std::vector<int> everyone(static_cast<std::size_t>(p));
  std::iota(everyone.begin(), everyone.end(), 0);
  const auto node = static_cast<std::uint8_t>(pb.add_channel("node", std::move(everyone)));
  pb.set_shared(node, all * static_cast<std::size_t>(p));
  // (The copy in a stage of its own: a barrier message of the same stage could leave before
  // an overlapped copy has finished.)
  pb.copy(0, {Area::Send, 0, all}, {Area::Shared, ume * all, all});
  const std::uint32_t after = pb.barrier(1, node);
  pb.copy_cold(after, {Area::Shared, at, mine}, {Area::Recv, 0, mine});
  for (std::size_t j = 1; j < static_cast<std::size_t>(p); ++j)
    pb.reduce(after, {Area::Shared, j * all + at, mine}, {Area::Recv, 0, mine});
  return std::move(pb).program();
}

namespace {

// The window holds every rank's whole vector: P x the vector, twice (alternate runs).
constexpr std::size_t kMaxWindowBytes = std::size_t{1} << 30;
std::string needs_one_node_window(const ReduceScatterOp::Shape& s) {
  if (s.nodes->num_nodes() != 1)
    return "needs every rank on one node, the node map has " + std::to_string(s.nodes->num_nodes());
  if (s.total > kMaxWindowBytes / 2 / static_cast<std::size_t>(s.p))
    return "needs a window of P copies of the vector, " + std::to_string(2 * s.total * s.p) + " bytes, over 1 GiB";
  return "";
}

StepProgram program(const ReduceBlocks& b, int rank, const ReduceScatterOptions&) {
  return shared_window_reduce_scatter_program(b, rank);
}

std::shared_ptr<PlanState> plan(const PlanCall<ReduceScatterOp>& call) {
  return node_program_plan(call.comm, shared_window_reduce_scatter_program(ReduceBlocks(call.shape), call.comm.rank()),
                           call.choice.reason(), call.own_scratch());
}

// One node: the vector into the window, a node barrier, P - 1 combines of one block.
double predicted_time(const ReduceScatterOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  if (l.nodes != 1) return std::numeric_limits<double>::infinity();
  const double n = static_cast<double>(s.largest);
  return cost::copy(c, static_cast<double>(s.total)) + cost::barrier(l, c) + cost::copy(c, n) +
         (s.p - 1) * cost::combine(c, n);
}

}  // namespace

extern const ReduceScatterAlgorithm shared_window_reduce_scatter{
    .algo = ReduceScatterAlgo::SharedWindow, .name = "shared_window",
    .summary = "one node: every vector into the node's shared-memory window, node barrier, each rank combines its "
               "block",
    .paper = "", .unfit = needs_one_node_window,
    .applies = "every rank on one node (shared memory), P copies of the vector within 1 GiB",
    .fallback = ReduceScatterAlgo::Ring,
    .fallback_why = "the window is one node's memory and holds P copies of the vector; otherwise the partial sums "
                    "travel as messages",
    .cost = predicted_time, .program = blocks_program<program>, .plan = plan, .node_memory = true, .node_map = true};

}  // namespace libcomm::detail
