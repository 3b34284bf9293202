// Step programs (libcomm/program.hpp): every program-based all-to-all algorithm followed
// byte by byte through the programs of all P ranks by the symbolic verifier, for
// P = 1..64 and a sample of larger P; every allgather(v) and reduce_scatter algorithm for
// P = 1..24 with equal, unequal and empty blocks; and the verifier itself catches broken
// programs.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "allgather/allgather_internal.hpp"
#include "libcomm/allgather.hpp"
#include "reduce_scatter/reduce_scatter_internal.hpp"
#include "libcomm/node_map.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/reduce_scatter.hpp"
#include "libcomm/program.hpp"
#include "libcomm/topology.hpp"
#include "libcomm/tree_schedule.hpp"

namespace libcomm {
namespace {

// MPI_Alltoall's result: recv block i of rank r is block r of rank i's send buffer.
ExpectedResult alltoall_result(std::size_t b) {
  return [b](int r, std::size_t k) {
    return ByteOrigin{static_cast<int>(k / b), static_cast<std::size_t>(r) * b + k % b};
  };
}

VerifyResult verify_alltoall(const std::vector<StepProgram>& progs, std::size_t b) {
  const std::size_t n = progs.size() * b;
  return verify_programs(
      progs, [n](int) { return n; }, alltoall_result(b));
}

std::vector<StepProgram> programs_of(AlltoallAlgo a, int p, std::size_t b) {
  std::vector<StepProgram> progs;
  for (int r = 0; r < p; ++r) progs.push_back(alltoall_program(a, p, r, b));
  return progs;
}

const AlltoallAlgo kProgramAlgos[] = {AlltoallAlgo::Linear,
                                      AlltoallAlgo::Ring,
                                      AlltoallAlgo::RingSendrecv,
                                      AlltoallAlgo::Pairwise,
                                      AlltoallAlgo::Factor,
                                      AlltoallAlgo::FactorGrouped,
                                      AlltoallAlgo::Bruck,
                                      AlltoallAlgo::ClusteredFactor,
                                      AlltoallAlgo::ClusteredFactorFill,
                                      AlltoallAlgo::TreeScheduled,
                                      AlltoallAlgo::TreeScheduledBarrier};

bool applies(AlltoallAlgo a, int p) {
  if (a == AlltoallAlgo::Pairwise) return (p & (p - 1)) == 0;
  if (a == AlltoallAlgo::FactorGrouped) return p % 2 == 0;
  return true;
}

// P = 1..64 in three parts of about equal cost (it grows as P^3), each well inside the per-test
// timeout when sanitized (the whole range took 33 s under ASan + UBSan at -O1, 2.5 s in the normal
// build).
void every_algorithm_delivers_every_byte(int p_first, int p_last) {
  for (AlltoallAlgo a : kProgramAlgos)
    for (int p = p_first; p <= p_last; ++p) {
      if (!applies(a, p)) continue;
      // Blocks of 1 and 3 bytes: a misplaced byte inside a block shows too.
      for (std::size_t b : {std::size_t{1}, std::size_t{3}}) {
        if (p > 16 && b == 3) continue;  // the 1-byte run covers every block there
        const auto res = verify_alltoall(programs_of(a, p, b), b);
        ASSERT_TRUE(res.ok) << alltoall_algo_name(a) << " P = " << p << " b = " << b << ": "
                            << res.summary();
      }
    }
}

TEST(StepPrograms, EveryAlltoallAlgorithmDeliversEveryByteForPUpTo48) {
  every_algorithm_delivers_every_byte(1, 48);
}
TEST(StepPrograms, EveryAlltoallAlgorithmDeliversEveryByteForP49To58) {
  every_algorithm_delivers_every_byte(49, 58);
}
TEST(StepPrograms, EveryAlltoallAlgorithmDeliversEveryByteForP59To64) {
  every_algorithm_delivers_every_byte(59, 64);
}

TEST(StepPrograms, LargerRankCountsSample) {
  for (int p : {97, 128})
    for (AlltoallAlgo a :
         {AlltoallAlgo::Bruck, AlltoallAlgo::Factor, AlltoallAlgo::Ring, AlltoallAlgo::Pairwise}) {
      if (!applies(a, p)) continue;
      const auto res = verify_alltoall(programs_of(a, p, 1), 1);
      ASSERT_TRUE(res.ok) << alltoall_algo_name(a) << " P = " << p << ": " << res.summary();
    }
}

TEST(StepPrograms, TreeProgramsOnRandomTreesInEveryMode) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 12; ++trial) {
    const int m = 3 + trial * 2;
    const Topology t = Topology::random(m, 1 + trial % 4, static_cast<unsigned>(trial + 1), 0.5);
    const Schedule s = tree_rank_schedule(schedule_tree_aapc(t), t);
    const SyncPlan sync = plan_synchronisation(s, t);
    for (TreeSync mode : {TreeSync::Pairwise, TreeSync::Barrier, TreeSync::None}) {
      std::vector<StepProgram> progs;
      for (int r = 0; r < m; ++r) progs.push_back(tree_program(s, sync, r, 2, mode));
      const auto res = verify_alltoall(progs, 2);
      ASSERT_TRUE(res.ok) << "tree of " << m << " machines, mode " << static_cast<int>(mode) << ": "
                          << res.summary();
    }
  }
}

