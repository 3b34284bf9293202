// The schedule-based all-to-all algorithms as data (DESIGN.md, core idea 1), checked
// without MPI: every schedule is a valid AAPC schedule, the round structure the papers
// describe holds, and the verifier itself catches broken schedules.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "alltoall_internal.hpp"  // detail::pairwise_schedule, ...
#include "error_helpers.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/error.hpp"
#include "libcomm/schedule.hpp"

namespace libcomm {
namespace {

bool is_power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

std::vector<int> all_sizes() {
  std::vector<int> ps;
  for (int p = 1; p <= 40; ++p) ps.push_back(p);
  ps.insert(ps.end(), {64, 100, 128});
  return ps;
}

bool applies(AlltoallAlgo a, int p) {
  if (a == AlltoallAlgo::Pairwise) return is_power_of_two(p);
  if (a == AlltoallAlgo::FactorGrouped) return p % 2 == 0;
  return true;
}

const std::vector<AlltoallAlgo> kScheduleAlgos = {
    AlltoallAlgo::Linear,   AlltoallAlgo::Ring,   AlltoallAlgo::RingSendrecv,
    AlltoallAlgo::Pairwise, AlltoallAlgo::Factor, AlltoallAlgo::FactorGrouped};

using testing::contains;
using testing::error_of;

// ---------------------------------------------------------------------------------------
// Every schedule is a valid AAPC schedule.

class EverySchedule : public ::testing::TestWithParam<AlltoallAlgo> {};

TEST_P(EverySchedule, PassesTheVerifierForManySizes) {
  const AlltoallAlgo a = GetParam();
  int checked = 0;
  for (int p : all_sizes()) {
    if (!applies(a, p)) continue;
    const Schedule s = alltoall_schedule(a, p);
    EXPECT_EQ(s.nprocs, p);
    EXPECT_EQ(s.name, alltoall_algo_name(a));
    EXPECT_EQ(s.num_transfers(), static_cast<std::size_t>(p) * p) << "P = " << p;
    const VerifyResult res = verify_aapc_schedule(s);
    EXPECT_TRUE(res.ok) << alltoall_algo_name(a) << " P = " << p << ":\n" << res.summary();
    EXPECT_TRUE(res.problems.empty());
    EXPECT_EQ(res.summary(), "ok");
    ++checked;
  }
  EXPECT_GE(checked, 7);  // pairwise: 1, 2, 4, 8, 16, 32, 64, 128
}

INSTANTIATE_TEST_SUITE_P(Schedules, EverySchedule, ::testing::ValuesIn(kScheduleAlgos),
                         [](const auto& info) {
                           return std::string(alltoall_algo_name(info.param));
                         });

// ---------------------------------------------------------------------------------------
// Round structure.

// Each rank sends exactly once and receives exactly once in the round (self-loops count).
void expect_permutation(const Round& round, int p, const std::string& where) {
  std::vector<int> sends(p), recvs(p);
  for (const auto& t : round.transfers) {
    ASSERT_TRUE(t.src >= 0 && t.src < p && t.dst >= 0 && t.dst < p) << where;
    ++sends[t.src];
    ++recvs[t.dst];
  }
  for (int q = 0; q < p; ++q) {
    EXPECT_EQ(sends[q], 1) << where << ": rank " << q << " sends " << sends[q] << " times";
    EXPECT_EQ(recvs[q], 1) << where << ": rank " << q << " receives " << recvs[q] << " times";
  }
}

// Each rank sends and receives at most one non-local message in the round.
void expect_single_ported(const Round& round, int p, const std::string& where) {
  std::vector<int> sends(p), recvs(p);
  for (const auto& t : round.transfers)
    if (t.src != t.dst) ++sends[t.src], ++recvs[t.dst];
  for (int q = 0; q < p; ++q) {
    EXPECT_LE(sends[q], 1) << where << ": rank " << q;
    EXPECT_LE(recvs[q], 1) << where << ": rank " << q;
  }
}

TEST(FactorSchedule, PRoundsPairingUWithIMinusU) {
  for (int p : all_sizes()) {
    const Schedule s = alltoall_schedule(AlltoallAlgo::Factor, p);
    ASSERT_EQ(s.num_rounds(), static_cast<std::size_t>(p)) << "P = " << p;
    EXPECT_EQ(s.ports, 1);
    for (int i = 0; i < p; ++i) {
      const std::string where = "P = " + std::to_string(p) + ", round " + std::to_string(i);
      const auto& round = s.rounds[i];
      EXPECT_EQ(round.transfers.size(), static_cast<std::size_t>(p)) << where;
      expect_permutation(round, p, where);
      // Paper 000, Lemma 1: factor G_i = {(u, v_i(u))}, v_i(u) = (i - u) mod P; the
      // exchange is symmetric (v_i(v_i(u)) = u).
      for (const auto& t : round.transfers) {
        EXPECT_EQ(t.dst, ((i - t.src) % p + p) % p) << where << ": " << t.src << "->" << t.dst;
        EXPECT_EQ(t.block, aapc_block(t.src, t.dst, p)) << where;
        // A self-loop (u, u) belongs in factor 2u mod P.
        if (t.src == t.dst) {
          EXPECT_EQ(i, (2 * t.src) % p) << where << ": self-loop " << t.src;
        }
      }
    }
    // Every self-loop appears, each in round 2u mod P.
    for (int u = 0; u < p; ++u) {
      const auto& round = s.rounds[(2 * u) % p].transfers;
      EXPECT_NE(std::find(round.begin(), round.end(), Transfer{u, u, aapc_block(u, u, p)}),
                round.end())
          << "P = " << p << ": self-loop " << u << " not in round " << (2 * u) % p;
    }
  }
}

TEST(FactorSchedule, RoundsMatchPaperExampleForFiveRanks) {
  // P = 5, round 1: v_1(u) = 1 - u mod 5 -> 0<->1, 2<->4, 3 self-loop.
  const Schedule s = alltoall_schedule(AlltoallAlgo::Factor, 5);
  std::vector<std::pair<int, int>> pairs;
  for (const auto& t : s.rounds[1].transfers) pairs.emplace_back(t.src, t.dst);
  std::sort(pairs.begin(), pairs.end());
  const std::vector<std::pair<int, int>> expected = {{0, 1}, {1, 0}, {2, 4}, {3, 3}, {4, 2}};
  EXPECT_EQ(pairs, expected);
}

TEST(PairwiseSchedule, RoundZeroLocalThenPMinusOneExchanges) {
  for (int p : all_sizes()) {
    if (!is_power_of_two(p)) continue;
    const Schedule s = alltoall_schedule(AlltoallAlgo::Pairwise, p);
    ASSERT_EQ(s.num_rounds(), static_cast<std::size_t>(p)) << "P = " << p;
    EXPECT_EQ(s.ports, 1);
    // Round 0: only local copies, one per rank.
    ASSERT_EQ(s.rounds[0].transfers.size(), static_cast<std::size_t>(p));
    for (const auto& t : s.rounds[0].transfers) EXPECT_EQ(t.src, t.dst) << "P = " << p;
    // Rounds 1..P-1: exchanges i <-> i XOR j, no local copies.
    for (int j = 1; j < p; ++j) {
      const std::string where = "P = " + std::to_string(p) + ", round " + std::to_string(j);
      expect_permutation(s.rounds[j], p, where);
      for (const auto& t : s.rounds[j].transfers) {
        EXPECT_NE(t.src, t.dst) << where;
        EXPECT_EQ(t.dst, t.src ^ j) << where;
      }
    }
  }
}

TEST(FactorGroupedSchedule, OneRoundOfSelfLoopsAndNoneElsewhere) {
  for (int p : all_sizes()) {
    if (p % 2 != 0) continue;
    const Schedule s = alltoall_schedule(AlltoallAlgo::FactorGrouped, p);
    ASSERT_EQ(s.num_rounds(), static_cast<std::size_t>(p)) << "P = " << p;
    int all_self_rounds = 0;
    for (std::size_t r = 0; r < s.num_rounds(); ++r) {
      const auto& tr = s.rounds[r].transfers;
      const auto self = std::count_if(tr.begin(), tr.end(),
                                      [](const Transfer& t) { return t.src == t.dst; });
      const std::string where = "P = " + std::to_string(p) + ", round " + std::to_string(r);
      if (self > 0) {
        EXPECT_EQ(self, p) << where << " mixes self-loops with exchanges";
        EXPECT_EQ(tr.size(), static_cast<std::size_t>(p)) << where;
        ++all_self_rounds;
      } else {
        // Every other round is a perfect matching: all P ranks exchange.
        expect_permutation(s.rounds[r], p, where);
      }
      expect_single_ported(s.rounds[r], p, where);
    }
    EXPECT_EQ(all_self_rounds, 1) << "P = " << p;
  }
}

TEST(RingSchedule, PRoundsEachAShift) {
  for (AlltoallAlgo a : {AlltoallAlgo::Ring, AlltoallAlgo::RingSendrecv})
    for (int p : all_sizes()) {
      const Schedule s = alltoall_schedule(a, p);
      ASSERT_EQ(s.num_rounds(), static_cast<std::size_t>(p)) << "P = " << p;
      for (int j = 0; j < p; ++j) {
        const std::string where = std::string(alltoall_algo_name(a)) + " P = " +
                                  std::to_string(p) + ", round " + std::to_string(j);
        expect_permutation(s.rounds[j], p, where);
        for (const auto& t : s.rounds[j].transfers) EXPECT_EQ(t.dst, (t.src + j) % p) << where;
      }
    }
}

TEST(LinearSchedule, RoundJDeliversEverythingForRankJ) {
  for (int p : {1, 2, 3, 7, 16}) {
    const Schedule s = alltoall_schedule(AlltoallAlgo::Linear, p);
    ASSERT_EQ(s.num_rounds(), static_cast<std::size_t>(p));
    EXPECT_EQ(s.ports, p);  // posts everything at once: not single-ported
    for (int j = 0; j < p; ++j)
      for (const auto& t : s.rounds[j].transfers) EXPECT_EQ(t.dst, j);
  }
}

TEST(ScheduleToString, OneLinePerRound) {
  const Schedule s = alltoall_schedule(AlltoallAlgo::Pairwise, 2);
  const std::string text = s.to_string();
  EXPECT_TRUE(contains(text, "round 0: 0->0 1->1")) << text;
  EXPECT_TRUE(contains(text, "round 1: 0->1 1->0")) << text;
}

// ---------------------------------------------------------------------------------------
// The verifier catches broken schedules.

bool any_problem_contains(const VerifyResult& r, const std::string& part) {
  return std::any_of(r.problems.begin(), r.problems.end(),
                     [&](const std::string& p) { return contains(p, part); });
}

TEST(Verifier, CatchesAMissingMessage) {
  Schedule s = alltoall_schedule(AlltoallAlgo::Factor, 5);
  const Transfer gone = s.rounds[2].transfers[1];
  s.rounds[2].transfers.erase(s.rounds[2].transfers.begin() + 1);
  const auto res = verify_aapc_schedule(s);
  EXPECT_FALSE(res.ok);
  EXPECT_FALSE(static_cast<bool>(res));
  const std::string want = "message " + std::to_string(gone.src) + "->" +
                           std::to_string(gone.dst) + " appears 0 times";
  EXPECT_TRUE(any_problem_contains(res, want)) << res.summary();
  EXPECT_TRUE(contains(res.summary(), want));
}

TEST(Verifier, CatchesADuplicatedMessage) {
  Schedule s = alltoall_schedule(AlltoallAlgo::Linear, 4);  // ports = P: only the count fails
  s.rounds[3].transfers.push_back({0, 1, aapc_block(0, 1, 4)});
  const auto res = verify_aapc_schedule(s);
  EXPECT_FALSE(res.ok);
  EXPECT_TRUE(any_problem_contains(res, "message 0->1 appears 2 times")) << res.summary();
}

TEST(Verifier, CatchesARankSendingTwiceInARoundWithOnePort) {
  // Move 0->2 from round 2 of the ring into round 1, where 0 already sends to 1 and 1
  // already sends to 2: every message still appears once, but the port limit breaks.
  Schedule s = alltoall_schedule(AlltoallAlgo::Ring, 4);
  ASSERT_EQ(s.ports, 1);
  auto& r2 = s.rounds[2].transfers;
  const auto it = std::find(r2.begin(), r2.end(), Transfer{0, 2, aapc_block(0, 2, 4)});
  ASSERT_NE(it, r2.end());
  r2.erase(it);
  s.rounds[1].transfers.push_back({0, 2, aapc_block(0, 2, 4)});
  const auto res = verify_aapc_schedule(s);
  EXPECT_FALSE(res.ok);
  EXPECT_TRUE(any_problem_contains(res, "round 1: rank 0 sends 2 messages, ports = 1"))
      << res.summary();
  EXPECT_TRUE(any_problem_contains(res, "round 1: rank 2 receives 2 messages, ports = 1"))
      << res.summary();
  EXPECT_FALSE(any_problem_contains(res, "appears")) << res.summary();
  // The same schedule with two ports is fine.
  s.ports = 2;
  EXPECT_TRUE(verify_aapc_schedule(s).ok) << verify_aapc_schedule(s).summary();
}

TEST(Verifier, LocalCopiesDoNotUseAPort) {
  // Pairwise round 1 plus the local copies of round 0: each rank sends one message and
  // copies one block locally in the same round.
  Schedule s = alltoall_schedule(AlltoallAlgo::Pairwise, 4);
  for (const auto& t : s.rounds[0].transfers) s.rounds[1].transfers.push_back(t);
  s.rounds.erase(s.rounds.begin());
  EXPECT_TRUE(verify_aapc_schedule(s).ok) << verify_aapc_schedule(s).summary();
}

TEST(Verifier, CatchesAnOutOfRangeRank) {
  for (const Transfer bad : {Transfer{0, 4, 4}, Transfer{-1, 0, 0}, Transfer{4, 4, 20}}) {
    Schedule s = alltoall_schedule(AlltoallAlgo::Factor, 4);
    s.rounds[0].transfers.push_back(bad);
    const auto res = verify_aapc_schedule(s);
    EXPECT_FALSE(res.ok);
    EXPECT_TRUE(any_problem_contains(res, "rank out of range [0, 4)")) << res.summary();
    EXPECT_TRUE(any_problem_contains(
        res, "transfer " + std::to_string(bad.src) + "->" + std::to_string(bad.dst)))
        << res.summary();
  }
}

TEST(Verifier, CatchesAWrongBlockId) {
  Schedule s = alltoall_schedule(AlltoallAlgo::Factor, 6);
  Transfer& t = s.rounds[3].transfers[0];
  const auto right = t.block;
  t.block = right + 1;
  const auto res = verify_aapc_schedule(s);
  EXPECT_FALSE(res.ok);
  EXPECT_TRUE(any_problem_contains(res, "round 3"));
  EXPECT_TRUE(any_problem_contains(res, "carries block " + std::to_string(right + 1) +
                                            ", expected " + std::to_string(right)))
      << res.summary();
}

TEST(Verifier, CatchesABadRankCount) {
  Schedule s;
  s.nprocs = 0;
  const auto res = verify_aapc_schedule(s);
  EXPECT_FALSE(res.ok);
  EXPECT_TRUE(any_problem_contains(res, "nprocs")) << res.summary();
  // An empty schedule for P = 2 misses all four messages.
  Schedule empty{"empty", 2, 1, {}};
  const auto res2 = verify_aapc_schedule(empty);
  EXPECT_FALSE(res2.ok);
  EXPECT_EQ(res2.problems.size(), 4u) << res2.summary();
}

TEST(Verifier, CapsTheProblemList) {
  Schedule empty{"empty", 20, 1, {}};  // 400 missing messages
  const auto res = verify_aapc_schedule(empty);
  EXPECT_FALSE(res.ok);
  EXPECT_GT(res.problems.size(), 0u);
  EXPECT_LE(res.problems.size(), 64u);
}

// ---------------------------------------------------------------------------------------
// Schedules that do not apply throw.

TEST(ScheduleErrors, PairwiseNeedsAPowerOfTwo) {
  for (int p : {3, 5, 6, 7, 12, 100}) {
    const std::string direct = error_of([&] { detail::pairwise_schedule(p); });
    EXPECT_TRUE(contains(direct, "power")) << "P = " << p << ": '" << direct << "'";
    EXPECT_TRUE(contains(direct, "P = " + std::to_string(p))) << direct;
    const std::string via = error_of([&] { alltoall_schedule(AlltoallAlgo::Pairwise, p); });
    EXPECT_TRUE(contains(via, "power")) << "P = " << p << ": '" << via << "'";
  }
  EXPECT_THROW(alltoall_schedule(AlltoallAlgo::Pairwise, 6), Error);
  EXPECT_NO_THROW(detail::pairwise_schedule(1));
  EXPECT_NO_THROW(detail::pairwise_schedule(8));
}

TEST(ScheduleErrors, FactorGroupedNeedsAnEvenP) {
  for (int p : {1, 3, 5, 9, 39}) {
    const std::string msg = error_of([&] { alltoall_schedule(AlltoallAlgo::FactorGrouped, p); });
    EXPECT_FALSE(msg.empty()) << "P = " << p << " did not throw";
    EXPECT_TRUE(contains(msg, "even")) << msg;
    EXPECT_THROW(detail::factor_grouped_schedule(p), Error);
  }
}

TEST(ScheduleErrors, NonScheduleAlgorithmsAndBadSizesThrow) {
  for (AlltoallAlgo a : {AlltoallAlgo::Auto, AlltoallAlgo::Native, AlltoallAlgo::Bruck}) {
    const std::string msg = error_of([&] { alltoall_schedule(a, 4); });
    EXPECT_TRUE(contains(msg, std::string(alltoall_algo_name(a)))) << "'" << msg << "'";
  }
  for (int p : {0, -3}) {
    const std::string msg = error_of([&] { alltoall_schedule(AlltoallAlgo::Factor, p); });
    EXPECT_TRUE(contains(msg, "positive")) << "'" << msg << "'";
  }
}

}  // namespace
}  // namespace libcomm
