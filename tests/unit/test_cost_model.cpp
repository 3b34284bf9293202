// Auto's cost model without MPI: every formula against the program simulator
// (simulate_program_time, which runs the algorithm's own step programs on the same
// parameters), and what the model policy picks.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "algorithm/cost_terms.hpp"
#include "allgather/allgather_internal.hpp"
#include "alltoall/alltoall_internal.hpp"
#include "alltoallv/alltoallv_internal.hpp"
#include "libcomm/libcomm.hpp"
#include "reduce_scatter/reduce_scatter_internal.hpp"

namespace {

using namespace libcomm;

CostParams params() {
  CostParams c;
  c.alpha = 5e-6;
  c.beta = 1e-9;
  c.alpha_intra = 1e-6;
  c.beta_intra = 2.5e-10;
  c.overhead = 0.5e-6;
  c.copy = 2e-10;
  c.gamma = 5e-10;
  return c;
}

// The same behind a network that carries 6 nodes' links' worth at once (a switch's
// backbone; CostParams::network_links): from 7 nodes on, a round where every node sends
// goes at the network's pace. (Looser: the formulas add up such rounds in lock step, as a
// fairly shared network ends them; the simulator's network serves messages one after
// another, so the ranks whose messages went first run ahead into the next round.)
CostParams on_a_backbone() {
  CostParams c = params();
  c.network_links = 6;
  return c;
}

// The formula of `op`'s algorithm `name` on `shape`.
template <class Op>
double formula(std::string_view name, const typename Op::Shape& shape, const CostParams& c) {
  for (const auto& e : Op::algorithms())
    if (e.name == name) return e.cost(shape, c);
  ADD_FAILURE() << "no algorithm " << name;
  return 0;
}

double within(double formula_s, double simulated_s) { return std::abs(formula_s / simulated_s - 1); }

TEST(CostFormulas, AlltoallMatchesTheProgramSimulatorOnOneRankPerNode) {
  const AlltoallAlgo algos[] = {AlltoallAlgo::Linear, AlltoallAlgo::Ring, AlltoallAlgo::RingSendrecv,
                                AlltoallAlgo::Pairwise, AlltoallAlgo::Factor, AlltoallAlgo::Bruck};
  for (const CostParams& c : {params(), on_a_backbone()})
  for (AlltoallAlgo a : algos)
    for (int p : {2, 3, 4, 5, 7, 8, 13, 16, 31, 32, 64}) {
      if (a == AlltoallAlgo::Pairwise && (p & (p - 1)) != 0) continue;
      const NodeMap flat = NodeMap::one_rank_per_node(p);
      for (std::size_t b : {std::size_t{8}, std::size_t{1024}, std::size_t{65536}}) {
        std::vector<StepProgram> progs;
        for (int r = 0; r < p; ++r) progs.push_back(alltoall_program(a, p, r, b));
        const double sim = simulate_program_time(progs, flat, c);
        const AlltoallOptions o;
        const auto s = detail::AlltoallOp::shape(p, b, flat, nullptr, o);
        const double f = formula<detail::AlltoallOp>(alltoall_algo_name(a), s, c);
        EXPECT_LT(within(f, sim), c.network_links > 0 ? 0.75 : 0.10) << alltoall_algo_name(a) << " P = " << p << " b = " << b << ": formula "
                                        << f * 1e6 << " us, simulated " << sim * 1e6 << " us"
                                        << (c.network_links > 0 ? " (on a backbone)" : "");
      }
    }
}

TEST(CostFormulas, AlltoallFollowsTheSimulatorOnNodesOfSeveralRanks) {
  const CostParams c = params();
  for (AlltoallAlgo a : {AlltoallAlgo::Linear, AlltoallAlgo::Pairwise, AlltoallAlgo::Bruck})
    for (int ppn : {2, 4, 8})
      for (int nodes : {2, 4, 8}) {
        const int p = ppn * nodes;
        const NodeMap nm = NodeMap::from_spec("ppn=" + std::to_string(ppn), p);
        for (std::size_t b : {std::size_t{8}, std::size_t{65536}}) {
          std::vector<StepProgram> progs;
          for (int r = 0; r < p; ++r) progs.push_back(alltoall_program(a, p, r, b));
          const double sim = simulate_program_time(progs, nm, c);
          const AlltoallOptions o;
          const auto s = detail::AlltoallOp::shape(p, b, nm, nullptr, o);
          const double f = formula<detail::AlltoallOp>(alltoall_algo_name(a), s, c);
          // (Looser: the formulas add up rounds in lock step, the simulator lets a rank run
          // ahead once its eager sends have left, so log P rounds on nodes overlap.)
          EXPECT_LT(within(f, sim), 0.5) << alltoall_algo_name(a) << " " << nodes << " x " << ppn << " b = " << b
                                          << ": formula " << f * 1e6 << " us, simulated " << sim * 1e6 << " us";
        }
      }
}

TEST(CostFormulas, AllgatherMatchesTheProgramSimulatorOnOneRankPerNode) {
  for (const CostParams& c : {params(), on_a_backbone()})
  for (AllgatherAlgo a : {AllgatherAlgo::Ring, AllgatherAlgo::DCycles, AllgatherAlgo::Butterfly, AllgatherAlgo::SendSpread})
    for (int p : {2, 3, 4, 5, 8, 13, 16, 32, 64}) {
      if (a == AllgatherAlgo::DCycles && (p & (p - 1)) != 0) continue;
      const NodeMap flat = NodeMap::one_rank_per_node(p);
      for (std::size_t b : {std::size_t{8}, std::size_t{4096}, std::size_t{65536}}) {
        const std::vector<std::size_t> counts(static_cast<std::size_t>(p), b);
        std::vector<StepProgram> progs;
        for (int r = 0; r < p; ++r) progs.push_back(allgather_program(a, counts, r));
        const double sim = simulate_program_time(progs, flat, c);
        const AllgatherOptions o;
        const auto s = detail::AllgatherOp::shape(counts, flat, o);
        const double f = formula<detail::AllgatherOp>(allgather_algo_name(a), s, c);
        EXPECT_LT(within(f, sim), c.network_links > 0 ? 0.75 : 0.15) << allgather_algo_name(a) << " P = " << p << " b = " << b << ": formula "
                                        << f * 1e6 << " us, simulated " << sim * 1e6 << " us"
                                        << (c.network_links > 0 ? " (on a backbone)" : "");
      }
    }
}

TEST(CostFormulas, ReduceScatterMatchesTheProgramSimulatorOnOneRankPerNode) {
  for (const CostParams& c : {params(), on_a_backbone()})
  for (ReduceScatterAlgo a : {ReduceScatterAlgo::Ring, ReduceScatterAlgo::DCycles, ReduceScatterAlgo::ReduceSpread})
    for (int p : {2, 3, 4, 5, 8, 13, 16, 32}) {
      if (a == ReduceScatterAlgo::DCycles && (p & (p - 1)) != 0) continue;
      const NodeMap flat = NodeMap::one_rank_per_node(p);
      for (std::size_t b : {std::size_t{8}, std::size_t{4096}, std::size_t{65536}}) {
        const std::vector<std::size_t> counts(static_cast<std::size_t>(p), b);
        std::vector<StepProgram> progs;
        for (int r = 0; r < p; ++r)
          progs.push_back(reduce_scatter_program(a, counts, ElemType::Double, ReduceOp::Sum, r));
        const double sim = simulate_program_time(progs, flat, c);
        const ReduceScatterOptions o;
        const auto s = detail::ReduceScatterOp::shape(counts, ElemType::Double, ReduceOp::Sum, flat, o);
        const double f = formula<detail::ReduceScatterOp>(reduce_scatter_algo_name(a), s, c);
        EXPECT_LT(within(f, sim), c.network_links > 0 ? 0.75 : 0.15) << reduce_scatter_algo_name(a) << " P = " << p << " b = " << b
                                        << ": formula " << f * 1e6 << " us, simulated " << sim * 1e6 << " us"
                                        << (c.network_links > 0 ? " (on a backbone)" : "");
      }
    }
}

// Native is priced as what the MPI library runs. This build links a real Open MPI (4.1 on),
// whose fixed decision runs its ring reduce_scatter on 2 ranks at 1 MiB blocks: the ring's
// exchanges and combines plus a copy of the whole vector into a buffer of its own and one of
// the finished block out; on 4-7 ranks below 256 KiB in all, recursive halving (one copy
// of the vector); its allgather on 4 ranks is recursive doubling, the butterfly's cost,
// however much cheaper the ring is predicted. (Under another MPI this test has nothing to
// check and says so.)
TEST(NativeFormula, PricesWhatARealOpenMpiRuns) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  ASSERT_EQ(MPI_Get_library_version(version, &len), MPI_SUCCESS);
  if (std::string(version, static_cast<std::size_t>(len)).find("Open MPI") == std::string::npos)
    GTEST_SKIP() << "not Open MPI: " << version;
  const CostParams c = params();
  const ReduceScatterOptions o;
  for (int p : {2, 4}) {
    const NodeMap one_node = NodeMap::from_sizes({p});
    const std::size_t bytes = p == 2 ? (1u << 20) : (1u << 15);  // blocks: 1 MiB (ring) / 32 KiB (halving)
    const std::vector<std::size_t> counts(static_cast<std::size_t>(p), bytes);
    const auto s = detail::ReduceScatterOp::shape(counts, ElemType::Double, ReduceOp::Sum, one_node, o);
    const double block = static_cast<double>(bytes), vector = block * p;
    CostParams free_copies = c;
    free_copies.copy = 0;
    const double native = formula<detail::ReduceScatterOp>("native", s, c);
    const double copies = vector * c.copy + (p == 2 ? block * c.copy : 0.0);
    // (None of the ring's, halving's or butterfly's own terms is a copy.)
    EXPECT_NEAR(native - formula<detail::ReduceScatterOp>("native", s, free_copies), copies, 1e-12) << "P = " << p;
    if (p == 2) {
      EXPECT_NEAR(native, formula<detail::ReduceScatterOp>("ring", s, c) + copies, 1e-12);
    }
  }
  const NodeMap two_nodes = NodeMap::from_sizes({2, 2});
  for (std::size_t b : {std::size_t{8}, std::size_t{32768}, std::size_t{1} << 20}) {
    const std::vector<std::size_t> sizes(4, b);
    const auto s = detail::AllgatherOp::shape(sizes, two_nodes, AllgatherOptions{});
    EXPECT_DOUBLE_EQ(formula<detail::AllgatherOp>("native", s, c), formula<detail::AllgatherOp>("butterfly", s, c))
        << "b = " << b;
  }
}