TEST(StepPrograms, RingPostsMpichsRotatedOrder) {
  // MPICH 1.2.5's MPI_Alltoall (intra_fns.c, the trivial algorithm of paper 000's
  // experiments): every receive posted, then every send, rank r sending to r + 1, r + 2, ...
  // (mod P); it also sent r its own block as a message, which ring copies instead.
  for (int p : {1, 2, 5, 24}) {
    for (int me = 0; me < p; ++me) {
      const StepProgram prog = alltoall_program(AlltoallAlgo::Ring, p, me, 4);
      EXPECT_EQ(prog.stages, 1u);
      std::vector<int> sends, recvs;
      for (const Step& st : prog.steps) {
        if (st.kind == StepKind::Send) sends.push_back(st.peer);
        if (st.kind == StepKind::Recv) recvs.push_back(st.peer);
        EXPECT_EQ(st.stage, 0u);  // one stage: the executor posts its receives before its sends
      }
      std::vector<int> rotated, from;
      for (int i = 1; i < p; ++i) rotated.push_back((me + i) % p), from.push_back((me - i + p) % p);
      EXPECT_EQ(sends, rotated) << "P = " << p << ", rank " << me;
      EXPECT_EQ(recvs, from) << "P = " << p << ", rank " << me;
    }
  }
}

TEST(StepPrograms, ScheduleProgramOfTheRingIsOneSendRecvPerRound) {
  const int p = 5;
  for (int me = 0; me < p; ++me) {
    const StepProgram prog = schedule_program(alltoall_schedule(AlltoallAlgo::RingSendrecv, p), me,
                                              4, ScheduleRun::PerRound);
    EXPECT_EQ(prog.stages, static_cast<std::uint32_t>(p));
    EXPECT_EQ(prog.messages_sent(), static_cast<std::size_t>(p - 1));
    EXPECT_EQ(prog.bytes_sent(), static_cast<std::size_t>(4 * (p - 1)));
    for (const Step& st : prog.steps) {
      if (st.kind == StepKind::Copy) {  // its own block, while round 1's messages travel
        EXPECT_EQ(st.stage, p > 1 ? 1u : 0u);
        EXPECT_TRUE(st.overlap);
        EXPECT_EQ(st.from.offset, static_cast<std::size_t>(me) * 4);
      } else {
        const int j = static_cast<int>(st.stage);
        EXPECT_EQ(st.complete, st.stage);
        EXPECT_EQ(st.peer, st.kind == StepKind::Send ? (me + j) % p : (me - j + p) % p);
      }
    }
  }
  // All at once: one stage, the copy overlapped with the posted messages.
  const StepProgram linear = alltoall_program(AlltoallAlgo::Linear, p, 2, 4);
  EXPECT_EQ(linear.stages, 1u);
  for (const Step& st : linear.steps) {
    if (st.kind == StepKind::Copy) {
      EXPECT_TRUE(st.overlap);
    }
  }
}

TEST(StepPrograms, BruckTakesCeilLog2PStagesOfOneMessage) {
  for (int p : {2, 3, 5, 8, 9, 33}) {
    int rounds = 0;
    while ((1 << rounds) < p) ++rounds;
    const StepProgram prog = alltoall_program(AlltoallAlgo::Bruck, p, p / 2, 8);
    EXPECT_EQ(prog.messages_sent(), static_cast<std::size_t>(rounds)) << "P = " << p;
  }
}

// ProgramBuilder::barrier: ceil(log2 P) rounds of one empty message out and one in; where P
// is a power of two, round k exchanges with rank XOR 2^k (so that on nodes of aligned blocks
// of ranks every rank's round crosses nodes or none does: online's timing barrier), else it
// sends to rank + 2^k and receives from rank - 2^k. Every P's programs pass the verifier.
TEST(StepPrograms, BarrierPairsRanksByXorWherePIsAPowerOfTwo) {
  for (int p = 1; p <= 24; ++p) {
    std::vector<StepProgram> progs;
    for (int r = 0; r < p; ++r) {
      ProgramBuilder pb("barrier", r, p);
      pb.barrier(0);
      pb.set_extents(0, 0);
      progs.push_back(std::move(pb).program());
    }
    const VerifyResult res = verify_programs(progs, [](int) { return std::size_t{0}; },
                                             [](int, std::size_t) { return ByteOrigin{}; });
    ASSERT_TRUE(res.ok) << "P = " << p << ": " << res.summary();
    const bool pairs = (p & (p - 1)) == 0;
    for (int r = 0; r < p; ++r) {
      std::uint32_t round = 0;
      for (int d = 1; d < p; d *= 2, ++round)
        for (const Step& st : progs[static_cast<std::size_t>(r)].steps)
          if (st.stage == round && (st.kind == StepKind::Send || st.kind == StepKind::Recv)) {
            const int want = pairs ? r ^ d : st.kind == StepKind::Send ? (r + d) % p : (r - d + p) % p;
            EXPECT_EQ(st.peer, want) << "P = " << p << ", rank " << r << ", round " << round;
          }
      EXPECT_EQ(progs[static_cast<std::size_t>(r)].messages_sent(), round) << "P = " << p;
    }
  }
}

