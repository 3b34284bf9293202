// All-to-all broadcast by rotated spanning binomial trees (paper 004, s. 5, alternative 4:
// "equivalent to a butterfly network based algorithm"), ceil(log2 P) steps.
//   P = 2^d: recursive doubling on the cube, step k exchanges everything gathered so far
//            (the aligned group of 2^k ranks) with the neighbour across dimension k; the
//            group is contiguous in rank order, so it is received in place.
//   other P: the same doubling on a ring of distances 1, 2, 4, ... (dissemination, the
//            binomial tree of every rank rotated to start at that rank): after step k a
//            rank holds the blocks of ranks me .. me + 2^(k+1) - 1 in a rotated buffer,
//            which is un-rotated at the end.
#include <cstring>

#include "allgather_internal.hpp"

namespace libcomm::detail {

void butterfly_allgatherv(const std::byte* send, std::byte* recv, const Blocks& b, const Comm& c) {
  const int p = c.size(), me = c.rank();
  const MPI_Comm comm = c.internal();
  constexpr int kTag = 7404;
  const auto ume = static_cast<std::size_t>(me);
  const std::size_t mine = b.count[ume];
  const auto range_bytes = [&](int first, int n) {  // blocks first .. first + n - 1, no wrap
    return b.displ[static_cast<std::size_t>(first + n - 1)] + b.count[static_cast<std::size_t>(first + n - 1)] -
           b.displ[static_cast<std::size_t>(first)];
  };
  if (cube::log2_exact(p) >= 0) {
    if (mine) std::memcpy(recv + b.displ[ume], send, mine);
    for (int bit = 1; bit < p; bit <<= 1) {
      const int partner = me ^ bit;
      const int mine_first = me & ~(bit - 1), theirs_first = partner & ~(bit - 1);
      sendrecv_bytes(recv + b.displ[static_cast<std::size_t>(mine_first)], range_bytes(mine_first, bit), partner,
                     recv + b.displ[static_cast<std::size_t>(theirs_first)], range_bytes(theirs_first, bit),
                     partner, kTag, comm);
    }
    return;
  }
  // Rotated buffer: slot k holds the block of rank (me + k) mod P, packed.
  std::byte* buf = c.scratch(0, b.total);
  const auto slots_bytes = [&](int src, int n) {  // slots 0..n-1 of rank src
    std::size_t s = 0;
    for (int k = 0; k < n; ++k) s += b.count[static_cast<std::size_t>((src + k) % p)];
    return s;
  };
  if (mine) std::memcpy(buf, send, mine);
  std::size_t filled = mine;
  int held = 1;
  for (int dist = 1; held < p; dist <<= 1) {
    const int n = std::min(dist, p - held);
    const int to = (me - dist + p) % p, from = (me + dist) % p;
    const std::size_t in = slots_bytes(from, n);
    sendrecv_bytes(buf, slots_bytes(me, n), to, buf + filled, in, from, kTag, comm);
    filled += in;
    held += n;
  }
  // Un-rotate: slots 0 .. P-1-me are ranks me .. P-1, the rest ranks 0 .. me-1.
  const std::size_t upper = b.total - b.displ[ume];
  if (upper) std::memcpy(recv + b.displ[ume], buf, upper);
  if (b.displ[ume]) std::memcpy(recv, buf + upper, b.displ[ume]);
}

}  // namespace libcomm::detail