// Paper 001, s. 2.3 (Eq. 3's f_nc_b): in blocking direct (P - 1 steps of one exchange) the
// long messages chain, one in every ceil(log2 P) steps, at most as many as there are; all
// posted at once (n1), one long message delays the call once.
TEST(AlltoallvFormula, LongMessagesChainInBlockingDirect) {
  const CostParams c = params();
  const auto direct = [&](int p, AlltoallvMode mode, double longest, double mean) {
    AlltoallvOptions o;
    o.mode = mode;
    const NodeMap flat = NodeMap::one_rank_per_node(p);
    AlltoallvCountStats st;
    st.max_bytes = static_cast<std::uint64_t>(longest);
    st.mean_bytes = mean;
    return formula<detail::AlltoallvOp>("direct", detail::AlltoallvOp::shape(p, flat, st, o), c);
  };
  const double longest = 1 << 20;
  const auto spike_excess = [&](int p, AlltoallvMode mode, double mean) {
    // (the same mean with every message that long: no spike)
    return direct(p, mode, longest, mean) - direct(p, mode, mean, mean);
  };
  const double one_spike_at_64 = (longest - longest / 64) * c.beta_at(longest);
  // Pattern 1: each rank sends one long message, P of them over P - 1 steps.
  EXPECT_NEAR(spike_excess(64, AlltoallvMode::Blocking, longest / 64), 63.0 / 6 * one_spike_at_64, 1e-9);
  EXPECT_NEAR(spike_excess(64, AlltoallvMode::NonblockingSingle, longest / 64), one_spike_at_64, 1e-9);
  // Two long messages in all (mean = 2 L / P^2): at most two chain.
  const double two = 2 * longest / (64.0 * 64);
  EXPECT_NEAR(spike_excess(64, AlltoallvMode::Blocking, two), 2 * (longest - two) * c.beta_at(longest), 1e-9);
  // Two ranks: one step, one spike.
  EXPECT_NEAR(spike_excess(2, AlltoallvMode::Blocking, longest / 2), (longest / 2) * c.beta_at(longest), 1e-9);
}