// The verifier must fail broken programs, each in its own way.
TEST(StepPrograms, VerifierCatchesMissingWrongAndDeadlockedSteps) {
  const int p = 4;
  const std::size_t b = 2;
  auto progs = programs_of(AlltoallAlgo::RingSendrecv, p, b);
  ASSERT_TRUE(verify_alltoall(progs, b).ok);

  auto dropped = progs;  // rank 1 forgets its local copy
  std::erase_if(dropped[1].steps, [](const Step& s) { return s.kind == StepKind::Copy; });
  auto res = verify_alltoall(dropped, b);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.summary().find("never written"), std::string::npos) << res.summary();

  auto misplaced = progs;  // rank 2 copies the wrong block of its own
  for (auto& s : misplaced[2].steps)
    if (s.kind == StepKind::Copy) s.from.offset = 0;
  res = verify_alltoall(misplaced, b);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.summary().find("rank 2"), std::string::npos) << res.summary();

  auto deadlock = progs;  // rank 0 receives from the wrong peer in stage 1
  for (auto& s : deadlock[0].steps)
    if (s.kind == StepKind::Recv && s.stage == 1) s.peer = 2;
  res = verify_alltoall(deadlock, b);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.summary().find("deadlock"), std::string::npos) << res.summary();

  auto short_recv = progs;  // a receive shorter than its message
  for (auto& s : short_recv[3].steps)
    if (s.kind == StepKind::Recv && s.stage == 2) s.to.bytes = 1;
  res = verify_alltoall(short_recv, b);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.summary().find("receives 1"), std::string::npos) << res.summary();

  auto outside = progs;  // a send outside its area
  for (auto& st : outside[1].steps)
    if (st.kind == StepKind::Send) {
      st.from.offset = 1000;
      break;
    }
  res = verify_alltoall(outside, b);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.summary().find("outside"), std::string::npos) << res.summary();

  auto hazard =
      programs_of(AlltoallAlgo::Linear, p, b);  // a copy that reads a block still arriving
  for (auto& prog : hazard)
    for (auto& s : prog.steps)
      if (s.kind == StepKind::Copy)
        s.from = {Area::Recv, static_cast<std::size_t>((prog.rank + 1) % p) * b, b};
  res = verify_alltoall(hazard, b);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.summary().find("in flight"), std::string::npos) << res.summary();
}

TEST(StepPrograms, VerifierChecksReductionsCountEveryContributionOnce) {
  // Two ranks sum an element each way: rank r ends with element r reduced over both.
  const auto sum_exchange = [](bool twice) {
    std::vector<StepProgram> progs;
    for (int r = 0; r < 2; ++r) {
      ProgramBuilder out("sum", r, 2);
      out.set_extents(2, 1);
      const std::size_t tmp = out.scratch(1);
      out.copy(0, {Area::Send, static_cast<std::size_t>(r), 1}, {Area::Recv, 0, 1});
      out.exchange(0, 1 - r, {Area::Send, static_cast<std::size_t>(1 - r), 1}, 1 - r,
                   {Area::Scratch, tmp, 1});
      out.reduce(1, {Area::Scratch, tmp, 1}, {Area::Recv, 0, 1});
      if (twice) out.reduce(2, {Area::Scratch, tmp, 1}, {Area::Recv, 0, 1});
      progs.push_back(std::move(out).program());
    }
    return verify_programs(
        progs, [](int) { return std::size_t{1}; },
        [](int r, std::size_t) {
          return ByteOrigin{-1, static_cast<std::size_t>(r)};
        });
  };
  EXPECT_TRUE(sum_exchange(false).ok) << sum_exchange(false).summary();
  const auto res = sum_exchange(true);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.summary().find("twice"), std::string::npos) << res.summary();
}

TEST(StepPrograms, ApplicabilityAndRefusals) {
  EXPECT_THROW(alltoall_program(AlltoallAlgo::Pairwise, 6, 0, 8), Error);
  EXPECT_THROW(alltoall_program(AlltoallAlgo::Native, 4, 0, 8), Error);
  EXPECT_THROW(alltoall_program(AlltoallAlgo::Leader, 4, 0, 8), Error);
  EXPECT_THROW(alltoall_program(AlltoallAlgo::Ring, 4, 4, 8), Error);
  // Zero-byte blocks: nothing moves, the programs are still consistent.
  for (AlltoallAlgo a : kProgramAlgos) {
    if (!applies(a, 6)) continue;
    EXPECT_TRUE(verify_alltoall(programs_of(a, 6, 0), 0).ok) << alltoall_algo_name(a);
  }
}

