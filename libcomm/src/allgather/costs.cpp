// Cost formulas of the all-to-all broadcast (docs/algorithms.md, "Cost formulas"): seconds
// of one call for P ranks on the shape's node layout, n the largest block, in the terms of
// choice/cost_terms.hpp (paper 004's step counts: P - 1 shifts for the cycles, log2 P
// for the butterfly, s. 4-5).
#include <algorithm>
#include <cmath>
#include <limits>

#include "../choice/cost_terms.hpp"
#include "allgather_internal.hpp"

namespace libcomm::detail::allgather_cost {

namespace {

using Shape = AllgatherOp::Shape;
constexpr double kNever = std::numeric_limits<double>::infinity();

Layout layout(const Shape& s) { return Layout::of(*s.nodes); }

}  // namespace

// One step of the d cycles: d messages of n / d bytes at once, one per cube dimension
// (fewer when a block has fewer elements than d: an empty subblock is not sent);
// dimension i reaches the rank 2^i away.
double dcycles_step(const Layout& l, const CostParams& c, double n, double messages, int d, double sending) {
  const double posting = (std::max(1.0, messages) - 1) * c.overhead;
  const double each = n / std::max(1.0, messages);
  if (l.nodes == 1) return c.alpha_intra + posting + n * c.beta_intra_at(each) * c.intra_flows(l.ppn);
  const int local_dims = std::min(d, cost::log2_ceil(l.ppn));  // dimensions inside a node
  const double off = static_cast<double>(d - local_dims) / d;
  const double net =
      c.alpha + posting + cost::off_node(l, c, n * off * c.inter_flows(l.ppn) * c.beta_at(each), n * off * l.ppn, each, sending);
  const double mem = off < 1 ? c.alpha_intra + posting + n * (1 - off) * c.intra_flows(l.ppn) * c.beta_intra_at(each) : 0.0;
  return std::max(net, mem);
}

// (Receiving costs no posting overhead: each sender posts one message; the P - ppn from
// other nodes arrive at once, as share_fanin says, and at least at the pace of a full link.)
double linear_gather(const Layout& l, const CostParams& c, double n) {
  const int p = l.ranks;
  if (p <= 1) return 0;
  if (l.nodes == 1) return c.alpha_intra + (p - 1) * n * c.beta_intra_at(n);
  const double in = std::max(n * c.beta_at(n) * c.fanin_flows(p - l.ppn), (p - l.ppn) * n * c.full_link_beta_at(n));
  return c.alpha + std::max(in, (l.ppn - 1) * n * c.beta_intra_at(n));
}

// Paper 004, s. 4.1: P - 1 shifts of one block to the next rank of the ring.
double ring(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  const double n = static_cast<double>(s.largest);
  return (s.p - 1) * cost::exchange_round(l, c, n, 1);  // (the own block is copied meanwhile)
}

// s. 4.2: P - 1 steps, in each the d subblocks (n / d bytes) of d cycles at once.
double d_cycles(const Shape& s, const CostParams& c) {
  const int d = cube::log2_exact(s.p);
  if (d < 0) return kNever;
  if (d == 0) return 0;  // one rank: nothing moves
  const Layout l = layout(s);
  const double n = static_cast<double>(s.largest);
  const double reorder = s.opts->reorder == Reorder::Staged ? cost::copy(c, s.p * n) : 0.0;
  return (s.p - 1) * dcycles_step(l, c, n, std::min<double>(d, n / s.opts->element_bytes), d) + reorder;
}

// s. 6.1: the same steps, each subblock with its 4-byte index, then the reordering pass
// (which also checks every moved index).
double d_cycles_im(const Shape& s, const CostParams& c) {
  const int d = cube::log2_exact(s.p);
  if (d < 0) return kNever;
  if (d == 0) return 0;  // one rank: nothing moves
  const Layout l = layout(s);
  const double n = static_cast<double>(s.largest);
  return (s.p - 1) * dcycles_step(l, c, n + 4.0 * d, d, d) + 2 * cost::copy(c, s.p * n);
}

// s. 5, alternative 3: every block to rank 0, then a binomial broadcast of the P blocks.
double send_spread(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  const double n = static_cast<double>(s.largest), all = static_cast<double>(s.total);
  return linear_gather(l, c, n) + cost::binomial_broadcast(l, c, all);
}

// s. 5, alternative 4: ceil(log2 P) exchanges of everything gathered so far (2^k blocks in
// step k); other P un-rotate a scratch copy at the end.
double butterfly(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
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

// One node: a copy in, a node barrier, a copy of all P blocks out.
double shared_window(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  if (l.nodes != 1) return kNever;
  return cost::copy(c, static_cast<double>(s.largest)) + cost::barrier(l, c) + cost::copy(c, static_cast<double>(s.total));
}

// What the MPI library runs: SMPI's default selector posts every block to every rank at
// once (its non-blocking linear allgather); Open MPI and MPICH choose among the ring,
// recursive doubling and Bruck (both log2 P steps, the butterfly's cost), taken here as
// the cheaper of the two.
double native(const Shape& s, const CostParams& c) {
  if (cost::mpi_library() == cost::MpiLibrary::Smpi)
    return cost::all_at_once(layout(s), c, static_cast<double>(s.largest)) + cost::copy(c, s.largest);
  return std::min(ring(s, c), butterfly(s, c));
}

}  // namespace libcomm::detail::allgather_cost