// Issue 33: the model must never run a (P - 1)-step algorithm where a log P one is
// predicted cheaper (allgather and reduce_scatter at small blocks on 16 and 64 ranks).
TEST(ModelPolicy, NeverPicksPMinusOneStepsWhereLogPStepsArePredictedCheaper) {
  for (int p : {16, 64}) {
    const NodeMap flat = NodeMap::one_rank_per_node(p);
    for (std::size_t b : {std::size_t{8}, std::size_t{512}}) {
      const AllgatherChoice ag = choose_allgather(AllgatherAlgo::Auto, p);
      (void)ag;
      const std::vector<std::size_t> counts(static_cast<std::size_t>(p), b);
      const StepProgram prog = allgather_program(AllgatherAlgo::Auto, counts, 0);
      EXPECT_NE(prog.algorithm, "ring") << p << " " << b;
      EXPECT_NE(prog.algorithm, "d_cycles") << p << " " << b;
      const StepProgram rs = reduce_scatter_program(ReduceScatterAlgo::Auto, counts, ElemType::Double, ReduceOp::Sum, 0);
      EXPECT_NE(rs.algorithm, "ring") << p << " " << b;
      EXPECT_NE(rs.algorithm, "d_cycles") << p << " " << b;
    }
  }
}

// network_links is a key of the parameter file (what commbench --calibrate writes), and a
// network that carries fewer links than the nodes sending slows a round by their ratio.
TEST(CostParamsFile, NetworkLinksRoundTripsAndSlowsRoundsOfManyNodes) {
  const std::string path = ::testing::TempDir() + "network_links.model";
  CostParams c = params();
  c.network_links = 10;
  {
    std::ofstream out(path);
    out << cost_params_text(c);
  }
  const CostParams back = load_cost_params(path);
  EXPECT_DOUBLE_EQ(back.network_links, 10);
  EXPECT_DOUBLE_EQ(back.network_share(5), 1);
  EXPECT_DOUBLE_EQ(back.network_share(40), 4);
  EXPECT_DOUBLE_EQ(params().network_share(1000), 1);  // 0: no limit
  const NodeMap flat = NodeMap::one_rank_per_node(40);
  const AlltoallOptions o;
  const auto s = detail::AlltoallOp::shape(40, 65536, flat, nullptr, o);
  const double unlimited = formula<detail::AlltoallOp>("pairwise", s, params());
  const double limited = formula<detail::AlltoallOp>("pairwise", s, back);
  EXPECT_GT(limited, 3 * unlimited);  // bandwidth-bound rounds, 4x the bytes' time
  // The measured exchange among N nodes prices a network byte of n-byte messages at its
  // slope over the N (N - 1) messages: 3 nodes, 6 messages of 1000 B in 12 us more than empty.
  c.sizes = {0, 1000};
  c.one_way = c.one_way_intra = {5e-6, 6e-6};
  c.network = {10e-6, 22e-6};
  c.network_nodes = 3;
  {
    std::ofstream out(path);
    out << cost_params_text(c);
  }
  EXPECT_NEAR(load_cost_params(path).network_beta_at(1000), 2e-9, 1e-15);
  {
    std::ofstream out(path);
    out << "network_links = -1\n";
  }
  EXPECT_THROW(load_cost_params(path), Error);
}