// ---- allgather(v) and reduce_scatter --------------------------------------------------

// Block sizes: equal, unequal with empty blocks, and one rank holding everything.
std::vector<std::vector<std::size_t>> layouts(int p, std::size_t unit) {
  std::vector<std::vector<std::size_t>> out;
  out.emplace_back(static_cast<std::size_t>(p), 3 * unit);
  std::vector<std::size_t> uneven(static_cast<std::size_t>(p)), one(static_cast<std::size_t>(p), 0);
  for (int r = 0; r < p; ++r) uneven[r] = (r % 3 == 1 ? 0 : static_cast<std::size_t>(r % 5 + 1)) * unit;
  out.push_back(uneven);
  one[static_cast<std::size_t>(p - 1)] = 5 * unit;
  out.push_back(one);
  return out;
}

VerifyResult verify_allgather(AllgatherAlgo a, const std::vector<std::size_t>& counts, const AllgatherOptions& o) {
  const int p = static_cast<int>(counts.size());
  std::vector<StepProgram> progs;
  for (int r = 0; r < p; ++r) progs.push_back(allgather_program(a, counts, r, o));
  std::vector<std::size_t> displ(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) displ[r + 1] = displ[r] + counts[r];
  // Result byte k is byte k - displ[r] of rank r's block, r the block holding k.
  return verify_programs(
      progs, [&](int) { return displ.back(); },
      [&](int, std::size_t k) {
        const auto r = static_cast<std::size_t>(std::upper_bound(displ.begin(), displ.end(), k) - displ.begin() - 1);
        return ByteOrigin{static_cast<int>(r), k - displ[r]};
      });
}

TEST(StepPrograms, EveryAllgatherAlgorithmDeliversEveryByteForPUpTo24) {
  for (const auto& info : allgather_algorithms()) {
    if (info.algo == AllgatherAlgo::Native) continue;
    for (int p = 1; p <= 24; ++p) {
      const bool pow2 = (p & (p - 1)) == 0;
      if (!pow2 && (info.algo == AllgatherAlgo::DCycles || info.algo == AllgatherAlgo::DCyclesIndexMotion)) {
        AllgatherOptions strict;
        strict.allow_fallback = false;
        EXPECT_THROW(allgather_program(info.algo, std::vector<std::size_t>(p, 1), 0, strict), Error) << p;
        EXPECT_EQ(allgather_program(info.algo, std::vector<std::size_t>(p, 1), 0).algorithm, "ring") << p;
        continue;
      }
      for (std::size_t unit : {std::size_t{1}, std::size_t{4}}) {
        AllgatherOptions o;
        o.element_bytes = unit;
        for (Reorder reorder : {Reorder::Direct, Reorder::Staged})
          for (NodeOrder order : {NodeOrder::Binary, NodeOrder::Gray}) {
            if (order == NodeOrder::Gray && !pow2) continue;
            o.reorder = reorder;
            o.order = order;
            for (const auto& counts : layouts(p, unit)) {
              const auto res = verify_allgather(info.algo, counts, o);
              ASSERT_TRUE(res.ok) << info.name << " P = " << p << " unit " << unit << " counts[0] = " << counts[0]
                                  << " reorder " << static_cast<int>(reorder) << " order "
                                  << node_order_name(order) << ": " << res.summary();
            }
          }
      }
    }
  }
}

VerifyResult verify_reduce_scatter(ReduceScatterAlgo a, const std::vector<std::size_t>& counts, ElemType t,
                                   const ReduceScatterOptions& o) {
  const int p = static_cast<int>(counts.size());
  const std::size_t es = elem_size(t);
  std::vector<std::size_t> count_bytes(counts);  // the programs take bytes
  for (auto& c : count_bytes) c *= es;
  std::vector<StepProgram> progs;
  for (int r = 0; r < p; ++r) progs.push_back(reduce_scatter_program(a, count_bytes, t, ReduceOp::Sum, r, o));
  std::vector<std::size_t> displ(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) displ[r + 1] = displ[r] + counts[r];
  // Result byte k of rank r: byte displ[r] * es + k of every rank's vector, reduced.
  return verify_programs(
      progs, [&](int r) { return counts[static_cast<std::size_t>(r)] * es; },
      [&](int r, std::size_t k) { return ByteOrigin{-1, displ[static_cast<std::size_t>(r)] * es + k}; });
}

