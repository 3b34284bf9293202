// All-to-all reduction along a single Hamiltonian cycle (paper 004, s. 4.1, Fig. 6): P - 1
// cyclic shifts, the reverse of the broadcast's (partials move to ring position q + 1).
// In shift s the node at position q sends its partial for the block of position q - s to
// q + 1 (its own data for s = 1), receives the partial for block q - s - 1 from q - 1 and
// combines it with its own contribution; after shift P - 1 the partial for block
// q - P = q is complete: the node's result (cube::ring_reduce_block). Every node sends one
// block per shift, (P - 1) blocks in all, the minimum for one channel. Only two
// block-sized temporaries are needed (the partial in flight and the one arriving); the
// last partial arrives straight in the receive buffer.
#include "reduce_scatter_internal.hpp"

namespace libcomm::detail {

namespace {

StepProgram program(const ReduceBlocks& b, int me, const ReduceScatterOptions& opts) {
  const NodeOrder order = opts.order;
  const int p = static_cast<int>(b.count.size());
  ProgramBuilder pb("ring", me, p);
  pb.set_reduction(b.type, b.op, b.es);
  const auto ume = static_cast<std::size_t>(me);
  pb.set_extents(b.bytes(b.total), b.bytes(b.count[ume]));
  const auto block_of = [&](std::size_t r) { return ByteRange{Area::Send, b.bytes(b.displ[r]), b.bytes(b.count[r])}; };
  if (p == 1) {
    pb.copy(0, block_of(0), {Area::Recv, 0, b.bytes(b.count[0])});
    return std::move(pb).program();
  }
  const int q = ring_position(order, me);
  const int to = ring_node(order, p, q + 1), from = ring_node(order, p, q - 1);
  const auto block = [&](int s) {
    return static_cast<std::size_t>(cube::ring_reduce_block(order, p, static_cast<std::uint32_t>(me), s));
  };
  const std::size_t slot[2] = {pb.scratch(b.bytes(b.max)), pb.scratch(b.bytes(b.max))};
  // Shift s runs in stage s - 1; its partial is combined at the start of stage s.
  ByteRange out = block_of(block(1));
  for (int s = 1; s < p; ++s) {
    const std::size_t bi = block(s + 1);
    const auto stage = static_cast<std::uint32_t>(s - 1);
    const std::size_t n = b.bytes(b.count[bi]);
    const ByteRange in = s == p - 1 ? ByteRange{Area::Recv, 0, n} : ByteRange{Area::Scratch, slot[s % 2], n};
    pb.exchange(stage, to, out, from, in);
    pb.reduce(stage + 1, block_of(bi), in);
    out = in;
  }
  return std::move(pb).program();
}

// Paper 004, s. 4.1, Fig. 6: P - 1 shifts of a partial block, each combined on arrival.
double predicted_time(const ReduceScatterOp::Shape& s, const CostParams& c) {
  const double n = static_cast<double>(s.largest);
  return (s.p - 1) * (cost::exchange_round(layout_of(s), c, n, 1) + cost::combine(c, n));
}

}  // namespace

extern const ReduceScatterAlgorithm ring_reduce_scatter{
    .algo = ReduceScatterAlgo::Ring, .name = "ring",
    .summary = "single Hamiltonian cycle, P - 1 shift-and-combine steps, --order binary|gray",
    .paper = "paper 004, s. 4.1, Fig. 6", .unfit = gray_needs_cube<ReduceScatterOp::Shape>,
    .applies = "any P; with order gray, P a power of two", .cost = predicted_time, .program = blocks_program<program>};

}  // namespace libcomm::detail
