// The all-to-all reduction of ranks that share one node's memory: every rank copies its
// whole vector into its slot of the node's shared window, a node barrier (the only
// messages), then every rank combines its own block from the P slots in rank order
// (the same order on every rank). One copy of the vector and P - 1 combines of a block per
// rank, where the message-based algorithms pay a start-up per step (issue 33).
#include <numeric>

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

}  // namespace libcomm::detail