// A message's one-way time can grow faster than its bytes at the last measured rate (SMPI's
// size-dependent latency factors: flat512's 206 us at 0 B, 1736 us at 64 KiB, 8.5 ns/byte at
// the end). That excess is a latency: where a shared network paces a round's bytes, each
// message still pays it on top (the simulator charges both), where before the round took
// only the larger of the two; the other nodes' bytes hide all of it but 1 / share.
TEST(CostParamsFile, SizeLatencyIsPaidOnTopOfTheNetworksPace) {
  CostParams c = params();
  EXPECT_DOUBLE_EQ(c.size_latency_at(4000), 0);  // no one-way table: none
  c.sizes = {0, 1000, 2000, 4000};
  c.one_way = c.one_way_intra = {5e-6, 6e-6, 20e-6, 24e-6};  // last segment 2 ns/byte
  EXPECT_DOUBLE_EQ(c.size_latency_at(1000), 0);  // 1 us over 0 B, less than 1000 B at 2 ns
  EXPECT_NEAR(c.size_latency_at(4000), 19e-6 - 4000 * 2e-9, 1e-15);
  EXPECT_NEAR(c.size_latency_at(8000), 27e-6 - 8000 * 2e-9, 1e-15);  // extrapolated: the same
  c.network_links = 10;
  const Layout l = Layout::flat(40);
  const double n = 4000, link = n * c.beta_at(n);
  const double paced = 40 * n * c.network_beta_at(n);
  ASSERT_GT(paced, link);  // 40 nodes on a network of 10 links: the network sets the pace
  EXPECT_NEAR(detail::cost::off_node(l, c, link, n, n), 11e-6 / 4 + paced, 1e-15);  // 40 nodes on 10 links
  c.one_way = c.one_way_intra = {5e-6, 7e-6, 9e-6, 13e-6};  // one rate throughout: no excess
  EXPECT_NEAR(detail::cost::off_node(l, c, n * c.beta_at(n), n, n), 40 * n * c.network_beta_at(n), 1e-15);
}