// The one-node algorithms through the node's shared window (issue 33): every byte of every
// block, every contribution once, and no read of the window before its writer's copy is
// ordered before it by the node barrier (the verifier's happens-before on the window).
TEST(StepPrograms, SharedWindowAllgatherAndReduceScatterOnOneNode) {
  for (int p = 1; p <= 16; ++p)
    for (const auto& counts : layouts(p, 8)) {
      const detail::Blocks blocks(counts);
      std::vector<StepProgram> progs;
      for (int r = 0; r < p; ++r) progs.push_back(detail::shared_window_allgather_program(blocks, r));
      std::vector<std::size_t> displ(counts.size() + 1, 0);
      for (std::size_t r = 0; r < counts.size(); ++r) displ[r + 1] = displ[r] + counts[r];
      const auto res = verify_programs(
          progs, [&](int) { return displ.back(); },
          [&](int, std::size_t k) {
            const auto r = static_cast<std::size_t>(std::upper_bound(displ.begin(), displ.end(), k) - displ.begin() - 1);
            return ByteOrigin{static_cast<int>(r), k - displ[r]};
          });
      ASSERT_TRUE(res.ok) << "allgather shared_window P = " << p << ": " << res.summary();
      std::size_t rounds = 0;  // ceil(log2 P): the dissemination barrier's empty messages, nothing else
      while ((std::size_t{1} << rounds) < static_cast<std::size_t>(p)) ++rounds;
      EXPECT_EQ(progs[0].messages_sent(), rounds) << "P = " << p;
      EXPECT_EQ(progs[0].bytes_sent(), 0u) << "P = " << p;

      const detail::ReduceBlocks rb(counts, ElemType::Double, ReduceOp::Sum);
      std::vector<StepProgram> rprogs;
      for (int r = 0; r < p; ++r) rprogs.push_back(detail::shared_window_reduce_scatter_program(rb, r));
      const auto rres = verify_programs(
          rprogs, [&](int r) { return counts[static_cast<std::size_t>(r)]; },
          [&](int r, std::size_t k) { return ByteOrigin{-1, displ[static_cast<std::size_t>(r)] + k}; });
      ASSERT_TRUE(rres.ok) << "reduce_scatter shared_window P = " << p << ": " << rres.summary();
    }
}

TEST(StepPrograms, EveryReduceScatterAlgorithmCombinesEveryContributionOnceForPUpTo24) {
  for (const auto& info : reduce_scatter_algorithms()) {
    if (info.algo == ReduceScatterAlgo::Native) continue;
    for (int p = 1; p <= 24; ++p) {
      const bool pow2 = (p & (p - 1)) == 0;
      if (!pow2 && info.algo == ReduceScatterAlgo::DCycles) {
        ReduceScatterOptions strict;
        strict.allow_fallback = false;
        EXPECT_THROW(reduce_scatter_program(info.algo, std::vector<std::size_t>(p, 4), ElemType::Int,
                                            ReduceOp::Sum, 0, strict),
                     Error);
        EXPECT_EQ(reduce_scatter_program(info.algo, std::vector<std::size_t>(p, 4), ElemType::Int, ReduceOp::Sum, 0)
                      .algorithm,
                  "ring");
        continue;
      }
      for (NodeOrder order : {NodeOrder::Binary, NodeOrder::Gray}) {
        if (order == NodeOrder::Gray && (!pow2 || info.algo != ReduceScatterAlgo::Ring)) continue;
        ReduceScatterOptions o;
        o.order = order;
        for (const auto& counts : layouts(p, 1)) {
          const auto res = verify_reduce_scatter(info.algo, counts, ElemType::Float, o);
          ASSERT_TRUE(res.ok) << info.name << " P = " << p << " counts[0] = " << counts[0] << " order "
                              << node_order_name(order) << ": " << res.summary();
        }
      }
    }
  }
}

TEST(StepPrograms, ASendOfTheCopiedOwnBlockReadsTheSendBufferAndTheCopyOverlaps) {
  // ProgramBuilder: the allgathers' first shift sends the own block the first copy put in
  // place; it reads the send buffer instead, and the copy overlaps the messages.
  const std::vector<std::size_t> counts(4, 64);
  const StepProgram ring = allgather_program(AllgatherAlgo::Ring, counts, 1);
  const Step& copy = ring.steps.front();
  ASSERT_EQ(copy.kind, StepKind::Copy);
  EXPECT_TRUE(copy.overlap) << ring.to_string();
  for (const Step& st : ring.steps)
    if (st.kind == StepKind::Send && st.stage == 0) {
      EXPECT_EQ(st.from.area, Area::Send) << ring.to_string();
    }
  // Bruck reads its rotated copy back with another copy: that copy must stay first.
  const StepProgram bruck = alltoall_program(AlltoallAlgo::Bruck, 2, 0, 8);
  ASSERT_EQ(bruck.steps.front().kind, StepKind::Copy);
  EXPECT_FALSE(bruck.steps.front().overlap) << bruck.to_string();
}

