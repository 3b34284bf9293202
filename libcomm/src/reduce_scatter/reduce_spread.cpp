// Reduce-and-spread (paper 004, s. 5, alternative 4 for reduction, Fig. 21): the whole
// vector is combined by butterfly exchanges so that every node ends with every sum (an
// allreduce), then each node keeps its own block (the subselection). The vector is cut
// into d distributed variables (Fig. 20 partitioning); variable i uses dimension
// (u + i) mod d in step u, so the d exchanges of a step use d different channels. It moves
// d times the data of the d-cycles reduction (Table 2), which is why the cycle algorithms
// win (Table 15).
// P not a power of two: the ranks beyond the largest power of two P' first fold their
// vector into rank - P', the P' ranks run the butterfly, and the folded ranks receive
// their block back.
#include <cstring>

#include "reduce_scatter_internal.hpp"

namespace libcomm::detail {

void reduce_spread_reduce_scatter(const std::byte* send, std::byte* recv, const ReduceBlocks& b,
                                  const Comm& c) {
  const int p = c.size(), me = c.rank();
  const MPI_Comm comm = c.internal();
  const auto ume = static_cast<std::size_t>(me);
  constexpr int kTag = 7413;
  int p2 = 1, d = 0;
  while (p2 * 2 <= p) {
    p2 *= 2;
    ++d;
  }
  const int extra = p - p2;
  if (me >= p2) {  // folded rank: contribute, then receive the result block
    sendrecv_bytes(send, b.bytes(b.total), me - p2, nullptr, 0, MPI_PROC_NULL, kTag, comm);
    sendrecv_bytes(nullptr, 0, MPI_PROC_NULL, recv, b.bytes(b.count[ume]), me - p2, kTag, comm);
    return;
  }
  std::byte* w = c.scratch(0, b.bytes(b.total));
  std::byte* tmp = c.scratch(1, b.bytes(b.total));
  std::memcpy(w, send, b.bytes(b.total));
  if (me < extra) {
    sendrecv_bytes(nullptr, 0, MPI_PROC_NULL, tmp, b.bytes(b.total), me + p2, kTag, comm);
    reduce_local(tmp, w, b.total, b.type, b.op);
  }
  std::vector<MPI_Request> reqs;
  for (int u = 0; u < d; ++u) {
    for (int i = 0; i < d; ++i) {
      const int partner = me ^ (1 << ((u + i) % d));
      const cube::Part v = cube::subblock(b.total, d, i);
      irecv_bytes(tmp + b.bytes(v.offset), b.bytes(v.size), partner, kTag, comm, reqs);
      isend_bytes(w + b.bytes(v.offset), b.bytes(v.size), partner, kTag, comm, reqs);
    }
    wait_all(reqs);
    reduce_local(tmp, w, b.total, b.type, b.op);  // every variable got one partner's partial
  }
  // Subselection.
  if (b.count[ume]) std::memcpy(recv, w + b.bytes(b.displ[ume]), b.bytes(b.count[ume]));
  if (me < extra) {
    const auto other = static_cast<std::size_t>(me + p2);
    sendrecv_bytes(w + b.bytes(b.displ[other]), b.bytes(b.count[other]), me + p2, nullptr, 0,
                   MPI_PROC_NULL, kTag, comm);
  }
}

}  // namespace libcomm::detail
