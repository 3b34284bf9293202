// The non-hierarchical factor algorithm (paper 000, section 2, Fig. 1).
//
// Lemma 1: the complete graph on p vertices with self-loops splits into p 1-factors
// G_i = {(u, v_i(u))} with v_i(u) = (i - u) mod p. Round i pairs u with v_i(u) and the
// two exchange m_uv and m_vu; a self-loop (u, u), which lands in factor (2u mod p), is a
// local copy. p rounds for any p, every rank busy in every round.
//
// The grouped variant (same section: "the self-loops can all be concentrated in a single
// factor in the case of even P"): for even p, take the factorisation of the p-1 = m
// (odd) vertices 0..m-1, v_i(u) = (i - u) mod m, in which every factor has exactly one
// self-loop u = i/2 mod m; pair that vertex with vertex m = p-1 instead. That gives m
// factors without self-loops plus one factor made only of self-loops (round 0 here, all
// local copies). For odd p every factor of the complete graph with self-loops has an odd
// number of vertices and therefore a self-loop, so no grouping exists.
#include "alltoall_internal.hpp"
#include "libcomm/error.hpp"

namespace libcomm::detail {

Schedule factor_schedule(int p) {
  // Round i pairs u with v_i(u).
  return partner_schedule("factor", p, 1, [p](int i, int u) { return ((i - u) % p + p) % p; });
}

Schedule factor_grouped_schedule(int p) {
  require(p % 2 == 0, "factor_grouped: self-loops can be gathered into one factor only for an "
                      "even number of ranks, P = " + std::to_string(p) +
                      " (use factor, or allow fallback)");
  const int m = p - 1;
  Schedule s{"factor_grouped", p, 1, {}};
  s.rounds.resize(static_cast<std::size_t>(p));
  for (int u = 0; u < p; ++u) s.rounds[0].transfers.push_back({u, u, aapc_block(u, u, p)});
  for (int i = 0; i < m; ++i) {
    auto& round = s.rounds[static_cast<std::size_t>(i) + 1].transfers;
    for (int u = 0; u < m; ++u) {
      const int v = ((i - u) % m + m) % m;
      if (v == u) {  // the one self-loop of this factor: pair u with the extra vertex m
        round.push_back({u, m, aapc_block(u, m, p)});
        round.push_back({m, u, aapc_block(m, u, p)});
      } else {
        round.push_back({u, v, aapc_block(u, v, p)});
      }
    }
  }
  return s;
}

namespace {

std::string needs_even(const AlltoallOp::Shape& s) {
  return s.p % 2 == 0 ? "" : "needs an even P (self-loops grouped in one round), P = " + std::to_string(s.p);
}

// Paper 000, Lemma 1: P rounds (the self-loop of round u, (i - u) mod P = i, idles a rank
// whose partners of the next round wait for it).
double predicted_time(const AlltoallOp::Shape& s, const CostParams& c) {
  if (s.p <= 2) return one_exchange_per_round(s, c);
  return one_exchange_per_round(s, c) * s.p / (s.p - 1);
}

}  // namespace

extern const AlltoallAlgorithm factor_alltoall{
    .algo = AlltoallAlgo::Factor, .name = "factor",
    .summary = "1-factor algorithm, partner (i - u) mod P, self-loops included", .paper = "paper 000, Fig. 1, Lemma 1",
    .cost = predicted_time, .program = schedule_alltoall_program<factor_alltoall>, .extra = {.schedule = factor_schedule}};

extern const AlltoallAlgorithm factor_grouped_alltoall{
    .algo = AlltoallAlgo::FactorGrouped, .name = "factor_grouped",
    .summary = "factor with all self-loops in one local round; even P (else factor)", .paper = "paper 000, s. 2",
    .unfit = needs_even, .applies = "even P", .fallback = AlltoallAlgo::Factor,
    .fallback_why = "grouping every self-loop into one local round needs a perfect matching of the other pairs "
                    "(paper 000)",
    .cost = one_exchange_per_round, .program = schedule_alltoall_program<factor_grouped_alltoall>,
    .extra = {.schedule = factor_grouped_schedule}};

}  // namespace libcomm::detail
