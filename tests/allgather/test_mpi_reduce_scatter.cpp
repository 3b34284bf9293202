// libcomm::reduce_scatter under MPI (paper 004 all-to-all reduction): every algorithm,
// sum / max / min over double, float, complex double and int, equal, unequal and zero
// block sizes, compared with MPI_Reduce_scatter called directly. The inputs are small
// integers (exact in every type), so any summation order gives the same bits and the
// comparison is exact. d_cycles refuses P not a power of two on every rank.
#include <mpi.h>

#include <complex>
#include <string>
#include <vector>

#include "libcomm/reduce_scatter.hpp"
#include "mpi_test.hpp"

namespace {

using libcomm::ElemType;
using libcomm::NodeOrder;
using libcomm::ReduceOp;
using libcomm::ReduceScatterAlgo;
using libcomm::ReduceScatterOptions;
using mpitest::MpiTest;
using mpitest::MpiTestWithParam;

struct Variant {
  std::string name;
  ReduceScatterAlgo algo;
  NodeOrder order = NodeOrder::Binary;
  bool needs_pow2 = false;
};

std::vector<Variant> variants() {
  return {{"native", ReduceScatterAlgo::Native},
          {"auto", ReduceScatterAlgo::Auto},
          {"ring_binary", ReduceScatterAlgo::Ring},
          {"ring_gray", ReduceScatterAlgo::Ring, NodeOrder::Gray, true},
          {"d_cycles", ReduceScatterAlgo::DCycles, NodeOrder::Binary, true},
          {"reduce_spread", ReduceScatterAlgo::ReduceSpread}};
}

bool pow2(int p) { return p > 0 && (p & (p - 1)) == 0; }

std::vector<std::size_t> counts_for(const std::string& pattern, int p) {
  std::vector<std::size_t> c(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    if (pattern == "equal_1") c[ur] = 1;
    else if (pattern == "equal_3") c[ur] = 3;  // d elements per block for d = 3
    else if (pattern == "equal_257") c[ur] = 257;
    else if (pattern == "zero") c[ur] = 0;
    else if (pattern == "unequal") c[ur] = (ur * 5 + 2) % 9;  // 2, 7, 3, 8, 4, 0, 5, 1, 6
    else if (pattern == "one_nonzero") c[ur] = r == 0 ? 11 : 0;
  }
  if (pattern == "cm200") c = libcomm::cube::consecutive_counts(static_cast<std::size_t>(7 * p + 5), p);
  return c;
}

const std::vector<std::string> kPatterns = {"equal_1", "equal_3", "equal_257", "zero", "unequal", "one_nonzero",
                                            "cm200"};

MPI_Datatype mpi_type(ElemType t) {
  switch (t) {
    case ElemType::Double: return MPI_DOUBLE;
    case ElemType::Float: return MPI_FLOAT;
    case ElemType::ComplexDouble: return MPI_C_DOUBLE_COMPLEX;
    case ElemType::Int: return MPI_INT;
  }
  return MPI_BYTE;
}
MPI_Op mpi_op(ReduceOp op) { return op == ReduceOp::Sum ? MPI_SUM : op == ReduceOp::Max ? MPI_MAX : MPI_MIN; }

// Small integer k-th value of rank r (with sign changes so max and min are not trivial).
int value(int r, std::size_t k) {
  const int v = static_cast<int>((static_cast<std::size_t>(r) * 37 + k * 11) % 97);
  return ((r + static_cast<int>(k)) % 3 == 0) ? -v : v;
}

template <class T>
void run_typed(const Variant& v, const std::string& pattern, ReduceOp op) {
  const auto& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  const auto counts = counts_for(pattern, p);
  std::size_t total = 0;
  for (auto c : counts) total += c;
  std::vector<T> send(total);
  for (std::size_t k = 0; k < total; ++k) {
    if constexpr (std::is_same_v<T, std::complex<double>>) send[k] = T(value(me, k), value(me + 1, k));
    else send[k] = static_cast<T>(value(me, k));
  }
  const auto send_copy = send;
  const std::size_t mine = counts[static_cast<std::size_t>(me)];
  std::vector<T> recv(mine + 1, T(12345)), reference(mine + 1, T(12345));
  ReduceScatterOptions opts;
  opts.order = v.order;
  opts.allow_fallback = false;  // d_cycles refuses P not a power of two
  const ElemType et = libcomm::elem_type_of<T>();
  const std::string what = v.name + ", " + pattern + ", " + std::string(libcomm::elem_type_name(et)) + " " +
                           std::string(libcomm::reduce_op_name(op)) + ", P = " + std::to_string(p);
  const auto outcome = mpitest::run_catching([&] {
    const auto ran = libcomm::reduce_scatter<T>(send, recv, counts, op, comm, v.algo, opts);
    if (v.algo != ReduceScatterAlgo::Auto) {
      EXPECT_EQ(ran, libcomm::choose_reduce_scatter(v.algo, p, opts).algo) << what;
    }
  });
  if (v.needs_pow2 && !pow2(p)) {
    EXPECT_TRUE(outcome.threw) << what << ": ran on P not a power of two";
    EXPECT_NE(outcome.message.find("power-of-two"), std::string::npos) << outcome.message;
    EXPECT_NE(outcome.message.find("P = " + std::to_string(p)), std::string::npos) << outcome.message;
    EXPECT_TRUE(mpitest::all_ranks(outcome.threw)) << what;
    return;
  }
  ASSERT_FALSE(outcome.threw) << what << ": " << outcome.message;
  std::vector<int> icounts(counts.begin(), counts.end());
  ASSERT_EQ(MPI_Reduce_scatter(send.data(), reference.data(), icounts.data(), mpi_type(et), mpi_op(op),
                               MPI_COMM_WORLD),
            MPI_SUCCESS);
  // Independently computed expectation.
  std::size_t displ = 0;
  for (int r = 0; r < me; ++r) displ += counts[static_cast<std::size_t>(r)];
  for (std::size_t k = 0; k < mine; ++k) {
    T want{};
    for (int r = 0; r < p; ++r) {
      T x;
      if constexpr (std::is_same_v<T, std::complex<double>>) x = T(value(r, displ + k), value(r + 1, displ + k));
      else x = static_cast<T>(value(r, displ + k));
      if constexpr (std::is_same_v<T, std::complex<double>>) want = r == 0 ? x : want + x;
      else want = r == 0 ? x : op == ReduceOp::Sum ? want + x : op == ReduceOp::Max ? std::max(want, x) : std::min(want, x);
    }
    ASSERT_EQ(recv[k], want) << what << ": rank " << me << " element " << k;
  }
  EXPECT_EQ(recv, reference) << what << ": differs from MPI_Reduce_scatter";
  EXPECT_EQ(recv[mine], T(12345)) << what << ": wrote beyond counts[rank]";
  EXPECT_EQ(send, send_copy) << what << ": send buffer modified";
}

class ReduceScatterVariant : public MpiTestWithParam<std::tuple<int, std::string>> {};

TEST_P(ReduceScatterVariant, AllTypesAndOpsMatchMpiReduceScatter) {
  const auto [vi, pattern] = GetParam();
  const Variant v = variants()[static_cast<std::size_t>(vi)];
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
    run_typed<double>(v, pattern, op);
    run_typed<float>(v, pattern, op);
    run_typed<int>(v, pattern, op);
  }
  run_typed<std::complex<double>>(v, pattern, ReduceOp::Sum);
}