// Copies measured in cache (copy_us, commbench --calibrate) price a copy up to the last
// measured size at their interpolated slope; a larger one, and any without them, at `copy`
// (out of cache). The table round-trips through a file, beside the flat model's reader.
TEST(CostParamsFile, CopiesInCacheCostWhatWasMeasuredUpToTheLastSize) {
  const std::string path = ::testing::TempDir() + "copy_in_cache.model";
  CostParams c = params();  // copy 0.2 ns/byte
  EXPECT_DOUBLE_EQ(c.copy_at(4096), c.copy);
  c.sizes = {0, 1024, 65536};
  c.one_way = c.one_way_intra = {1e-6, 2e-6, 10e-6};
  c.copy_in_cache = {0.1e-6, 0.1e-6 + 1024 * 0.01e-9, 0.1e-6 + 65536 * 0.02e-9};
  {
    std::ofstream out(path);
    out << "ts_us = 1\ntc_td_us = 0.001\n" << cost_params_text(c);
  }
  const CostParams back = load_cost_params(path);
  EXPECT_NEAR(back.copy_at(1024), 0.01e-9, 1e-15);
  EXPECT_NEAR(back.copy_at(65536), 0.02e-9, 1e-15);
  EXPECT_DOUBLE_EQ(back.copy_at(65537), c.copy);
  EXPECT_NO_THROW(load_flat_platform(path));  // (the flat model's reader skips the table)
  // What the formulas charge: a shared-window allgather of 1 KiB blocks on one node of 2
  // copies 1 KiB and 2 KiB, now at the cache's rate.
  const NodeMap one_node = NodeMap::from_sizes({2});
  const auto s = detail::AllgatherOp::shape(std::vector<std::size_t>(2, 1024), one_node, AllgatherOptions{});
  CostParams out_of_cache = back;
  out_of_cache.copy_in_cache.clear();
  EXPECT_LT(formula<detail::AllgatherOp>("shared_window", s, back),
            formula<detail::AllgatherOp>("shared_window", s, out_of_cache));
  {
    std::ofstream out(path);
    out << "alpha_us = 1\nbeta_ns_per_byte = 1\ncopy_us = 0:1 1024:x\n";
  }
  EXPECT_THROW(load_cost_params(path), Error);
}

// The program simulator itself: one message costs alpha + n beta; P - 1 exchange rounds
// cost P - 1 times that; k messages posted at once on one link take k n beta in all.
TEST(ProgramSimulator, PricesMessagesAsTheModelSays) {
  const CostParams c = params();
  const NodeMap two = NodeMap::one_rank_per_node(2);
  std::vector<StepProgram> progs = {alltoall_program(AlltoallAlgo::Pairwise, 2, 0, 1000),
                                    alltoall_program(AlltoallAlgo::Pairwise, 2, 1, 1000)};
  // (The rank's own block is copied while the message travels.)
  EXPECT_NEAR(simulate_program_time(progs, two, c), c.alpha + 1000 * c.beta, 1e-12);
  const int p = 8;
  const NodeMap flat = NodeMap::one_rank_per_node(p);
  std::vector<StepProgram> lin;
  for (int r = 0; r < p; ++r) lin.push_back(alltoall_program(AlltoallAlgo::Linear, p, r, 100000));
  const double t = simulate_program_time(lin, flat, c);
  EXPECT_NEAR(t, c.alpha + (p - 1) * 100000 * c.beta, 0.01 * t);
  // A program whose receive is never sent is reported, not timed.
  std::vector<StepProgram> broken = {progs[0]};
  broken.push_back(alltoall_program(AlltoallAlgo::Pairwise, 2, 1, 0));
  EXPECT_THROW(simulate_program_time(broken, two, c), Error);
}

}  // namespace
