// Cost formulas of the regular all-to-all (docs/algorithms.md, "Cost formulas"): seconds
// of one call for P ranks on the shape's node layout, b-byte blocks, in the terms of
// choice/cost_terms.hpp. The model policy compares them; tests check them against the
// MPI-free program simulator (unit test CostFormulas.*).
#include <cmath>
#include <limits>

#include "../choice/cost_terms.hpp"
#include "alltoall_internal.hpp"
#include "libcomm/hierarchical.hpp"
#include "libcomm/topology.hpp"
#include "libcomm/tree_schedule.hpp"

namespace libcomm::detail::alltoall_cost {

namespace {

using Shape = AlltoallOp::Shape;
constexpr double kNever = std::numeric_limits<double>::infinity();

Layout layout(const Shape& s) { return Layout::of(*s.nodes); }

// Blocks Bruck sends in its round for `bit`: the slots k < P with that bit set.
double bruck_blocks(int p, int bit) {
  double c = 0;
  for (int k = 0; k < p; ++k) c += (k & bit) != 0;
  return c;
}

double bruck_on(const Layout& l, double b, const CostParams& c) {
  const int p = l.ranks;
  double t = 0, moved = 0;
  for (int bit = 1; bit < p; bit <<= 1) {
    const double k = bruck_blocks(p, bit);
    t += cost::exchange_round(l, c, k * b, bit);
    moved += k;
  }
  // Rotation in, pack and unpack of every round, and the un-rotation by swaps (3 copies per
  // pair of slots).
  return t + cost::copy(c, (p + 2 * moved + 1.5 * p) * b);
}

// Open MPI's fixed alltoall decision (coll/tuned's decision function, also SMPI's default
// selector): the algorithm it runs for P ranks and b-byte blocks. 1 linear, 2 pairwise,
// 3 modified Bruck, 4 linear with a bounded window of requests, 5 two-process exchange.
struct Threshold {
  std::uint64_t below;  // block bytes
  int algo;
};
struct SizeRule {
  int ranks_below;
  Threshold rules[11];
};
constexpr std::uint64_t kAll = std::numeric_limits<std::uint64_t>::max();
constexpr SizeRule kOpenMpiAlltoall[] = {
    {3, {{2, 2}, {4, 5}, {16, 2}, {64, 5}, {256, 2}, {4096, 5}, {32768, 2}, {262144, 4}, {1048576, 5}, {kAll, 2}}},
    {8, {{8192, 4}, {16384, 1}, {65536, 4}, {524288, 1}, {1048576, 2}, {kAll, 1}}},
    {16, {{262144, 4}, {kAll, 1}}},
    {32, {{4, 4}, {512, 3}, {8192, 4}, {32768, 1}, {262144, 4}, {524288, 1}, {kAll, 4}}},
    {64, {{512, 3}, {524288, 1}, {kAll, 4}}},
    {128, {{1024, 3}, {2048, 1}, {4096, 4}, {262144, 1}, {kAll, 2}}},
    {256, {{1024, 3}, {2048, 4}, {262144, 1}, {kAll, 2}}},
    {512, {{1024, 3}, {8192, 4}, {32768, 1}, {kAll, 2}}},
    {1024, {{512, 3}, {8192, 4}, {16384, 1}, {131072, 4}, {262144, 1}, {kAll, 2}}},
    {2048, {{512, 3}, {1024, 4}, {2048, 1}, {16384, 4}, {262144, 1}, {kAll, 4}}},
    {4096, {{1024, 3}, {4096, 4}, {8192, 1}, {131072, 4}, {kAll, 1}}},
    {std::numeric_limits<int>::max(), {{2048, 3}, {8192, 4}, {16384, 1}, {32768, 4}, {65536, 1}, {kAll, 4}}},
};

int open_mpi_alltoall_algorithm(int p, std::uint64_t b) {
  for (const SizeRule& r : kOpenMpiAlltoall) {
    if (p >= r.ranks_below) continue;
    for (const Threshold& t : r.rules)
      if (b < t.below) return t.algo;
  }
  return 1;
}

}  // namespace

// (The rank's own block is copied while its messages travel: not on the critical path.)
double linear(const Shape& s, const CostParams& c) {
  return cost::all_at_once(layout(s), c, static_cast<double>(s.block));
}

double one_exchange_per_round(const Shape& s, const CostParams& c) {
  return cost::one_exchange_per_round(layout(s), c, static_cast<double>(s.block));
}

double pairwise(const Shape& s, const CostParams& c) {
  return cost::xor_exchange_rounds(layout(s), c, static_cast<double>(s.block));
}

// Paper 000, Lemma 1: P rounds (the self-loop of round u, (i - u) mod P = i, idles a rank
// whose partners of the next round wait for it).
double factor(const Shape& s, const CostParams& c) {
  if (s.p <= 2) return one_exchange_per_round(s, c);
  return one_exchange_per_round(s, c) * s.p / (s.p - 1);
}

double bruck(const Shape& s, const CostParams& c) { return bruck_on(layout(s), static_cast<double>(s.block), c); }

// Paper 000, Theorem 1: the steps of ClusteredAllToAll, one inter-node exchange per node
// per step. Auto considers it only where nodes hold several ranks (on one rank per node it
// is the 1-factor algorithm).
double clustered_factor(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  if (l.ppn == 1 || l.nodes == 1) return kNever;
  const int steps = clustered_factor_schedule(*s.nodes).steps;
  const double b = static_cast<double>(s.block);
  return steps * (c.alpha + cost::off_node(l, c, b * c.beta_at(b), b, b)) + cost::copy(c, b);
}

double inter_node(int p, double block, double link_share, const CostParams& c, AlltoallAlgo inter) {
  if (p <= 1) return cost::copy(c, block);
  AlltoallOptions o;
  const NodeMap flat = NodeMap::one_rank_per_node(p);
  const Shape column{p, static_cast<std::size_t>(block), &flat, nullptr, &o};
  AlltoallAlgo algo = inter;
  if (algo == AlltoallAlgo::Auto) {  // what the column's Auto picks: the model on its own shape
    double best = kNever;
    for (const auto& e : AlltoallOp::algorithms()) {
      if (e.cost == nullptr || (e.unfit != nullptr && !e.unfit(column).empty())) continue;
      const double t = e.cost(column, c);
      if (t < best) best = t, algo = e.algo;
    }
  }
  CostParams shared = c;  // the node's columns share its link
  shared.beta_scale *= c.inter_flows(link_share);
  const auto& e = entry_of<AlltoallOp>(algo);
  return e.cost != nullptr ? e.cost(column, shared) : kNever;
}

namespace {

// The intra-node exchange of a paper 002 scheme: through the node's shared window (one
// copy of the rank's P blocks, then a node barrier), or, without shared memory, the
// library's all-to-all among the node's ranks of bundles of `nodes` blocks.
double intra_node(const Shape& s, const Layout& l, const CostParams& c) {
  if (s.opts->node_shared_memory) return cost::copy(c, static_cast<double>(s.p) * s.block) + cost::node_barrier(l, c);
  const Layout node{l.ppn, 1, l.ppn};
  return cost::all_at_once(node, c, static_cast<double>(l.nodes) * s.block);
}

bool degenerate(const Layout& l) { return l.ppn == 1; }  // one rank per node: nothing to aggregate

}  // namespace

// Paper 002, s. 5: the leader gathers its node's P blocks per process, runs the all-to-all
// among the N leaders with bundles of ppn^2 blocks alone on the link, and scatters.
double leader(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  if (degenerate(l)) return kNever;
  const double b = static_cast<double>(s.block);
  return 2 * intra_node(s, l, c) + inter_node(l.nodes, b * l.ppn * l.ppn, 1, c, s.opts->inter_node);
}

// SA: the intra-node exchange, then ppn column all-to-alls among the N nodes with bundles
// of ppn blocks, at once on the node's link.
double send_aggregate(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  if (degenerate(l)) return kNever;
  const double b = static_cast<double>(s.block);
  return intra_node(s, l, c) + inter_node(l.nodes, b * l.ppn, l.ppn, c, s.opts->inter_node);
}

// RD: the same two steps in the other order (the copy out of the window is cold).
double recv_distribute(const Shape& s, const CostParams& c) { return send_aggregate(s, c); }

// Paper 003: contention-free phases, each one message and one synchronisation latency.
// Auto considers it only with a switch tree attached (on one switch it is pairwise with
// synchronisation messages added).
double tree_scheduled(const Shape& s, const CostParams& c) {
  if (s.topology == nullptr || s.topology->num_machines() != s.p) return kNever;
  const auto phases = static_cast<double>(schedule_tree_aapc(*s.topology).num_phases);
  return phases * (2 * c.alpha + s.block * c.beta_at(static_cast<double>(s.block))) + cost::copy(c, s.block);
}

// What the MPI library runs: Open MPI's fixed decision (SMPI's default selector copies it,
// running its linear variants as the basic linear algorithm), MPICH's size rule (Bruck up
// to 256 B on 8 ranks or more, isend/irecv up to 32 KiB, pairwise beyond), else the
// cheapest of those three.
double native(const Shape& s, const CostParams& c) {
  const Layout l = layout(s);
  const double b = static_cast<double>(s.block);
  const double lin = linear(s, c), pair = one_exchange_per_round(s, c);
  switch (cost::mpi_library()) {
    case cost::MpiLibrary::Smpi:
    case cost::MpiLibrary::OpenMpi:
      switch (open_mpi_alltoall_algorithm(s.p, s.block)) {
        case 2: return cost::is_power_of_two(s.p) ? pairwise(s, c) : pair;
        case 5: return pair;
        case 3: return bruck_on(l, b, c);
        default: return lin;
      }
    case cost::MpiLibrary::Mpich:
      if (s.block <= 256 && s.p >= 8) return bruck_on(l, b, c);
      return s.block <= 32768 ? lin : pair;
    case cost::MpiLibrary::Other: break;
  }
  return std::min({lin, pair, bruck_on(l, b, c)});
}

}  // namespace libcomm::detail::alltoall_cost