TEST(StepPrograms, ReduceScatterCountsMustBeWholeElements) {
  // Counts are bytes in every operation; a reduction refuses a partial element, naming it.
  std::vector<std::size_t> counts(4, 8);
  counts[2] = 6;
  try {
    reduce_scatter_program(ReduceScatterAlgo::Ring, counts, ElemType::Int, ReduceOp::Sum, 1);
    ADD_FAILURE() << "6 bytes of int accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1: counts[2] = 6 bytes is not a whole number of int"),
              std::string::npos)
        << e.what();
  }
  counts[2] = 12;
  EXPECT_EQ(reduce_scatter_program(ReduceScatterAlgo::Ring, counts, ElemType::Int, ReduceOp::Sum, 1).algorithm, "ring");
}

TEST(StepPrograms, ProgramsMoveWhatThePaperSays) {
  // Paper 004, Table 2: one cycle moves (P - 1) blocks in P - 1 steps; d cycles move the
  // same data in 2^d - 1 steps of d subblocks each; send-and-spread moves it twice.
  const int p = 8;
  const std::vector<std::size_t> counts(p, 24);
  const auto ring = allgather_program(AllgatherAlgo::Ring, counts, 3);
  const auto cycles = allgather_program(AllgatherAlgo::DCycles, counts, 3);
  EXPECT_EQ(ring.bytes_sent(), 7u * 24);
  EXPECT_EQ(ring.messages_sent(), 7u);
  EXPECT_EQ(cycles.bytes_sent(), 7u * 24);
  EXPECT_EQ(cycles.messages_sent(), 7u * 3);
  const auto im = allgather_program(AllgatherAlgo::DCyclesIndexMotion, counts, 3);
  EXPECT_EQ(im.bytes_sent(), 7u * (24 + 3 * 4)) << "index motion moves a 4-byte index with every subblock";
  std::size_t spread = 0;
  for (int r = 0; r < p; ++r) spread += allgather_program(AllgatherAlgo::SendSpread, counts, r).bytes_sent();
  EXPECT_EQ(spread, 7u * 24 + 7u * p * 24) << "gather, then a binomial broadcast of the whole vector";
  const std::vector<std::size_t> six_floats(p, 24);  // bytes
  const auto rs = reduce_scatter_program(ReduceScatterAlgo::DCycles, six_floats, ElemType::Float, ReduceOp::Sum, 3);
  EXPECT_EQ(rs.bytes_sent(), 7u * 24);
  EXPECT_EQ(rs.stages, 8u) << "2^d - 1 exchange steps and the final combine";
}

TEST(StepPrograms, VerifierCatchesAFailingCheckAndWritesToConstants) {
  const std::uint32_t a = 1, b = 2;
  for (int variant = 0; variant < 3; ++variant) {
    ProgramBuilder pb("check", 0, 1);
    pb.set_extents(4, 4);
    pb.copy(0, {Area::Send, 0, 4}, {Area::Recv, 0, 4});
    const ByteRange ca = pb.constant(&a, 4), cb = pb.constant(&b, 4);
    if (variant == 0) pb.copy(1, ca, {Area::Recv, 0, 4});
    if (variant == 1) pb.copy(1, ca, cb);
    pb.check(2, variant == 2 ? ca : cb, {Area::Recv, 0, 4});
    std::vector<StepProgram> progs;
    progs.push_back(std::move(pb).program());
    const auto res = verify_programs(
        progs, [](int) { return std::size_t{0}; }, [](int, std::size_t) { return ByteOrigin{}; });
    EXPECT_FALSE(res.ok) << variant;
    EXPECT_NE(res.summary().find(variant == 1 ? "constants" : "fails"), std::string::npos) << res.summary();
  }
}

// ---- the paper 002 schemes ----------------------------------------------------------

TEST(StepPrograms, HierarchicalSchemesDeliverEveryByteOnEveryNodeMap) {
  // Equal nodes, unequal nodes (represented columns, padding), one process per node; the
  // inter-node step as a program of several algorithms and as the library's all-to-all.
  std::vector<NodeMap> maps;
  for (int p = 1; p <= 9; ++p)
    for (const char* spec : {"ppn=2", "ppn=3", "ppn=4", "flat"}) maps.push_back(NodeMap::from_spec(spec, p));
  for (const auto& sizes : std::vector<std::vector<int>>{{1, 2, 3}, {3, 1}, {2, 2, 1}, {4, 1, 2, 3}, {1, 5}})
    maps.push_back(NodeMap::from_sizes(sizes));
  for (const auto& nm : maps)
    for (AlltoallAlgo scheme : {AlltoallAlgo::Leader, AlltoallAlgo::SendAggregate, AlltoallAlgo::RecvDistribute})
      for (AlltoallAlgo inter : {AlltoallAlgo::Native, AlltoallAlgo::Bruck, AlltoallAlgo::Pairwise, AlltoallAlgo::Ring})
        for (bool library : {false, true})
          for (bool shared : {true, false}) {
            std::vector<StepProgram> progs;
            for (int r = 0; r < nm.num_ranks(); ++r)
              progs.push_back(hierarchical_alltoall_program(scheme, nm, r, 2, inter, library, shared));
            const auto res = verify_alltoall(progs, 2);
            ASSERT_TRUE(res.ok) << alltoall_algo_name(scheme) << " over " << alltoall_algo_name(inter)
                                << (library ? " (library collectives)" : "")
                                << (shared ? " (shared window)" : " (messages)") << " on " << nm.describe()
                                << ": " << res.summary();
          }
}

