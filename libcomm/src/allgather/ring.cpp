// All-to-all broadcast along a single Hamiltonian cycle (paper 004, s. 4.1, Fig. 5): P - 1
// left cyclic shifts; in shift s the node at ring position q sends what it received in
// shift s - 1 (its own block for s = 1) to position q - 1 and receives the block of
// position q + s from q + 1. The local reordering of s. 4.1 says where that block belongs:
//   binary ring:                      s <- (s - j) mod N, i.e. origin (pa + s) mod P
//   Gray path, binary node addresses: G((s + G^-1(pa)) mod N)            (Fig. 7)
// (cube::ring_origin). Reorder::Direct receives each block straight into its place in
// rank order; Reorder::Staged keeps the paper's two phases: shifts into local memory in
// arrival order, then the reordering pass.
#include <cstring>

#include "allgather_internal.hpp"
#include "libcomm/sim.hpp"

namespace libcomm::detail {

void ring_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, const Comm& c,
                     NodeOrder order, Reorder reorder) {
  const int p = c.size(), me = c.rank();
  const MPI_Comm comm = c.internal();
  const int q = ring_position(order, p, me);
  const int left = ring_node(order, p, q - 1), right = ring_node(order, p, q + 1);
  constexpr int kTag = 7401;
  const auto origin = [&](int s) {
    return static_cast<std::size_t>(cube::ring_origin(order, p, static_cast<std::uint32_t>(me), s));
  };
  const std::size_t mine = b.count[static_cast<std::size_t>(me)];
  if (reorder == Reorder::Direct) {
    if (mine) std::memcpy(recv + b.displ[static_cast<std::size_t>(me)], send, mine);
    for (int s = 1; s < p; ++s) {
      const std::size_t out = origin(s - 1), in = origin(s);
      sendrecv_bytes(recv + b.displ[out], b.count[out], left, recv + b.displ[in], b.count[in], right,
                     kTag, comm);
    }
    return;
  }
  // Staged: local memory slot s holds the block of origin(s), slots packed in arrival order.
  // The local work (slot offsets, the reordering pass) is charged in a simulation (sim.hpp).
  std::vector<std::size_t> at(static_cast<std::size_t>(p) + 1, 0);
  std::byte* lounge = c.scratch(0, b.total);
  sim::charge_local_work([&] {
    for (int s = 0; s < p; ++s) at[s + 1] = at[s] + b.count[origin(s)];
    if (mine) std::memcpy(lounge, send, mine);
  });
  for (int s = 1; s < p; ++s)
    sendrecv_bytes(lounge + at[s - 1], b.count[origin(s - 1)], left, lounge + at[s],
                   b.count[origin(s)], right, kTag, comm);
  sim::charge_local_work([&] {
    for (int s = 0; s < p; ++s) {  // the local reordering of s. 4.1
      const std::size_t o = origin(s);
      if (b.count[o]) std::memcpy(recv + b.displ[o], lounge + at[s], b.count[o]);
    }
  });
}

}  // namespace libcomm::detail
