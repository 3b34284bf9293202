// libcomm::allgather(v) under MPI (paper 004 all-to-all broadcast): every algorithm and
// variant, equal, unequal and zero block sizes, checked byte for byte against the
// expected content and against the MPI library's MPI_Allgatherv called directly. The
// d-cube algorithms must refuse P not a power of two on every rank with a clear Error.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "libcomm/allgather.hpp"
#include "mpi_test.hpp"

namespace {

using libcomm::AllgatherAlgo;
using libcomm::AllgatherOptions;
using libcomm::NodeOrder;
using libcomm::Reorder;
using mpitest::MpiTest;
using mpitest::MpiTestWithParam;

// One way of running the all-to-all broadcast.
struct Variant {
  std::string name;
  AllgatherAlgo algo;
  NodeOrder order = NodeOrder::Binary;
  Reorder reorder = Reorder::Direct;
  bool needs_pow2 = false;  // refuses other P
};

std::vector<Variant> variants() {
  return {
      {"native", AllgatherAlgo::Native},
      {"auto", AllgatherAlgo::Auto},
      {"ring_binary_direct", AllgatherAlgo::Ring},
      {"ring_binary_staged", AllgatherAlgo::Ring, NodeOrder::Binary, Reorder::Staged},
      {"ring_gray_direct", AllgatherAlgo::Ring, NodeOrder::Gray, Reorder::Direct, true},
      {"ring_gray_staged", AllgatherAlgo::Ring, NodeOrder::Gray, Reorder::Staged, true},
      {"d_cycles_direct", AllgatherAlgo::DCycles, NodeOrder::Binary, Reorder::Direct, true},
      {"d_cycles_staged", AllgatherAlgo::DCycles, NodeOrder::Binary, Reorder::Staged, true},
      {"d_cycles_im", AllgatherAlgo::DCyclesIndexMotion, NodeOrder::Binary, Reorder::Staged, true},
      {"send_spread", AllgatherAlgo::SendSpread},
      {"butterfly", AllgatherAlgo::Butterfly},
  };
}

bool pow2(int p) { return p > 0 && (p & (p - 1)) == 0; }

// Byte k of rank r's block: distinct across ranks and positions.
std::byte content(int r, std::size_t k) {
  return static_cast<std::byte>((static_cast<std::size_t>(r) * 131u + k * 7u + (k >> 8)) & 0xFFu);
}

// Block-size patterns (bytes per rank) for P ranks.
std::vector<std::size_t> counts_for(const std::string& pattern, int p) {
  std::vector<std::size_t> c(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    if (pattern == "equal_1") c[ur] = 1;
    else if (pattern == "equal_24") c[ur] = 24;  // 3 doubles: d elements for d = 3
    else if (pattern == "equal_1000") c[ur] = 1000;
    else if (pattern == "equal_40000") c[ur] = 40000;
    else if (pattern == "zero") c[ur] = 0;
    else if (pattern == "one_nonzero") c[ur] = r == p - 1 ? 37 : 0;
    else if (pattern == "unequal") c[ur] = (ur * 37 + 11) % 53;  // includes small and odd sizes
    else if (pattern == "unequal_zeros") c[ur] = r % 3 == 1 ? 0 : 100 + 8 * ur;
    else if (pattern == "cm200") c[ur] = 0;  // filled below
  }
  if (pattern == "cm200") {  // the CM-200 consecutive allocation of s. 4.2.4, in doubles
    const auto e = libcomm::cube::consecutive_counts(static_cast<std::size_t>(10 * p + 3), p);
    for (int r = 0; r < p; ++r) c[static_cast<std::size_t>(r)] = e[static_cast<std::size_t>(r)] * 8;
  }
  return c;
}

const std::vector<std::string> kPatterns = {"equal_1",  "equal_24",      "equal_1000", "equal_40000", "zero",
                                            "one_nonzero", "unequal", "unequal_zeros", "cm200"};

class AllgatherVariant : public MpiTestWithParam<std::tuple<int, std::string>> {};

TEST_P(AllgatherVariant, MatchesMpiAllgatherv) {
  const auto [vi, pattern] = GetParam();
  const Variant v = variants()[static_cast<std::size_t>(vi)];
  const auto& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  const auto counts = counts_for(pattern, p);
  std::vector<int> icounts(counts.begin(), counts.end()), displs(static_cast<std::size_t>(p));
  std::size_t total = 0;
  for (int r = 0; r < p; ++r) {
    displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<std::byte> send(counts[static_cast<std::size_t>(me)]);
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = content(me, k);
  const auto send_copy = send;
  std::vector<std::byte> recv(total, std::byte{0xA5}), reference(total, std::byte{0x5A});
  AllgatherOptions opts;
  opts.order = v.order;
  opts.reorder = v.reorder;
  opts.allow_fallback = false;  // d-cube algorithms refuse P not a power of two
  opts.element_bytes = pattern == "cm200" ? 8 : 1;
  std::string what = v.name + ", " + pattern + ", P = " + std::to_string(p);

  const auto outcome = mpitest::run_catching([&] {
    const auto ran = libcomm::allgatherv(send.data(), send.size(), recv.data(), counts, comm, v.algo, opts);
    if (v.algo != AllgatherAlgo::Auto) {
      EXPECT_EQ(ran, libcomm::choose_allgather(v.algo, p, opts).algo) << what;
    }
    what += " (ran " + std::string(libcomm::allgather_algo_name(ran)) + ": " + ran.reason() + ")";
  });
  if (v.needs_pow2 && !pow2(p)) {
    // Refused on every rank, with a message naming the requirement and P.
    EXPECT_TRUE(outcome.threw) << what << ": ran on P not a power of two";
    EXPECT_NE(outcome.message.find("power-of-two"), std::string::npos) << outcome.message;
    EXPECT_NE(outcome.message.find("P = " + std::to_string(p)), std::string::npos) << outcome.message;
    EXPECT_TRUE(mpitest::all_ranks(outcome.threw)) << what << ": not every rank refused";
    return;
  }
  ASSERT_FALSE(outcome.threw) << what << ": " << outcome.message;
  ASSERT_EQ(MPI_Allgatherv(send.data(), icounts[static_cast<std::size_t>(me)], MPI_BYTE, reference.data(),
                           icounts.data(), displs.data(), MPI_BYTE, MPI_COMM_WORLD),
            MPI_SUCCESS);
  // The expected content, independently of MPI.
  int bad = 0;
  for (int r = 0; r < p && bad < 3; ++r)
    for (std::size_t k = 0; k < counts[static_cast<std::size_t>(r)]; ++k)
      if (recv[static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]) + k] != content(r, k)) {
        ADD_FAILURE() << what << ": rank " << me << ", block of rank " << r << " wrong at byte " << k;
        ++bad;
        break;
      }
  EXPECT_EQ(recv, reference) << what << ": differs from MPI_Allgatherv on rank " << me;
  EXPECT_EQ(send, send_copy) << what << ": send buffer modified";
}

