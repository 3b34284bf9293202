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
#include "reduce_scatter_internal.hpp"

namespace libcomm::detail {

StepProgram reduce_spread_reduce_scatter_program(const ReduceBlocks& b, int me) {
  const int p = static_cast<int>(b.count.size());
  const auto ume = static_cast<std::size_t>(me);
  ProgramBuilder pb("reduce_spread", me, p);
  pb.set_reduction(b.type, b.op, b.es);
  const std::size_t all = b.bytes(b.total);
  pb.set_extents(all, b.bytes(b.count[ume]));
  int p2 = 1, d = 0;
  while (p2 * 2 <= p) {
    p2 *= 2;
    ++d;
  }
  const int extra = p - p2;
  if (me >= p2) {  // folded rank: contribute, then receive the result block
    pb.send(0, me - p2, {Area::Send, 0, all}, 0);
    pb.recv(0, me - p2, {Area::Recv, 0, b.bytes(b.count[ume])}, 0);
    return std::move(pb).program();
  }
  const ByteRange w{Area::Scratch, pb.scratch(all), all};
  const ByteRange tmp{Area::Scratch, pb.scratch(all), all};
  pb.copy(0, {Area::Send, 0, all}, w);
  std::uint32_t stage = 0;
  if (me < extra) {
    pb.recv(stage, me + p2, tmp, stage);
    pb.reduce(++stage, tmp, w);
  }
  for (int u = 0; u < d; ++u, ++stage) {
    for (int i = 0; i < d; ++i) {
      const int partner = me ^ (1 << ((u + i) % d));
      const cube::Part v = cube::subblock(b.total, d, i);
      pb.exchange(stage, partner, {Area::Scratch, w.offset + b.bytes(v.offset), b.bytes(v.size)}, partner,
                  {Area::Scratch, tmp.offset + b.bytes(v.offset), b.bytes(v.size)});
    }
    pb.reduce(stage + 1, tmp, w);  // every variable got one partner's partial
  }
  // Subselection.
  pb.copy(stage, {Area::Scratch, w.offset + b.bytes(b.displ[ume]), b.bytes(b.count[ume])},
          {Area::Recv, 0, b.bytes(b.count[ume])});
  if (me < extra) {
    const auto other = static_cast<std::size_t>(me + p2);
    pb.send(stage, me + p2, {Area::Scratch, w.offset + b.bytes(b.displ[other]), b.bytes(b.count[other])}, stage);
  }
  return std::move(pb).program();
}

}  // namespace libcomm::detail
