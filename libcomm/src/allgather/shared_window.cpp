// The all-to-all broadcast of ranks that share one node's memory: every rank copies its
// block into the node's shared window (Area::Shared, an MPI-3 window), a node barrier (the
// only messages), then every rank copies all blocks out. Two copies per byte and log2 P
// empty messages, where every message-based algorithm pays a start-up per step: what the
// MPI library's shared-memory collectives do, as a step program (issue 33; the same
// transport as paper 002's schemes, docs/algorithms/hierarchical.md).
#include <limits>
#include <numeric>

#include "../runtime/node_channel.hpp"
#include "allgather_internal.hpp"

namespace libcomm::detail {

StepProgram shared_window_allgather_program(const Blocks& b, int me) {
  const int p = static_cast<int>(b.count.size());
  const auto ume = static_cast<std::size_t>(me);
  ProgramBuilder pb("shared_window", me, p);
  pb.set_extents(b.count[ume], b.total);
  std::vector<int> everyone(static_cast<std::size_t>(p));
  std::iota(everyone.begin(), everyone.end(), 0);
  const auto node = static_cast<std::uint8_t>(pb.add_channel("node", std::move(everyone)));
  pb.set_shared(node, b.total);
  // (The copy in a stage of its own: a barrier message of the same stage could leave before
  // an overlapped copy has finished.)
  pb.copy(0, {Area::Send, 0, b.count[ume]}, {Area::Shared, b.displ[ume], b.count[ume]});
  const std::uint32_t after = pb.barrier(1, node);
  pb.copy_cold(after, {Area::Shared, 0, b.total}, {Area::Recv, 0, b.total});
  return std::move(pb).program();
}

namespace {

std::string needs_one_node(const AllgatherOp::Shape& s) {
  if (s.nodes->num_nodes() == 1) return "";
  return "needs every rank on one node, the node map has " + std::to_string(s.nodes->num_nodes());
}

StepProgram program(const Blocks& b, int rank, const AllgatherOptions&) {
  return shared_window_allgather_program(b, rank);
}

std::shared_ptr<PlanState> plan(const PlanCall<AllgatherOp>& call) {
  const std::vector<std::size_t> counts = call.shape.block_sizes();
  return node_program_plan(call.comm, shared_window_allgather_program(Blocks(counts), call.comm.rank()),
                           call.choice.reason(), call.own_scratch());
}

// One node: a copy in, a node barrier, a copy of all P blocks out.
double predicted_time(const AllgatherOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  if (l.nodes != 1) return std::numeric_limits<double>::infinity();
  return cost::copy(c, static_cast<double>(s.largest)) + cost::barrier(l, c) + cost::copy(c, static_cast<double>(s.total));
}

}  // namespace

extern const AllgatherAlgorithm shared_window_allgather{
    .algo = AllgatherAlgo::SharedWindow, .name = "shared_window",
    .summary = "one node: every block through the node's shared-memory window (copy in, node barrier, copy out)",
    .paper = "", .unfit = needs_one_node, .applies = "every rank on one node (shared memory)",
    .fallback = AllgatherAlgo::Ring,
    .fallback_why = "the window is one node's memory; across nodes the blocks must travel as messages",
    .cost = predicted_time, .program = blocks_program<program>, .plan = plan, .node_memory = true, .node_map = true};

}  // namespace libcomm::detail
