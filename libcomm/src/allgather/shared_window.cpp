// The all-to-all broadcast of ranks that share one node's memory: every rank copies its
// block into the node's shared window (Area::Shared, an MPI-3 window), a node barrier (the
// only messages), then every rank copies all blocks out. Two copies per byte and log2 P
// empty messages, where every message-based algorithm pays a start-up per step: what the
// MPI library's shared-memory collectives do, as a step program (issue 33; the same
// transport as paper 002's schemes, docs/algorithms/hierarchical.md).
#include <numeric>

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

}  // namespace libcomm::detail
