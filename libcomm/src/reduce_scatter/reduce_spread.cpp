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
#include <algorithm>
#include <limits>

#include "reduce_scatter_internal.hpp"

namespace libcomm::detail {

namespace {

StepProgram program(const ReduceBlocks& b, int me, const ReduceScatterOptions&) {
  const int p = static_cast<int>(b.count.size());
  const auto ume = static_cast<std::size_t>(me);
  ProgramBuilder pb("reduce_spread", me, p);
  pb.set_reduction(b.type, b.op, b.es);
  const std::size_t all = b.bytes(b.total);
  pb.set_extents(all, b.bytes(b.count[ume]));
  const int p2 = cost::power_of_two_at_most(p), d = cube::log2_exact(p2);
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

// s. 5, Fig. 21: floor(log2 P) butterfly steps over the whole vector (d variables of
// total / d, one per dimension), each combined; other P fold into the power of two first
// and get their block back at the end; then the subselection.
double predicted_time(const ReduceScatterOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  const int p2 = cost::power_of_two_at_most(s.p), d = cube::log2_exact(p2);
  const double all = static_cast<double>(s.total), n = static_cast<double>(s.largest);
  double t = cost::copy(c, n);
  const double elements = all / static_cast<double>(elem_size(s.type));
  const double fold = cost::nodes_of_first(l, s.p - p2), cube = cost::nodes_of_first(l, p2);  // who sends
  if (d > 0) t += d * (cost::dcycles_step(l, c, all, std::min<double>(d, elements), d, cube) + cost::combine(c, all));
  if (p2 != s.p)
    t += cost::exchange_round(l, c, all, p2, fold) + cost::combine(c, all) + cost::exchange_round(l, c, n, p2, fold);
  return t;
}

}  // namespace

extern const ReduceScatterAlgorithm reduce_spread_reduce_scatter{
    .algo = ReduceScatterAlgo::ReduceSpread, .name = "reduce_spread",
    .summary = "butterfly reduce-and-spread of the whole vector, then subselection, any P",
    .paper = "paper 004, s. 5, Fig. 21", .cost = predicted_time, .program = blocks_program<program>};

}  // namespace libcomm::detail
