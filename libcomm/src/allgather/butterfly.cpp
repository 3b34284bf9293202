// All-to-all broadcast by rotated spanning binomial trees (paper 004, s. 5, alternative 4:
// "equivalent to a butterfly network based algorithm"), ceil(log2 P) steps.
//   P = 2^d: recursive doubling on the cube, step k exchanges everything gathered so far
//            (the aligned group of 2^k ranks) with the neighbour across dimension k; the
//            group is contiguous in rank order, so it is received in place.
//   other P: the same doubling on a ring of distances 1, 2, 4, ... (dissemination, the
//            binomial tree of every rank rotated to start at that rank): after step k a
//            rank holds the blocks of ranks me .. me + 2^(k+1) - 1 in a rotated scratch
//            buffer, which is un-rotated at the end.
#include <algorithm>

#include "allgather_internal.hpp"

namespace libcomm::detail {

namespace {

StepProgram program(const Blocks& b, int me, const AllgatherOptions&) {
  const int p = static_cast<int>(b.count.size());
  ProgramBuilder pb("butterfly", me, p);
  const auto ume = static_cast<std::size_t>(me);
  const std::size_t mine = b.count[ume];
  pb.set_extents(mine, b.total);
  const auto range_bytes = [&](int first, int n) {  // blocks first .. first + n - 1, no wrap
    return b.displ[static_cast<std::size_t>(first + n - 1)] + b.count[static_cast<std::size_t>(first + n - 1)] -
           b.displ[static_cast<std::size_t>(first)];
  };
  std::uint32_t stage = 0;
  if (cube::log2_exact(p) >= 0) {
    pb.copy(0, {Area::Send, 0, mine}, {Area::Recv, b.displ[ume], mine});
    for (int bit = 1; bit < p; bit <<= 1, ++stage) {
      const int partner = me ^ bit;
      const int mine_first = me & ~(bit - 1), theirs_first = partner & ~(bit - 1);
      pb.exchange(stage, partner, {Area::Recv, b.displ[static_cast<std::size_t>(mine_first)], range_bytes(mine_first, bit)},
                  partner,
                  {Area::Recv, b.displ[static_cast<std::size_t>(theirs_first)], range_bytes(theirs_first, bit)});
    }
    return std::move(pb).program();
  }
  // Rotated scratch: slot k holds the block of rank (me + k) mod P, packed.
  const std::size_t buf = pb.scratch(b.total);
  const auto slots_bytes = [&](int src, int n) {  // slots 0..n-1 of rank src
    std::size_t s = 0;
    for (int k = 0; k < n; ++k) s += b.count[static_cast<std::size_t>((src + k) % p)];
    return s;
  };
  pb.copy(0, {Area::Send, 0, mine}, {Area::Scratch, buf, mine});
  std::size_t filled = mine;
  int held = 1;
  for (int dist = 1; held < p; dist <<= 1, ++stage) {
    const int n = std::min(dist, p - held);
    const int to = (me - dist + p) % p, from = (me + dist) % p;
    const std::size_t in = slots_bytes(from, n);
    pb.exchange(stage, to, {Area::Scratch, buf, slots_bytes(me, n)}, from, {Area::Scratch, buf + filled, in});
    filled += in;
    held += n;
  }
  // Un-rotate: slots 0 .. P-1-me are ranks me .. P-1, the rest ranks 0 .. me-1.
  const std::size_t upper = b.total - b.displ[ume];
  pb.copy(stage, {Area::Scratch, buf, upper}, {Area::Recv, b.displ[ume], upper});
  pb.copy(stage, {Area::Scratch, buf + upper, b.displ[ume]}, {Area::Recv, 0, b.displ[ume]});
  return std::move(pb).program();
}

// ceil(log2 P) exchanges of everything gathered so far (2^k blocks in step k); other P
// un-rotate a scratch copy at the end.
double predicted_time(const AllgatherOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  const double n = static_cast<double>(s.largest);
  double t = 0;
  const bool cube = cube::log2_exact(s.p) >= 0;  // XOR partners; otherwise shifts by dist
  for (int dist = 1; dist < s.p; dist <<= 1) {
    const double bytes = std::min(dist, s.p - dist) * n;
    t += cube ? cost::xor_round(l, c, bytes, dist) : cost::exchange_round(l, c, bytes, dist);
  }
  if (!cube) t += cost::copy(c, s.total);  // the un-rotation
  return t;
}

}  // namespace

extern const AllgatherAlgorithm butterfly_allgather{
    .algo = AllgatherAlgo::Butterfly, .name = "butterfly",
    .summary = "recursive doubling / rotated binomial trees, log P steps, any P", .paper = "paper 004, s. 5, alternative 4",
    .cost = predicted_time, .program = blocks_program<program>};

}  // namespace libcomm::detail
