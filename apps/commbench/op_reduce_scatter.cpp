// commbench --op reduce_scatter: all-to-all reduction (libcomm/reduce_scatter.hpp, paper
// 004). Block = bytes of the result each rank receives (block / element size elements;
// the mean with --block-layout unequal). The inputs are small integers, exact in every
// element type, so every algorithm must reproduce the independently computed sums (and
// native's result) bit for bit, whatever its combining order.
#include <algorithm>
#include <complex>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "apps/common.hpp"
#include "cube_options.hpp"
#include "libcomm/reduce_scatter.hpp"
#include "operation.hpp"

namespace commbench {
namespace {

using libcomm::ElemType;
using libcomm::ReduceOp;
using libcomm::ReduceScatterAlgo;

std::string g_type = "double", g_reduce = "sum";  // --type, --reduce

// The k-th input element of rank r: a small integer with sign changes.
int input_value(int r, std::size_t k) {
  const int v = static_cast<int>((static_cast<std::size_t>(r) * 37 + k * 11) % 97);
  return (static_cast<std::size_t>(r) + k) % 3 == 0 ? -v : v;
}

template <class T>
T as(int re, int im) {
  if constexpr (std::is_same_v<T, std::complex<double>>) return T(re, im);
  else return static_cast<T>(re);
}

template <class T>
void fill_typed(std::byte* out, int rank, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    const T v = as<T>(input_value(rank, k), input_value(rank + 1, k));
    std::memcpy(out + k * sizeof(T), &v, sizeof(T));
  }
}

// The expected result elements [first, first + n) of the whole vector.
template <class T>
void expect_typed(std::byte* out, std::size_t first, std::size_t n, int p, ReduceOp op) {
  for (std::size_t k = 0; k < n; ++k) {
    T acc{};
    for (int r = 0; r < p; ++r) {
      const T x = as<T>(input_value(r, first + k), input_value(r + 1, first + k));
      if (r == 0) acc = x;
      else if constexpr (std::is_same_v<T, std::complex<double>>) acc += x;
      else acc = op == ReduceOp::Sum ? acc + x : op == ReduceOp::Max ? std::max(acc, x) : std::min(acc, x);
    }
    std::memcpy(out + k * sizeof(T), &acc, sizeof(T));
  }
}

class ReduceScatterOp : public Operation {
 public:
  ReduceScatterOp(const libcomm::Comm& comm, const Settings& s) : Operation("reduce_scatter"), comm_(comm) {
    opts_.allow_fallback = !s.no_fallback;
    opts_.order = libcomm::node_order_from_name(cube_options().order);
    type_ = libcomm::elem_type_from_name(g_type);
    op_ = libcomm::reduce_op_from_name(g_reduce);
    libcomm::require(type_ != ElemType::ComplexDouble || op_ == ReduceOp::Sum,
                     "--reduce: " + g_reduce + " is not defined for --type complex (use sum)");
    es_ = libcomm::elem_size(type_);
  }

  void check_applicable(const std::string& algo, std::size_t) const override {
    libcomm::choose_reduce_scatter(libcomm::reduce_scatter_algo_from_name(parse_timed(algo).algo), comm_.size(), opts_);
  }

  void prepare(std::size_t block) override {
    const int p = comm_.size(), me = comm_.rank();
    counts_ = layout_counts(cube_options().block_layout, block / es_, p);
    std::size_t total = 0, first = 0;
    for (int r = 0; r < p; ++r) {
      if (r == me) first = total;
      total += counts_[static_cast<std::size_t>(r)];
    }
    mine_ = counts_[static_cast<std::size_t>(me)];
    send_.assign(total * es_, std::byte{0});
    recv_.assign(mine_ * es_, std::byte{0});
    expected_.assign(mine_ * es_, std::byte{0});
    switch (type_) {
      case ElemType::Double:
        fill_typed<double>(send_.data(), me, total);
        expect_typed<double>(expected_.data(), first, mine_, p, op_);
        break;
      case ElemType::Float:
        fill_typed<float>(send_.data(), me, total);
        expect_typed<float>(expected_.data(), first, mine_, p, op_);
        break;
      case ElemType::ComplexDouble:
        fill_typed<std::complex<double>>(send_.data(), me, total);
        expect_typed<std::complex<double>>(expected_.data(), first, mine_, p, op_);
        break;
      case ElemType::Int:
        fill_typed<int>(send_.data(), me, total);
        expect_typed<int>(expected_.data(), first, mine_, p, op_);
        break;
    }
    for (auto& c : counts_) c *= es_;  // libcomm counts bytes
    native_checked_ = false;  // (by the first check: a simulated payload checks nothing)
  }

  void reset() override { std::memset(recv_.data(), 0xA5, recv_.size()); }

  std::string run(const std::string& algo, bool checked) override {
    libcomm::ReduceScatterOptions o = opts_;
    o.check_args = checked;
    const auto c = libcomm::reduce_scatter(send_.data(), recv_.data(), counts_, type_, op_, comm_,
                                           libcomm::reduce_scatter_algo_from_name(parse_timed(algo).algo), o);
    return ran(c, libcomm::reduce_scatter_algo_name(c));
  }

  std::string note(const std::string& algo, std::size_t) const override {
    return choice_note(algo, largest(counts_), libcomm::reduce_scatter_algo_from_name,
                       [this](libcomm::ReduceScatterAlgo a, std::size_t b) {
                         return libcomm::choose_reduce_scatter(a, b, comm_, opts_);  // b in bytes
                       });
  }

  bool in_all(std::string_view name) const override { return in_all_on(name, comm_); }

  long long check(const std::string& algo) override {
    if (!native_checked_) {  // native against the expected sums, once per size
      std::vector<std::byte> reference(mine_ * es_, std::byte{0x5A});
      libcomm::reduce_scatter(send_.data(), reference.data(), counts_, type_, op_, comm_, ReduceScatterAlgo::Native,
                              opts_);
      native_ok_ = reference == expected_;
      native_checked_ = true;
    }
    const bool ok = recv_ == expected_ && native_ok_;
    if (!ok)
      std::cerr << "commbench: rank " << comm_.rank() << ": reduce_scatter " << algo << " ("
                << g_type << " " << g_reduce << ", " << mine_ << " elements) "
                << (native_ok_ ? "differs from the expected sums" : "native differs from the expected sums")
                << "\n";
    return ok ? 0 : 1;
  }

 private:
  const libcomm::Comm& comm_;
  libcomm::ReduceScatterOptions opts_;
  ElemType type_ = ElemType::Double;
  ReduceOp op_ = ReduceOp::Sum;
  std::size_t es_ = 8, mine_ = 0;
  bool native_ok_ = true, native_checked_ = false;
  std::vector<std::size_t> counts_;
  std::vector<std::byte> send_, recv_, expected_;
};

const Registrar registrar(
    "reduce_scatter",
    {"all-to-all reduction (reduce_scatter): block j of the element-wise reduction over all ranks "
     "ends on rank j (paper 004)",
     [](CLI::App& app) {
       app.add_option("--type", g_type, "reduce_scatter: element type")
           ->check(CLI::IsMember({"double", "float", "complex", "int"}))
           ->capture_default_str();
       app.add_option("--reduce", g_reduce, "reduce_scatter: reduction operation")
           ->check(CLI::IsMember({"sum", "max", "min"}))
           ->capture_default_str();
     },
     make_operation<ReduceScatterOp>});

}  // namespace
}  // namespace commbench