namespace {
struct IntraNodeTraffic {
  std::size_t copied = 0, cold = 0;  // bytes copied, of them cold
  std::size_t data_messages = 0;     // data sends on the node channel
  bool shared = false;
};

IntraNodeTraffic intra_node_traffic(const StepProgram& p) {
  IntraNodeTraffic t;
  t.shared = p.shared_bytes > 0;
  for (const Step& st : p.steps) {
    if (st.kind == StepKind::Copy) t.copied += st.from.bytes, t.cold += st.cold ? st.from.bytes : 0;
    if (st.kind == StepKind::Send && st.tag == TagKind::Data && st.channel == 1) ++t.data_messages;
  }
  return t;
}
}  // namespace

TEST(StepPrograms, SharedWindowSchemesCopyEachBlockOnceAndSendNothingInsideTheNode) {
  // Paper 002, s. 5 on a blocked map (4 nodes of 4): SA copies its p blocks into the window
  // (warm) and its column all-to-all writes the receive buffer itself; RD sends its send
  // buffer itself and copies its p blocks out of the window (cold: the network wrote them);
  // leader copies in and out. No data message stays inside a node (channel 1 is the node).
  // The inter-node all-to-all (pairwise) adds the copy of the node's own bundle.
  const NodeMap nm = NodeMap::from_spec("ppn=4", 16);
  const std::size_t b = 8, row = 16 * b, bundle = 4 * b;
  const auto traffic = [&](AlltoallAlgo scheme, int r) {
    return intra_node_traffic(hierarchical_alltoall_program(scheme, nm, r, b, AlltoallAlgo::Pairwise));
  };
  for (int r = 0; r < 16; ++r) {
    const auto sa = traffic(AlltoallAlgo::SendAggregate, r);
    const auto rd = traffic(AlltoallAlgo::RecvDistribute, r);
    const auto le = traffic(AlltoallAlgo::Leader, r);
    EXPECT_TRUE(sa.shared && rd.shared && le.shared);
    EXPECT_EQ(sa.copied, row + bundle) << "rank " << r;
    EXPECT_EQ(sa.cold, 0u) << "rank " << r;
    EXPECT_EQ(rd.copied, row + bundle) << "rank " << r;
    EXPECT_EQ(rd.cold, row) << "rank " << r;
    EXPECT_EQ(le.copied, 2 * row + (r % 4 == 0 ? 4 * bundle : 0)) << "rank " << r;
    EXPECT_EQ(le.cold, row) << "rank " << r;
    EXPECT_EQ(sa.data_messages + rd.data_messages + le.data_messages, 0u) << "rank " << r;
    // The message fallback: staging copies and intra-node messages.
    const auto sa_msg = intra_node_traffic(
        hierarchical_alltoall_program(AlltoallAlgo::SendAggregate, nm, r, b, AlltoallAlgo::Auto, false, false));
    EXPECT_FALSE(sa_msg.shared);
    EXPECT_GT(sa_msg.copied, row);
    EXPECT_GT(sa_msg.data_messages, 0u);
  }
}

TEST(StepPrograms, VerifierReportsSharedWindowAccessesNoMessageOrders) {
  // Without its node barrier (the Sync messages on the node channel) send_aggregate's
  // column all-to-all reads window bytes other processes write unordered: a race, which
  // the verifier must report even where its own interleaving happens to deliver the bytes.
  const NodeMap nm = NodeMap::from_spec("ppn=3", 6);
  for (AlltoallAlgo scheme : {AlltoallAlgo::SendAggregate, AlltoallAlgo::RecvDistribute, AlltoallAlgo::Leader}) {
    std::vector<StepProgram> progs;
    for (int r = 0; r < 6; ++r) {
      StepProgram p = hierarchical_alltoall_program(scheme, nm, r, 4, AlltoallAlgo::Pairwise);
      std::erase_if(p.steps, [](const Step& st) { return st.tag == TagKind::Sync && st.channel == 1; });
      progs.push_back(std::move(p));
    }
    const auto res = verify_alltoall(progs, 4);
    ASSERT_FALSE(res.ok) << alltoall_algo_name(scheme);
    bool race = false;
    for (const auto& what : res.problems) race = race || what.find("race") != std::string::npos;
    EXPECT_TRUE(race) << alltoall_algo_name(scheme) << ": " << res.summary();
  }
}

// ---- alltoallv: direct and the staged algorithms routed ahead of time ------------------

