// Cost formulas of the irregular all-to-all (docs/algorithms.md, "Cost formulas"), in the
// terms of choice/cost_terms.hpp, from the count statistics every rank agreed on: the
// mean message m and the longest L (paper 001, s. 2: a message costs Ts + bytes (tc + td),
// a copy tm per byte; Table 3's start-up counts; every staged run carries a 24-byte header).
#include <algorithm>
#include <cmath>
#include <limits>

#include "../choice/cost_terms.hpp"
#include "alltoallv_internal.hpp"

namespace libcomm::detail::alltoallv_cost {

namespace {

using Shape = AlltoallvOp::Shape;
constexpr double kHeader = 24;  // bytes before every run of a staged message

Layout layout(const Shape& s) { return Layout::of(*s.nodes); }
double mean(const Shape& s) { return s.stats.mean_bytes; }
// What the longest message costs beyond a mean one, once (a spike delays its own step).
double spike(const Shape& s, const CostParams& c) {
  const double extra = std::max(0.0, s.stats.max_bytes - mean(s));
  return extra * c.beta_at(static_cast<double>(s.stats.max_bytes));
}

// One stage of a staged algorithm: `steps` exchanges moving the rank's `bytes` (its whole
// data, every run with its header), composed into buckets and taken apart again (two
// copies per byte, paper 001's tm).
double stage(const Layout& l, const CostParams& c, double steps, double bytes, double runs) {
  if (steps <= 0) return cost::copy(c, bytes);
  const double per_step = (bytes + kHeader * runs) / steps;
  const double exchange = l.nodes == 1 ? cost::exchange_round(l, c, per_step, 1)
                                       : cost::exchange_round(l, c, per_step, l.ppn);
  return steps * exchange + 2 * cost::copy(c, bytes);
}

// Runs per stage: a message of m bytes cut into at most `parts` pieces (whole elements).
double pieces(const Shape& s, double parts) {
  const double elements = std::max(1.0, mean(s) / static_cast<double>(std::max<std::size_t>(1, s.opts->element_bytes)));
  return s.p * std::min(parts, elements);
}

}  // namespace

// A1: P - 1 steps of one exchange (blocking), or every message posted at once (n1, n2).
double direct(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  const double m = mean(s);
  const double exchange = s.opts->mode == AlltoallvMode::Blocking ? cost::one_exchange_per_round(l, c, m)
                                                                  : cost::all_at_once(l, c, m);
  return exchange + spike(s, c) + cost::copy(c, m);
}

// A2: every message sliced evenly over the P nodes, then two all-to-all stages.
double two_stage(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  const double data = s.p * mean(s), runs = pieces(s, s.p);
  return 2 * stage(l, c, s.p - 1, data, runs);
}

// A3: row combine then column deliver, 2 (sqrt P - 1) steps.
double mesh(const Shape& s, const CostParams& c) {
  const int q = exact_sqrt(s.p);
  if (q == 0) return std::numeric_limits<double>::infinity();
  const Layout l = layout(s);
  const double data = s.p * mean(s), runs = pieces(s, 1);
  return 2 * (stage(l, c, q - 1, data, runs) + spike(s, c));  // the longest message whole in both stages
}

// A4, Theorem 2: 4 ceil(sqrt P) + 2 start-ups over four stages, each moving the rank's data
// (balanced by the load-balancing of s. 3.2).
double four_stage(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  const int q = ceil_sqrt(s.p);
  const double data = s.p * mean(s), runs = pieces(s, 1);
  return 4 * stage(l, c, (4.0 * q + 2) / 4, data, runs);
}

// What the MPI library runs: SMPI's default selector posts every message at once; Open MPI
// chooses by P alone between that and pairwise exchange (below 4 ranks, 64-127 and
// 256-1023: pairwise); MPICH posts at once; otherwise the cheaper of the two.
double native(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  const double m = mean(s);
  const double linear = cost::all_at_once(l, c, m) + spike(s, c) + cost::copy(c, m);
  const double pairwise = cost::one_exchange_per_round(l, c, m) + spike(s, c) + cost::copy(c, m);
  switch (cost::mpi_library()) {
    case cost::MpiLibrary::Smpi:
    case cost::MpiLibrary::Mpich: return linear;
    case cost::MpiLibrary::OpenMpi: {
      const int p = s.p;
      const bool pair = p < 4 || (p >= 64 && p < 128) || (p >= 256 && p < 1024);
      return pair ? pairwise : linear;
    }
    case cost::MpiLibrary::Other: break;
  }
  return std::min(linear, pairwise);
}

}  // namespace libcomm::detail::alltoallv_cost
