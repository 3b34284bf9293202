// All-to-all reduction with d Hamiltonian cycles of a binary d-cube (paper 004, s. 4.2.2
// and 4.2.3, Figs. 12-19): the broadcast's data motion reversed. Block j (destined for
// rank j) is cut into d subblocks (Fig. 20 partitioning); the partial of subblock (j, i)
// starts at node j ^ sh^i(G(2^d - 1)) and in step u travels from
//   j ^ sh^i(G(2^d - 1 - u))   to   j ^ sh^i(G(2^d - 2 - u)),
// across dimension (t_u + i) mod d; each node on the way combines its own contribution, and
// after step 2^d - 2 it arrives complete at node j. Block j's path is block 0's path
// translated by exclusive-or with j, so node pa handles in step u, for each location i,
// exactly one block to send (pa ^ sh^i(G(2^d - 1 - u))) and one to receive
// (pa ^ sh^i(G(2^d - 2 - u))): d exchanges on d different channels per step, posted
// together. The departure lounge is the send buffer (step 0) or the partial combined in
// the previous step; the arrival lounge is combined with the node's own data.
#include <cstring>
#include <utility>

#include "reduce_scatter_internal.hpp"

namespace libcomm::detail {

void dcycles_reduce_scatter(const std::byte* send, std::byte* recv, const ReduceBlocks& b, const Comm& c) {
  const int p = c.size();
  const auto me = static_cast<std::uint32_t>(c.rank());
  const MPI_Comm comm = c.internal();
  const int d = cube::log2_exact(p);
  require(d >= 0, "reduce_scatter d_cycles: rank " + std::to_string(me) +
                      ": needs a power-of-two number of ranks, P = " + std::to_string(p));
  if (d == 0) {
    if (b.count[0]) std::memcpy(recv, send, b.bytes(b.count[0]));
    return;
  }
  constexpr int kTag = 7412;
  // Per location i: two lounges of the largest subblock i.
  std::vector<std::size_t> at(static_cast<std::size_t>(d) + 1, 0);
  for (int i = 0; i < d; ++i) at[i + 1] = at[i] + b.bytes(cube::subblock(b.max, d, i).size);
  std::byte* base_a = c.scratch(0, at.back());
  std::byte* base_b = c.scratch(1, at.back());
  std::vector<std::byte*> acc(static_cast<std::size_t>(d)), tmp(static_cast<std::size_t>(d));
  for (int i = 0; i < d; ++i) {
    acc[i] = base_a + at[i];
    tmp[i] = base_b + at[i];
  }
  const auto own = [&](std::uint32_t j, int i) {  // this node's contribution to subblock (j, i)
    const cube::Part pt = cube::subblock(b.count[j], d, i);
    return std::pair<const std::byte*, std::size_t>{send + b.bytes(b.displ[j] + pt.offset), pt.size};
  };
  std::vector<MPI_Request> reqs;
  reqs.reserve(2 * static_cast<std::size_t>(d));
  const int last = p - 2;
  for (int u = 0; u <= last; ++u) {
    for (int i = 0; i < d; ++i) {
      const int partner = static_cast<int>(me ^ (1u << cube::dcycles_dim(d, u, i)));
      const std::uint32_t jr = cube::dcycles_reduce_recv_block(d, me, i, u);
      irecv_bytes(tmp[i], b.bytes(own(jr, i).second), partner, kTag, comm, reqs);
    }
    for (int i = 0; i < d; ++i) {
      const int partner = static_cast<int>(me ^ (1u << cube::dcycles_dim(d, u, i)));
      const std::uint32_t js = cube::dcycles_reduce_send_block(d, me, i, u);
      const auto [data, n] = own(js, i);
      isend_bytes(u == 0 ? data : acc[i], b.bytes(n), partner, kTag, comm, reqs);
    }
    wait_all(reqs);
    for (int i = 0; i < d; ++i) {
      const std::uint32_t jr = cube::dcycles_reduce_recv_block(d, me, i, u);
      const auto [data, n] = own(jr, i);
      reduce_local(data, tmp[i], n, b.type, b.op);
      if (u == last) {  // jr == me: subblock i of this node's result is complete
        if (n) std::memcpy(recv + b.bytes(cube::subblock(b.count[me], d, i).offset), tmp[i], b.bytes(n));
      } else {
        std::swap(acc[i], tmp[i]);
      }
    }
  }
}

}  // namespace libcomm::detail
