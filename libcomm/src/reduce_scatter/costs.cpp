// Cost formulas of the all-to-all reduction (docs/algorithms.md, "Cost formulas"): the
// broadcast's motions reversed, each received byte combined once (gamma); n the largest
// block, the vector `total` bytes (paper 004, s. 4-5, Table 2: reduce-and-spread moves d
// times the d-cycles' data).
#include <algorithm>
#include <cmath>
#include <limits>

#include "../choice/cost_terms.hpp"
#include "reduce_scatter_internal.hpp"

namespace libcomm::detail::reduce_scatter_cost {

namespace {

using Shape = ReduceScatterOp::Shape;
constexpr double kNever = std::numeric_limits<double>::infinity();

Layout layout(const Shape& s) { return Layout::of(*s.nodes); }

// Recursive halving (what MPI libraries run for commutative sums): ceil(log2 P) exchanges
// of half the remaining vector, each combined; other P fold into the largest power of two
// first.
double recursive_halving(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  int p2 = 1;
  while (p2 * 2 <= s.p) p2 *= 2;
  double t = 0, part = static_cast<double>(s.total);
  const double fold = cost::nodes_of_first(l, s.p - p2), cube = cost::nodes_of_first(l, p2);  // who sends
  if (p2 != s.p) t += cost::exchange_round(l, c, part, p2, fold) + cost::combine(c, part);
  for (int dist = p2 / 2; dist >= 1; dist /= 2) {
    part /= 2;
    t += cost::xor_round(l, c, part, dist, cube) + cost::combine(c, part);
  }
  if (p2 != s.p) t += cost::exchange_round(l, c, static_cast<double>(s.largest), p2, fold);
  return t;
}

}  // namespace

// Paper 004, s. 4.1, Fig. 6: P - 1 shifts of a partial block, each combined on arrival.
double ring(const Shape& s, const CostParams& c) {
  const double n = static_cast<double>(s.largest);
  return (s.p - 1) * (cost::exchange_round(layout(s), c, n, 1) + cost::combine(c, n));
}

// s. 4.2.2: P - 1 steps, d subblocks at once, each combined.
double d_cycles(const Shape& s, const CostParams& c) {
  const int d = cube::log2_exact(s.p);
  if (d < 0) return kNever;
  if (d == 0) return 0;  // one rank: nothing moves
  const double n = static_cast<double>(s.largest);
  const double elements = n / static_cast<double>(elem_size(s.type));
  return (s.p - 1) * (allgather_cost::dcycles_step(layout(s), c, n, std::min<double>(d, elements), d) +
                      cost::combine(c, n));
}

// s. 5, Fig. 21: floor(log2 P) butterfly steps over the whole vector (d variables of
// total / d, one per dimension), each combined; other P fold into the power of two first
// and get their block back at the end; then the subselection.
double reduce_spread(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  int p2 = 1, d = 0;
  while (p2 * 2 <= s.p) p2 *= 2, ++d;
  const double all = static_cast<double>(s.total), n = static_cast<double>(s.largest);
  double t = cost::copy(c, n);
  const double elements = all / static_cast<double>(elem_size(s.type));
  const double fold = cost::nodes_of_first(l, s.p - p2), cube = cost::nodes_of_first(l, p2);  // who sends
  if (d > 0)
    t += d * (allgather_cost::dcycles_step(l, c, all, std::min<double>(d, elements), d, cube) + cost::combine(c, all));
  if (p2 != s.p)
    t += cost::exchange_round(l, c, all, p2, fold) + cost::combine(c, all) + cost::exchange_round(l, c, n, p2, fold);
  return t;
}

// One node: the vector into the window, a node barrier, P - 1 combines of one block.
double shared_window(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  if (l.nodes != 1) return kNever;
  const double n = static_cast<double>(s.largest);
  return cost::copy(c, static_cast<double>(s.total)) + cost::barrier(l, c) + cost::copy(c, n) +
         (s.p - 1) * cost::combine(c, n);
}

// What the MPI library runs: SMPI's default selector reduces the whole vector to rank 0
// (every rank's vector to it at once, combined there) and scatters the blocks from it;
// Open MPI and MPICH choose between the ring and recursive halving, taken here as the
// cheaper.
double native(const Shape& s, const CostParams& c) {
  if (cost::mpi_library() == cost::MpiLibrary::Smpi) {
    const Layout l = layout(s);
    const double all = static_cast<double>(s.total);
    // (SMPI does not charge its own reductions' arithmetic: no combine term.)
    return allgather_cost::linear_gather(l, c, all) + allgather_cost::linear_gather(l, c, static_cast<double>(s.largest));
  }
  return std::min(ring(s, c), recursive_halving(s, c));
}

}  // namespace libcomm::detail::reduce_scatter_cost