INSTANTIATE_TEST_SUITE_P(ReduceScatter, ReduceScatterVariant,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(variants().size())),
                                            ::testing::ValuesIn(kPatterns)),
                         [](const auto& info) {
                           return variants()[static_cast<std::size_t>(std::get<0>(info.param))].name + "_" +
                                  std::get<1>(info.param);
                         });

TEST_F(MpiTest, ReduceScatterBlockWithAuto) {
  const auto& comm = mpitest::world();
  const int p = comm.size(), me = comm.rank();
  const std::size_t n = 10;
  std::vector<double> send(n * static_cast<std::size_t>(p)), recv(n);
  for (std::size_t k = 0; k < send.size(); ++k) send[k] = static_cast<double>(k + static_cast<std::size_t>(me));
  const auto ran = libcomm::reduce_scatter_block<double>(send, recv, ReduceOp::Sum, comm);
  EXPECT_NE(ran, ReduceScatterAlgo::Auto) << ran.reason();
  for (std::size_t k = 0; k < n; ++k) {
    const double idx = static_cast<double>(static_cast<std::size_t>(me) * n + k);
    EXPECT_EQ(recv[k], p * idx + p * (p - 1) / 2.0);
  }
}

TEST_F(MpiTest, ComplexMaxIsRefusedEverywhere) {
  const auto& comm = mpitest::world();
  const int p = comm.size();
  std::vector<std::complex<double>> send(static_cast<std::size_t>(p)), recv(1);
  const auto o = mpitest::run_catching(
      [&] { libcomm::reduce_scatter_block<std::complex<double>>(send, recv, ReduceOp::Max, comm); });
  EXPECT_TRUE(mpitest::all_ranks(o.threw));
  EXPECT_NE(o.message.find("complex"), std::string::npos) << o.message;
}

TEST_F(MpiTest, NamesRoundTrip) {
  for (const auto& info : libcomm::reduce_scatter_algorithms())
    EXPECT_EQ(libcomm::reduce_scatter_algo_from_name(info.name), info.algo);
  const auto o = mpitest::run_catching([] { libcomm::reduce_scatter_algo_from_name("tree"); });
  EXPECT_TRUE(o.threw);
  EXPECT_NE(o.message.find("reduce_spread"), std::string::npos) << o.message;
  EXPECT_EQ(libcomm::reduce_op_from_name("max"), ReduceOp::Max);
  EXPECT_EQ(libcomm::elem_type_from_name("complex"), ElemType::ComplexDouble);
  EXPECT_TRUE(mpitest::run_catching([] { libcomm::reduce_op_from_name("prod"); }).threw);
}

}  // namespace
