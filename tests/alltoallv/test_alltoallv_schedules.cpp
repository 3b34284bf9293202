// Schedule-level tests of the irregular all-to-all (paper 001), no MPI: the stage schedules
// as data, and the bounds of section 3.2.4 checked on the routing the MPI path runs
// (simulate_alltoallv) for every P from 1 to 200.
//
// Rounding: the paper assumes every M_ij divisible by P. With M_ij = P q_ij the bounds are
// checked exactly as printed (with C^ = ceil(sqrt P)). For arbitrary counts each message
// is replaced by M'_ij = P ceil(M_ij / P) when computing L_max (call it L'_max): the
// counter scans of R- and C-Distribute put at most R ceil(M_ij / P) elements of one message
// in a bucket, and every later quantity is a sum of such terms, so every bound of Lemma 3,
// Theorem 1 and Table 4 holds with L'_max in place of L_max (docs/algorithms/irregular.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/traffic.hpp"
#include "libcomm/alltoallv.hpp"

namespace {

using libcomm::AlltoallvAlgo;
using libcomm::AlltoallvStats;

int ceil_sqrt(int p) {
  int c = 1;
  while (c * c < p) ++c;
  return c;
}
int floor_sqrt(int p) {
  int f = 1;
  while ((f + 1) * (f + 1) <= p) ++f;
  return f;
}
bool is_square(int p) {
  return floor_sqrt(p) * floor_sqrt(p) == p;
}

struct Loads {
  std::int64_t lmax = 0, mmax = 0;
};
// L_max and M_max of a count matrix; `rounded`: of M'_ij = P ceil(M_ij / P).
Loads loads(const std::vector<std::int64_t>& m, int p, bool rounded) {
  Loads l;
  std::vector<std::int64_t> in(p, 0);
  for (int i = 0; i < p; ++i) {
    std::int64_t out = 0;
    for (int j = 0; j < p; ++j) {
      std::int64_t v = m[i * p + j];
      if (rounded) v = (v + p - 1) / p * p;
      out += v;
      in[j] += v;
      l.mmax = std::max(l.mmax, v);
    }
    l.lmax = std::max(l.lmax, out);
  }
  for (auto v : in) l.lmax = std::max(l.lmax, v);
  return l;
}

// Count matrices used for every P: divisible ones (bounds as printed) and arbitrary ones
// (rounded bounds).
struct Case {
  std::string name;
  std::vector<std::int64_t> m;
  bool divisible;
};
std::vector<Case> cases_for(int p) {
  std::vector<Case> cs;
  auto scaled = [&](kernels::TrafficSpec s, const std::string& name) {
    auto m = kernels::traffic_matrix(s, p);
    for (auto& v : m) v *= p;
    cs.push_back({name + " x P", std::move(m), true});
  };
  scaled({kernels::TrafficPattern::Pattern1, 6, 0, 11}, "pattern1");
  scaled({kernels::TrafficPattern::Pattern2, 5, 0, 12}, "pattern2");
  scaled({kernels::TrafficPattern::ManyZero, 3, 0, 13, 0.97}, "many_zero");
  cs.push_back({"pattern1 Mmax 1024",
                kernels::traffic_matrix({kernels::TrafficPattern::Pattern1, 1024, 1, 21}, p),
                false});
  // Denser matrices cost O(P^3) to simulate: every P up to 64, then every fifth.
  if (p <= 64 || p % 5 == 0) {
    cs.push_back({"pattern2 Mmax 200",
                  kernels::traffic_matrix({kernels::TrafficPattern::Pattern2, 200, 2, 22}, p),
                  false});
    cs.push_back({"skewed sparse",
                  kernels::traffic_matrix({kernels::TrafficPattern::ManyZero, 40, 0, 23, 0.9}, p),
                  false});
  }
  if (p <= 40)
    cs.push_back({"skewed",
                  kernels::traffic_matrix({kernels::TrafficPattern::Skewed, 40, 0, 23}, p), false});
  cs.push_back(
      {"all_zero", kernels::traffic_matrix({kernels::TrafficPattern::AllZero, 0}, p), true});
  return cs;
}

// Every P from 1 to 200 (primes, squares, C-divisible and ceil*floor - 1 cases included).
// P = 1 .. 200; a sanitized build (LIBCOMM_SANITIZED_BUILD) checks P = 1 .. 40 and every
// tenth P up to 200, so that each sweep stays under 10 s there.
std::vector<int> simulated_ps() {
  std::vector<int> ps;
  for (int p = 1; p <= 200; ++p) {
#ifdef LIBCOMM_SANITIZED_BUILD
    if (p > 40 && p % 10 != 0) continue;
#endif
    ps.push_back(p);
  }
  return ps;
}

// ---------------------------------------------------------------------------------------
// Layout (3.2, 3.2.2 A).

TEST(FourStageGeometry, LayoutForEveryPUpTo10000) {
  for (int p = 1; p <= 10000; ++p) {
    const auto g = libcomm::four_stage_geometry(p);
    const int ce = ceil_sqrt(p), fl = floor_sqrt(p);
    ASSERT_EQ(g.nprocs, p);
    // Rearranged exactly when P = ceil(sqrt P) floor(sqrt P) - 1 and the ceil layout fails.
    const int r_ceil = p % ce, rows_ceil = (p + ce - 1) / ce;
    const bool ceil_fails = r_ceil > rows_ceil - 1;
    EXPECT_EQ(g.rearranged, ceil_fails) << p;
    if (ceil_fails) {
      EXPECT_EQ(p, ce * fl - 1) << "the paper: only P = ceil*floor - 1 fails; P = " << p;
    }
    EXPECT_EQ(g.columns, g.rearranged ? fl : ce) << p;
    EXPECT_EQ(g.rows, (p + g.columns - 1) / g.columns) << p;
    EXPECT_EQ(g.incomplete, p % g.columns) << p;
    EXPECT_LE(g.incomplete, g.rows - 1)
        << "enough complete rows for the pseudo-node messages, P = " << p;
    if (g.incomplete > 0) {
      EXPECT_EQ((g.rows - 1) * g.columns + g.incomplete, p);
    }
  }
  // Examples from the paper: P = 18 (Fig. 8): C = 5, R = 4, r = 3; P = 61 (Fig. 9): 8, 8, 5.
  auto g18 = libcomm::four_stage_geometry(18);
  EXPECT_EQ(g18.columns, 5);
  EXPECT_EQ(g18.rows, 4);
  EXPECT_EQ(g18.incomplete, 3);
  auto g61 = libcomm::four_stage_geometry(61);
  EXPECT_EQ(g61.columns, 8);
  EXPECT_EQ(g61.rows, 8);
  EXPECT_EQ(g61.incomplete, 5);
  // P = 11 = 4 * 3 - 1: C = 3, R = 4, r = 2.
  auto g11 = libcomm::four_stage_geometry(11);
  EXPECT_TRUE(g11.rearranged);
  EXPECT_EQ(g11.columns, 3);
  EXPECT_EQ(g11.incomplete, 2);
}

TEST(FourStageGeometry, PseudoNodeMessagesGoToRowOfTheSendersColumn) {
  // Fig. 8, P = 18 (C = 5, r = 3): node 16 (incomplete row, column 1) sends what falls on
  // pseudo-node columns 3 and 4 to nodes (1, 3) = 8 and (1, 4) = 9.
  const auto g = libcomm::four_stage_geometry(18);
  EXPECT_EQ(g.row_partner(16, 3), 8);
  EXPECT_EQ(g.row_partner(16, 4), 9);
  EXPECT_EQ(g.row_partner(16, 2), 17);  // a real node of its row
  EXPECT_EQ(g.row_partner(7, 4), 9);    // complete rows: the row peer
}

// ---------------------------------------------------------------------------------------
// Schedules.

// Fig. 10: the revised schedule of row 2 (nodes 16..23) and node 58 for P = 61.
TEST(FourStageSchedule, RevisedRScheduleMatchesFig10) {
  const auto s = libcomm::alltoallv_schedule(AlltoallvAlgo::FourStage, 61);
  ASSERT_EQ(s.stages.size(), 4u);
  const auto& st = s.stages[0];
  ASSERT_EQ(st.rounds.size(), 9u);  // C + 1 steps
  const int X = -1;                 // stall
  const int senders[9] = {16, 17, 18, 19, 20, 21, 22, 23, 58};
  const int fig10[9][9] = {
      {17, 18, 19, 20, 21, 22, 23, 16, 59}, {18, 19, 20, 21, 22, 23, 16, 17, 60},
      {19, 20, X, 22, 23, 16, 17, 18, 21},  {20, X, 21, 23, 16, 17, 18, 19, 22},
      {X, 21, 22, 16, 17, 18, 19, 20, 23},  {21, 22, 23, 17, 18, 19, 20, X, 56},
      {22, 23, 16, 18, 19, 20, X, 21, 57},  {23, 16, 17, 19, 20, X, 21, 22, 58},
      {16, 17, 18, X, X, 21, 22, 23, X}};
  for (int step = 0; step < 9; ++step)
    for (int k = 0; k < 9; ++k) {
      int dst = X;
      for (const auto& t : st.rounds[step].transfers)
        if (t.src == senders[k]) dst = t.dst;
      EXPECT_EQ(dst, fig10[step][k]) << "step " << step + 1 << " sender " << senders[k];
    }
}

TEST(StagedSchedules, ConflictFreeAndStepCountsOfTable3ForEveryP) {
  for (int p : simulated_ps()) {
    const int ce = ceil_sqrt(p);
    const auto direct = libcomm::alltoallv_schedule(AlltoallvAlgo::Direct, p);
    EXPECT_EQ(direct.total_steps(), p);  // Table 3: P start-ups
    EXPECT_TRUE(libcomm::verify_staged_schedule(direct)) << p;
    const auto two = libcomm::alltoallv_schedule(AlltoallvAlgo::TwoStage, p);
    EXPECT_EQ(two.total_steps(), 2 * p);  // 2P
    EXPECT_TRUE(libcomm::verify_staged_schedule(two)) << p;
    if (is_square(p)) {
      const auto mesh = libcomm::alltoallv_schedule(AlltoallvAlgo::Mesh, p);
      EXPECT_EQ(mesh.total_steps(), 2 * floor_sqrt(p));  // 2 sqrt(P)
      EXPECT_TRUE(libcomm::verify_staged_schedule(mesh)) << p;
    } else {
      try {
        libcomm::alltoallv_schedule(AlltoallvAlgo::Mesh, p);
        ADD_FAILURE() << "mesh accepted P = " << p;
      } catch (const libcomm::Error& e) {
        EXPECT_NE(std::string(e.what()).find("perfect-square"), std::string::npos) << e.what();
      }
    }
    const auto four = libcomm::alltoallv_schedule(AlltoallvAlgo::FourStage, p);
    const auto g = libcomm::four_stage_geometry(p);
    const auto v = libcomm::verify_staged_schedule(four);
    EXPECT_TRUE(v) << "P = " << p << ": " << v.summary();
    // Stages I and III: C + 1 steps with an incomplete row (3.2.2 B), else C; II and IV: R.
    const int row_steps = g.incomplete > 0 ? g.columns + 1 : g.columns;
    EXPECT_EQ(four.stages[0].rounds.size(), static_cast<std::size_t>(row_steps)) << p;
    EXPECT_EQ(four.stages[2].rounds.size(), static_cast<std::size_t>(row_steps)) << p;
    EXPECT_EQ(four.stages[1].rounds.size(), static_cast<std::size_t>(g.rows)) << p;
    EXPECT_EQ(four.total_steps(), 2 * row_steps + 2 * g.rows) << p;
    EXPECT_LE(four.total_steps(), 4 * ce + 2) << "Table 3: 4 ceil(sqrt P) + 2 start-ups, P = " << p;
    // Every rank exchanges with every row peer (and pseudo-node partner) exactly once:
    // r (C - r) additional messages per row stage (3.2.2 A).
    std::size_t transfers = 0;
    for (const auto& rd : four.stages[0].rounds) transfers += rd.transfers.size();
    const std::size_t complete = static_cast<std::size_t>(g.incomplete > 0 ? g.rows - 1 : g.rows);
    EXPECT_EQ(transfers,
              complete * g.columns * g.columns + static_cast<std::size_t>(g.incomplete) * g.columns)
        << p;
  }
}

// ---------------------------------------------------------------------------------------
// Bounds on the simulated routing.

void check_four_stage(int p, const Case& c, std::size_t esize) {
  SCOPED_TRACE("four_stage P = " + std::to_string(p) + ", " + c.name);
  const auto stats = libcomm::simulate_alltoallv(AlltoallvAlgo::FourStage, p, c.m, esize);
  const auto g = libcomm::four_stage_geometry(p);
  const std::int64_t ce = ceil_sqrt(p);
  const auto L = loads(c.m, p, !c.divisible);  // L_max, or L'_max when rounding
  const std::int64_t lbytes = L.lmax * static_cast<std::int64_t>(esize);
  std::int64_t total_startups = 0;
  for (int me = 0; me < p; ++me) {
    const auto& s = stats[me];
    ASSERT_EQ(s.stages.size(), 4u);
    const bool complete = g.complete_column(g.column_of(me));
    for (int st = 0; st < 4; ++st) {
      const auto& x = s.stages[st];
      const bool row_stage = st % 2 == 0;
      // Lemma 1.
      const int max_msgs = complete ? ce : (row_stage ? ce + 1 : ce - 1);
      EXPECT_LE(x.messages_received, max_msgs) << "Lemma 1, rank " << me << " stage " << st + 1;
      // Lemma 3 (Table 2), in bytes: longest * P <= factor * L_max.
      const std::int64_t factor = complete ? ce : (row_stage ? ce - 1 : ce + 1);
      EXPECT_LE(static_cast<std::int64_t>(x.longest_message) * p, factor * lbytes)
          << "Lemma 3, rank " << me << " stage " << st + 1 << " longest " << x.longest_message
          << " L " << L.lmax;
    }
    // Theorem 1: sBUF + rBUF <= 2 ceil(sqrt P)^2 L_max / P; Table 4: each <= C^2 L_max / P.
    EXPECT_LE(static_cast<std::int64_t>(s.peak_buffer_bytes()) * p, 2 * ce * ce * lbytes)
        << "Theorem 1, rank " << me;
    EXPECT_LE(static_cast<std::int64_t>(s.max_send_buffer()) * p, ce * ce * lbytes)
        << "Table 4 sBUF, rank " << me;
    EXPECT_LE(static_cast<std::int64_t>(s.max_recv_buffer()) * p, ce * ce * lbytes)
        << "Table 4 rBUF, rank " << me;
    // Theorem 2 / Table 3: traffic per node <= 4 (C + 1) C L_max / P.
    std::int64_t traffic = 0;
    for (const auto& x : s.stages) traffic += static_cast<std::int64_t>(x.received_bytes);
    EXPECT_LE(traffic * p, 4 * (ce + 1) * ce * lbytes) << "Theorem 2 traffic, rank " << me;
    EXPECT_LE(s.startups(), 4 * ce + 2) << "Table 3 start-ups, rank " << me;
    total_startups = std::max<std::int64_t>(total_startups, s.startups());
  }
}

TEST(FourStageBounds, Lemma1Lemma3Theorem1Table3Table4ForPUpTo200) {
  for (int p : simulated_ps())
    for (const auto& c : cases_for(p))
      check_four_stage(p, c, c.name.find("skewed") != std::string::npos ? 22 : 48);
}

TEST(FourStageBounds, Lemma2EvenDistributionAfterStageTwoWhenDivisible) {
  // Lemma 2: with M_ij divisible by P, after Stage II every node holds exactly
  // sum_i M_ij / P elements for node j; stage III messages then carry exact sums, so the
  // stage III traffic of every node equals sum_j sum_i M_ij / P.
  for (int p : {3, 5, 7, 10, 11, 18, 23, 61}) {
    auto m = kernels::traffic_matrix({kernels::TrafficPattern::Skewed, 9, 0, 5}, p);
    for (auto& v : m) v *= p;
    const auto stats = libcomm::simulate_alltoallv(AlltoallvAlgo::FourStage, p, m, 1);
    std::int64_t total = 0;
    for (auto v : m) total += v;
    for (int me = 0; me < p; ++me) {
      // What a node sends in stage III (self included) is what it held after stage II.
      EXPECT_EQ(static_cast<std::int64_t>(stats[me].stages[2].send_buffer_bytes) * p, total)
          << "P " << p << " rank " << me;
    }
  }
}

TEST(OtherAlgorithms, Table4BuffersAndTable3Traffic) {
  for (int p : simulated_ps()) {
    for (const auto& c : cases_for(p)) {
      const auto L = loads(c.m, p, false);
      const auto Lr = loads(c.m, p, true);
      // A1: sBUF <= M_max P, rBUF <= L_max, traffic L_max, P - 1 start-ups.
      for (const auto& s : libcomm::simulate_alltoallv(AlltoallvAlgo::Direct, p, c.m, 1)) {
        EXPECT_LE(static_cast<std::int64_t>(s.max_send_buffer()), L.mmax * p);
        EXPECT_LE(static_cast<std::int64_t>(s.max_recv_buffer()), L.lmax);
        EXPECT_EQ(s.startups(), p - 1);
      }
      // A2: sBUF, rBUF <= L_max (L'_max when rounding), traffic <= 2 L_max, 2(P-1) start-ups.
      for (const auto& s : libcomm::simulate_alltoallv(AlltoallvAlgo::TwoStage, p, c.m, 1)) {
        const std::int64_t lim = c.divisible ? L.lmax : Lr.lmax;
        EXPECT_LE(static_cast<std::int64_t>(s.max_send_buffer()), lim)
            << "A2 P " << p << " " << c.name;
        EXPECT_LE(static_cast<std::int64_t>(s.max_recv_buffer()), lim)
            << "A2 P " << p << " " << c.name;
        std::int64_t traffic = 0;
        for (const auto& x : s.stages) traffic += static_cast<std::int64_t>(x.received_bytes);
        EXPECT_LE(traffic, 2 * lim);
        EXPECT_EQ(s.startups(), 2 * (p - 1));
      }
      // A3: sBUF, rBUF <= M_max P, 2 (sqrt P - 1) start-ups.
      if (is_square(p))
        for (const auto& s : libcomm::simulate_alltoallv(AlltoallvAlgo::Mesh, p, c.m, 1)) {
          EXPECT_LE(static_cast<std::int64_t>(s.max_send_buffer()), L.mmax * p);
          EXPECT_LE(static_cast<std::int64_t>(s.max_recv_buffer()), L.mmax * p);
          EXPECT_EQ(s.startups(), 2 * (floor_sqrt(p) - 1));
        }
    }
  }
}

TEST(Simulation, DetectsCountsOfTheWrongShape) {
  std::vector<std::int64_t> m(8, 1);
  EXPECT_THROW(libcomm::simulate_alltoallv(AlltoallvAlgo::FourStage, 3, m), libcomm::Error);
}

TEST(AlltoallvNames, RoundTripAndErrorsListValidNames) {
  for (const auto& info : libcomm::alltoallv_algorithms())
    EXPECT_EQ(libcomm::alltoallv_algo_from_name(info.name), info.algo);
  try {
    libcomm::alltoallv_algo_from_name("a4");
    FAIL();
  } catch (const libcomm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("four_stage"), std::string::npos);
  }
  EXPECT_EQ(libcomm::alltoallv_mode_from_name("n2"), libcomm::AlltoallvMode::NonblockingDual);
  EXPECT_EQ(libcomm::alltoallv_mode_from_name("blocking"), libcomm::AlltoallvMode::Blocking);
  EXPECT_THROW(libcomm::alltoallv_mode_from_name("n3"), libcomm::Error);
  // Auto without counts prices start-ups alone (the model on 1-byte messages, paper 001's
  // Table 3): direct's P - 1 on few ranks, mesh's 2 (sqrt P - 1) on perfect squares,
  // four_stage's 4 ceil(sqrt P) + 2 on many others.
  EXPECT_EQ(libcomm::choose_alltoallv(AlltoallvAlgo::Auto, 8), AlltoallvAlgo::Direct);
  EXPECT_EQ(libcomm::choose_alltoallv(AlltoallvAlgo::Auto, 9), AlltoallvAlgo::Mesh);
  EXPECT_EQ(libcomm::choose_alltoallv(AlltoallvAlgo::Auto, 60), AlltoallvAlgo::FourStage);
  EXPECT_EQ(libcomm::choose_alltoallv(AlltoallvAlgo::Auto, 256), AlltoallvAlgo::Mesh);
}

}  // namespace