INSTANTIATE_TEST_SUITE_P(Allgather, AllgatherVariant,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(variants().size())),
                                            ::testing::ValuesIn(kPatterns)),
                         [](const auto& info) {
                           return variants()[static_cast<std::size_t>(std::get<0>(info.param))].name + "_" +
                                  std::get<1>(info.param);
                         });

// The typed regular form with the Auto choice (whatever its policy runs: the bytes must be right).
TEST_F(MpiTest, TypedAllgatherOfDoubles) {
  const auto& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  for (std::size_t n : {0u, 1u, 2u, 3u, 5u, 64u, 1001u}) {
    std::vector<double> send(n), recv(n * static_cast<std::size_t>(p), -1.0);
    for (std::size_t k = 0; k < n; ++k) send[k] = me * 1e6 + static_cast<double>(k);
    const auto ran = libcomm::allgather<double>(send, recv, comm);
    EXPECT_NE(ran, AllgatherAlgo::Auto) << ran.reason();
    for (int r = 0; r < p; ++r)
      for (std::size_t k = 0; k < n; ++k)
        ASSERT_EQ(recv[static_cast<std::size_t>(r) * n + k], r * 1e6 + static_cast<double>(k))
            << "n = " << n << ", rank " << me << ", block " << r;
  }
}

// allow_fallback turns the refusal into the documented ring fallback.
TEST_F(MpiTest, DCyclesFallbackWhenAllowed) {
  const auto& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  AllgatherOptions opts;
  opts.allow_fallback = true;
  std::vector<int> send(4, me), recv(4 * static_cast<std::size_t>(p), -1);
  const auto ran = libcomm::allgather<int>(send, recv, comm, AllgatherAlgo::DCycles, opts);
  EXPECT_EQ(ran, pow2(p) ? AllgatherAlgo::DCycles : AllgatherAlgo::Ring);
  for (int r = 0; r < p; ++r) EXPECT_EQ(recv[static_cast<std::size_t>(r) * 4 + 3], r);
}

// Bad arguments on one rank: every rank gets an Error (no hang), naming the culprit.
TEST_F(MpiTest, MismatchedCountsAreReportedEverywhere) {
  const auto& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  std::vector<std::size_t> counts(static_cast<std::size_t>(p), 8);
  if (me == p - 1) counts[0] = 9;  // disagrees with the others (for P = 1: send size mismatch)
  std::vector<std::byte> send(8), recv(9 * static_cast<std::size_t>(p));
  const auto o = mpitest::run_catching(
      [&] { libcomm::allgatherv(send.data(), send.size(), recv.data(), counts, comm, AllgatherAlgo::Ring); });
  EXPECT_TRUE(o.threw);
  EXPECT_TRUE(mpitest::all_ranks(o.threw));
  EXPECT_NE(o.message.find("allgather: rank " + std::to_string(me)), std::string::npos) << o.message;
}

TEST_F(MpiTest, NamesRoundTripAndUnknownNamesListTheValidOnes) {
  for (const auto& info : libcomm::allgather_algorithms())
    EXPECT_EQ(libcomm::allgather_algo_from_name(info.name), info.algo);
  const auto o = mpitest::run_catching([] { libcomm::allgather_algo_from_name("hypercube"); });
  EXPECT_TRUE(o.threw);
  EXPECT_NE(o.message.find("d_cycles"), std::string::npos) << o.message;
  EXPECT_EQ(libcomm::node_order_from_name("gray"), NodeOrder::Gray);
  EXPECT_TRUE(mpitest::run_catching([] { libcomm::node_order_from_name("grey"); }).threw);
}

}  // namespace
