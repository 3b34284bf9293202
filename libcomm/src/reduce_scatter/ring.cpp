// All-to-all reduction along a single Hamiltonian cycle (paper 004, s. 4.1, Fig. 6): P - 1
// cyclic shifts, the reverse of the broadcast's (partials move to ring position q + 1).
// In shift s the node at position q sends its partial for the block of position q - s to
// q + 1 (its own data for s = 1), receives the partial for block q - s - 1 from q - 1 and
// combines it with its own contribution; after shift P - 1 the partial for block
// q - P = q is complete: the node's result (cube::ring_reduce_block). Every node sends one
// block per shift, (P - 1) blocks in all, the minimum for one channel. Only two
// block-sized temporaries are needed (the partial in flight and the one arriving).
#include <cstring>
#include <utility>

#include "reduce_scatter_internal.hpp"

namespace libcomm::detail {

void ring_reduce_scatter(const std::byte* send, std::byte* recv, const ReduceBlocks& b, const Comm& c,
                         NodeOrder order) {
  const int p = c.size(), me = c.rank();
  const MPI_Comm comm = c.internal();
  const auto ume = static_cast<std::size_t>(me);
  if (p == 1) {
    if (b.count[0]) std::memcpy(recv, send, b.bytes(b.count[0]));
    return;
  }
  constexpr int kTag = 7411;
  const int q = ring_position(order, p, me);
  const int to = ring_node(order, p, q + 1), from = ring_node(order, p, q - 1);
  const auto block = [&](int s) {
    return static_cast<std::size_t>(cube::ring_reduce_block(order, p, static_cast<std::uint32_t>(me), s));
  };
  std::byte* acc = c.scratch(0, b.bytes(b.max));
  std::byte* tmp = c.scratch(1, b.bytes(b.max));
  const std::byte* out = send + b.bytes(b.displ[block(1)]);
  for (int s = 1; s < p; ++s) {
    const std::size_t bo = block(s), bi = block(s + 1);
    sendrecv_bytes(out, b.bytes(b.count[bo]), to, tmp, b.bytes(b.count[bi]), from, kTag, comm);
    reduce_local(send + b.bytes(b.displ[bi]), tmp, b.count[bi], b.type, b.op);
    if (s == p - 1) {
      if (b.count[ume]) std::memcpy(recv, tmp, b.bytes(b.count[ume]));  // bi == me
    } else {
      std::swap(acc, tmp);
      out = acc;
    }
  }
}

}  // namespace libcomm::detail
