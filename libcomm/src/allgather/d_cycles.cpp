// All-to-all broadcast with d Hamiltonian cycles of a binary d-cube (paper 004, s. 4.2.1
// after Johnsson and Ho): each block is cut into d subblocks (Fig. 20 partitioning:
// beta = ceil(n / d) elements in the first gamma subblocks, beta - 1 in the rest). Subblock
// i follows the Gray-code transition sequence shifted by i: in step u (0 <= u <= 2^d - 2)
// it is exchanged across dimension (t_u + i) mod d, so the d subblocks of a step use d
// different channels at once (posted non-blocking together). After step u, local slot
// (u + 1, i) of node pa holds subblock i of node pa ^ sh^i(G(u + 1)) (s. 4.2.1, 4.2.3).
//   index computation (d_cycles):      that formula places each subblock; Reorder::Direct
//                                      receives it straight into its final place,
//                                      Reorder::Staged into slot order, then reorders;
//   index motion (d_cycles_im):        each subblock travels with its origin index (a
//                                      32-bit integer, as on the CM-200), the reordering
//                                      pass reads the moved indices.
#include <cstring>

#include "allgather_internal.hpp"
#include "libcomm/sim.hpp"

namespace libcomm::detail {

namespace {

constexpr int kTag = 7402;

// Subblock i of a block of n bytes in units of `unit` bytes (whole elements).
cube::Part byte_part(std::size_t n, int d, int i, std::size_t unit) {
  if (unit == 0 || n % unit != 0) unit = 1;
  const cube::Part e = cube::subblock(n / unit, d, i);
  return {e.offset * unit, e.size * unit};
}

}  // namespace

void dcycles_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, const Comm& c,
                        Reorder reorder, bool index_motion, std::size_t unit) {
  const int p = c.size();
  const auto me = static_cast<std::uint32_t>(c.rank());
  const MPI_Comm comm = c.internal();
  const int d = cube::log2_exact(p);
  require(d >= 0, "allgather d_cycles: rank " + std::to_string(me) +
                      ": needs a power-of-two number of ranks, P = " + std::to_string(p));
  const std::size_t mine = b.count[me];
  if (d == 0) {
    if (mine) std::memcpy(recv, send, mine);
    return;
  }
  const int steps = p - 1;
  std::vector<MPI_Request> reqs;
  reqs.reserve(2 * static_cast<std::size_t>(d));
  const auto part = [&](std::uint32_t origin, int i) { return byte_part(b.count[origin], d, i, unit); };

  if (!index_motion && reorder == Reorder::Direct) {
    if (mine) std::memcpy(recv + b.displ[me], send, mine);
    for (int u = 0; u < steps; ++u) {
      for (int i = 0; i < d; ++i) {
        const int partner = static_cast<int>(me ^ (1u << cube::dcycles_dim(d, u, i)));
        const std::uint32_t in = cube::dcycles_broadcast_origin(d, me, u + 1, i);
        const cube::Part pi = part(in, i);
        irecv_bytes(recv + b.displ[in] + pi.offset, pi.size, partner, kTag, comm, reqs);
      }
      for (int i = 0; i < d; ++i) {
        const int partner = static_cast<int>(me ^ (1u << cube::dcycles_dim(d, u, i)));
        const std::uint32_t out = cube::dcycles_broadcast_origin(d, me, u, i);
        const cube::Part po = part(out, i);
        isend_bytes(recv + b.displ[out] + po.offset, po.size, partner, kTag, comm, reqs);
      }
      wait_all(reqs);
    }
    return;
  }

  // Staged: local slot (j, i), j = 0 .. 2^d - 1, in arrival order. With index motion every
  // slot starts with the 32-bit origin index and has room for the largest subblock i.
  const std::size_t header = index_motion ? sizeof(std::uint32_t) : 0;
  std::vector<std::size_t> cap(static_cast<std::size_t>(d));
  for (int i = 0; i < d; ++i) cap[i] = header + byte_part(b.max, d, i, unit).size;
  // The local work (slot offsets by index computation, the reordering pass) is charged in
  // a simulation (sim.hpp); the O(d) address arithmetic of each step is not.
  std::vector<std::size_t> at(static_cast<std::size_t>(p) * d + 1, 0);
  sim::charge_local_work([&] {
    for (int j = 0; j < p; ++j)
      for (int i = 0; i < d; ++i) {
        const std::size_t k = static_cast<std::size_t>(j) * d + i;
        at[k + 1] = at[k] + (index_motion ? cap[i] : part(cube::dcycles_broadcast_origin(d, me, j, i), i).size);
      }
  });
  std::byte* lounge = c.scratch(0, at.back());
  const auto slot = [&](int j, int i) { return lounge + at[static_cast<std::size_t>(j) * d + i]; };
  sim::charge_local_work([&] {
    for (int i = 0; i < d; ++i) {  // slot (0, i): the node's own subblock i
      const cube::Part pi = part(me, i);
      if (index_motion) std::memcpy(slot(0, i), &me, sizeof me);
      if (pi.size) std::memcpy(slot(0, i) + header, send + pi.offset, pi.size);
    }
  });
  for (int u = 0; u < steps; ++u) {
    for (int i = 0; i < d; ++i) {
      const int partner = static_cast<int>(me ^ (1u << cube::dcycles_dim(d, u, i)));
      const std::size_t n = index_motion ? cap[i] : part(cube::dcycles_broadcast_origin(d, me, u + 1, i), i).size;
      irecv_bytes(slot(u + 1, i), n, partner, kTag, comm, reqs);
    }
    for (int i = 0; i < d; ++i) {
      const int partner = static_cast<int>(me ^ (1u << cube::dcycles_dim(d, u, i)));
      std::uint32_t out = 0;
      if (index_motion) std::memcpy(&out, slot(u, i), sizeof out);  // the moved index
      else out = cube::dcycles_broadcast_origin(d, me, u, i);
      isend_bytes(slot(u, i), header + part(out, i).size, partner, kTag, comm, reqs);
    }
    wait_all(reqs);
  }
  sim::charge_local_work([&] {
    for (int j = 0; j < p; ++j)  // the reordering pass
      for (int i = 0; i < d; ++i) {
        std::uint32_t o = 0;
        if (index_motion) {
          std::memcpy(&o, slot(j, i), sizeof o);
          if (o >= static_cast<std::uint32_t>(p))  // (no message built on the hot path)
            throw Error("allgather d_cycles_im: rank " + std::to_string(me) + ": received a corrupt index " +
                        std::to_string(o));
        } else {
          o = cube::dcycles_broadcast_origin(d, me, j, i);
        }
        const cube::Part po = part(o, i);
        if (po.size) std::memcpy(recv + b.displ[o] + po.offset, slot(j, i) + header, po.size);
      }
  });
}

}  // namespace libcomm::detail
