// All-to-all broadcast along a single Hamiltonian cycle (paper 004, s. 4.1, Fig. 5): P - 1
// left cyclic shifts; in shift s the node at ring position q sends what it received in
// shift s - 1 (its own block for s = 1) to position q - 1 and receives the block of
// position q + s from q + 1. The local reordering of s. 4.1 says where that block belongs:
//   binary ring:                      s <- (s - j) mod N, i.e. origin (pa + s) mod P
//   Gray path, binary node addresses: G((s + G^-1(pa)) mod N)            (Fig. 7)
// (cube::ring_origin). Reorder::Direct receives each block straight into its place in
// rank order; Reorder::Staged keeps the paper's two phases: shifts into local memory in
// arrival order, then the reordering pass.
#include "allgather_internal.hpp"

namespace libcomm::detail {

namespace {

StepProgram program(const Blocks& b, int me, const AllgatherOptions& opts) {
  const NodeOrder order = opts.order;
  const Reorder reorder = opts.reorder;
  const int p = static_cast<int>(b.count.size());
  ProgramBuilder pb(reorder == Reorder::Staged ? "ring (staged)" : "ring", me, p);
  const auto ume = static_cast<std::size_t>(me);
  pb.set_extents(b.count[ume], b.total);
  const int q = ring_position(order, me);
  const int left = ring_node(order, p, q - 1), right = ring_node(order, p, q + 1);
  const auto origin = [&](int s) {
    return static_cast<std::size_t>(cube::ring_origin(order, p, static_cast<std::uint32_t>(me), s));
  };
  // Shift s (s = 1 .. P - 1) runs in stage s - 1 and sends what shift s - 1 received.
  if (reorder == Reorder::Direct) {
    pb.copy(0, {Area::Send, 0, b.count[ume]}, {Area::Recv, b.displ[ume], b.count[ume]});
    for (int s = 1; s < p; ++s) {
      const std::size_t out = origin(s - 1), in = origin(s);
      pb.exchange(static_cast<std::uint32_t>(s - 1), left, {Area::Recv, b.displ[out], b.count[out]}, right,
                  {Area::Recv, b.displ[in], b.count[in]});
    }
    return std::move(pb).program();
  }
  // Staged: scratch slot s holds the block of origin(s), slots packed in arrival order; the
  // local reordering of s. 4.1 is the last stage.
  const std::size_t lounge = pb.scratch(b.total);
  std::vector<std::size_t> at(static_cast<std::size_t>(p) + 1, lounge);
  for (int s = 0; s < p; ++s) at[s + 1] = at[s] + b.count[origin(s)];
  pb.copy(0, {Area::Send, 0, b.count[ume]}, {Area::Scratch, at[0], b.count[ume]});
  for (int s = 1; s < p; ++s)
    pb.exchange(static_cast<std::uint32_t>(s - 1), left, {Area::Scratch, at[s - 1], b.count[origin(s - 1)]}, right,
                {Area::Scratch, at[s], b.count[origin(s)]});
  const auto last = static_cast<std::uint32_t>(p - 1);
  for (int s = 0; s < p; ++s) {
    const std::size_t o = origin(s);
    pb.copy(last, {Area::Scratch, at[s], b.count[o]}, {Area::Recv, b.displ[o], b.count[o]});
  }
  return std::move(pb).program();
}

// Paper 004, s. 4.1: P - 1 shifts of one block to the next rank of the ring.
double predicted_time(const AllgatherOp::Shape& s, const CostParams& c) {
  return (s.p - 1) * cost::exchange_round(layout_of(s), c, static_cast<double>(s.largest), 1);  // (own block meanwhile)
}

}  // namespace

extern const AllgatherAlgorithm ring_allgather{
    .algo = AllgatherAlgo::Ring, .name = "ring", .summary = "single Hamiltonian cycle, P - 1 shifts, --order binary|gray",
    .paper = "paper 004, s. 4.1", .unfit = gray_needs_cube<AllgatherOp::Shape>,
    .applies = "any P; with order gray, P a power of two", .cost = predicted_time, .program = blocks_program<program>};

}  // namespace libcomm::detail