TEST(StepPrograms, AlltoallvProgramsDeliverEveryElementForRandomCounts) {
  // Random counts (zeros among them, one large spike as in Pattern1), send displacements
  // with gaps, 3-byte elements; every algorithm that applies, blocking and all-at-once.
  // The receive blocks are packed so that every result byte is checked.
  std::mt19937 rng(11);
  for (int p = 1; p <= 20; ++p)
    for (int trial = 0; trial < 2; ++trial) {
      const auto up = static_cast<std::size_t>(p);
      std::vector<std::int64_t> m(up * up);
      for (auto& v : m) v = static_cast<std::int64_t>(rng() % 4 == 0 ? 0 : rng() % 5);
      m[rng() % m.size()] = 40;
      const std::size_t es = 3;
      std::vector<std::vector<std::int64_t>> sd(up, std::vector<std::int64_t>(up)), rd = sd;
      std::vector<std::size_t> recv_bytes(up, 0);
      for (std::size_t i = 0; i < up; ++i) {
        std::int64_t s_at = 1, r_at = 0;
        for (std::size_t j = 0; j < up; ++j) {
          sd[i][j] = s_at, s_at += m[i * up + j] + 1;  // a gap after every send block
          rd[i][j] = r_at, r_at += m[j * up + i];
        }
        recv_bytes[i] = static_cast<std::size_t>(r_at) * es;
      }
      // The programs take bytes (3-byte elements: byte k of a block is not its element k).
      const auto in_bytes = [&](std::vector<std::int64_t> v) {
        for (auto& x : v) x *= static_cast<std::int64_t>(es);
        return v;
      };
      const auto mb = in_bytes(m);
      for (AlltoallvAlgo a : {AlltoallvAlgo::Direct, AlltoallvAlgo::TwoStage, AlltoallvAlgo::Mesh, AlltoallvAlgo::FourStage})
        for (AlltoallvMode mode : {AlltoallvMode::Blocking, AlltoallvMode::NonblockingSingle}) {
          int q = 1;
          while (q * q < p) ++q;
          if (a == AlltoallvAlgo::Mesh && q * q != p) continue;
          // Dealt in whole 3-byte elements (element_bytes) and in bytes: both deliver.
          for (std::size_t unit : {es, std::size_t{1}}) {
          std::vector<StepProgram> progs;
          for (int r = 0; r < p; ++r)
            progs.push_back(alltoallv_program(a, p, r, mb, in_bytes(sd[static_cast<std::size_t>(r)]),
                                              in_bytes(rd[static_cast<std::size_t>(r)]), mode, unit));
          if (unit == es) {  // no piece cuts an element
            for (const auto& prog : progs)
              for (const Step& st : prog.steps)
                ASSERT_EQ((st.kind == StepKind::Recv ? st.to.bytes : st.from.bytes) % es, 0u)
                    << alltoallv_algo_name(a) << " P = " << p << " rank " << prog.rank;
          }
          const auto res = verify_programs(
              progs, [&](int r) { return recv_bytes[static_cast<std::size_t>(r)]; },
              [&](int r, std::size_t k) {
                const auto ur = static_cast<std::size_t>(r);
                std::size_t src = 0;
                while (src + 1 < up && static_cast<std::size_t>(rd[ur][src + 1]) * es <= k) ++src;
                while (m[src * up + ur] == 0) ++src;  // (empty blocks share their start)
                const std::size_t within = k - static_cast<std::size_t>(rd[ur][src]) * es;
                return ByteOrigin{static_cast<int>(src), static_cast<std::size_t>(sd[src][ur]) * es + within};
              });
          ASSERT_TRUE(res.ok) << alltoallv_algo_name(a) << " mode " << alltoallv_mode_name(mode) << " P = " << p
                              << " unit " << unit << ": " << res.summary();
          }
        }
    }
}

TEST(StepPrograms, StagedAlltoallvDealsWholeElements) {
  // Paper 001 deals a message's elements among the nodes. Dealt in bytes, a message of 16
  // elements of 22 B at P = 64 became 64 pieces of 5-6 B, each a run of its own (the
  // regression that made four_stage 1.7x slower): dealt in elements it stays 16 pieces.
  const int p = 64;
  const std::int64_t e = 22;
  std::vector<std::int64_t> m(static_cast<std::size_t>(p * p), 16 * e), d(static_cast<std::size_t>(p));
  for (int k = 0; k < p; ++k) d[static_cast<std::size_t>(k)] = k * 16 * e;
  for (AlltoallvAlgo a : {AlltoallvAlgo::TwoStage, AlltoallvAlgo::FourStage}) {
    std::size_t copies_elements = 0, copies_bytes = 0;
    for (std::size_t unit : {static_cast<std::size_t>(e), std::size_t{1}}) {
      const StepProgram prog = alltoallv_program(a, p, 5, m, d, d, AlltoallvMode::Blocking, unit);
      const auto n = static_cast<std::size_t>(
          std::count_if(prog.steps.begin(), prog.steps.end(), [](const Step& st) { return st.kind == StepKind::Copy; }));
      (unit == 1 ? copies_bytes : copies_elements) = n;
    }
    EXPECT_LT(copies_elements, copies_bytes) << alltoallv_algo_name(a);
  }
}

}  // namespace
}  // namespace libcomm
