// Dispatcher of the all-to-all reduction: names, the Auto choice, the local combiner
// (typed functors for sum / max / min over double, float, complex double, int) and the
// collective argument check.
#include <algorithm>
#include <array>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "../core/algorithm_table.hpp"
#include "../core/check.hpp"
#include "../core/mpi_bytes.hpp"
#include "../core/plan_state.hpp"
#include "reduce_scatter_internal.hpp"
#include "libcomm/tuning.hpp"
#include "../tuning/table_choice.hpp"

namespace libcomm {

std::size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::Double: return sizeof(double);
    case ElemType::Float: return sizeof(float);
    case ElemType::ComplexDouble: return sizeof(std::complex<double>);
    case ElemType::Int: return sizeof(int);
  }
  return 1;
}

std::string_view elem_type_name(ElemType t) {
  switch (t) {
    case ElemType::Double: return "double";
    case ElemType::Float: return "float";
    case ElemType::ComplexDouble: return "complex";
    case ElemType::Int: return "int";
  }
  return "?";
}

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
  }
  return "?";
}

ReduceOp reduce_op_from_name(std::string_view name) {
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min})
    if (reduce_op_name(op) == name) return op;
  throw Error("unknown reduction '" + std::string(name) + "' (valid: sum, max, min)");
}

ElemType elem_type_from_name(std::string_view name) {
  for (ElemType t : {ElemType::Double, ElemType::Float, ElemType::ComplexDouble, ElemType::Int})
    if (elem_type_name(t) == name) return t;
  throw Error("unknown element type '" + std::string(name) + "' (valid: double, float, complex, int)");
}

namespace {

template <class T, class F>
void combine(const void* in, void* inout, std::size_t n, F f) {
  // memcpy-free typed loop: the buffers hold whole T (callers guarantee alignment of the
  // element offsets; scratch and user buffers are T-aligned).
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (std::size_t k = 0; k < n; ++k) b[k] = f(a[k], b[k]);
}

template <class T>
void combine_op(const void* in, void* inout, std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: combine<T>(in, inout, n, [](T x, T y) { return x + y; }); return;
    case ReduceOp::Max:
      if constexpr (std::is_same_v<T, std::complex<double>>) break;
      else { combine<T>(in, inout, n, [](T x, T y) { return std::max(x, y); }); return; }
    case ReduceOp::Min:
      if constexpr (std::is_same_v<T, std::complex<double>>) break;
      else { combine<T>(in, inout, n, [](T x, T y) { return std::min(x, y); }); return; }
  }
  throw Error("reduce_scatter: " + std::string(reduce_op_name(op)) +
              " is not defined for complex numbers (no order); use sum");
}

}  // namespace

// Not charged to the simulated clock (libcomm/sim.hpp), unlike the allgather's reordering
// pass: in the cube reductions each combine is a few elements (2 KiB per node at d = 6 is
// under one double per subblock), so its thread-CPU reading would mostly measure the clock
// read, not the work. Charging it was tried: d_cycles fell from 4.49x to 0.72x
// reduce_spread at d = 6, while ring, with a sixth as many combines, stayed near 1x.
void reduce_local(const void* in, void* inout, std::size_t n, ElemType type, ReduceOp op) {
  switch (type) {
    case ElemType::Double: combine_op<double>(in, inout, n, op); return;
    case ElemType::Float: combine_op<float>(in, inout, n, op); return;
    case ElemType::ComplexDouble: combine_op<std::complex<double>>(in, inout, n, op); return;
    case ElemType::Int: combine_op<int>(in, inout, n, op); return;
  }
}

const std::vector<ReduceScatterAlgoInfo>& reduce_scatter_algorithms() {
  static const std::vector<ReduceScatterAlgoInfo> all = {
      {ReduceScatterAlgo::Auto, "auto", "d_cycles when P is a power of two >= 4, else ring"},
      {ReduceScatterAlgo::Native, "native", "the MPI library's MPI_Reduce_scatter (reference)"},
      {ReduceScatterAlgo::Ring, "ring", "single Hamiltonian cycle, P - 1 shift-and-combine steps, --order binary|gray (paper 004, s. 4.1, Fig. 6)"},
      {ReduceScatterAlgo::DCycles, "d_cycles", "d Hamiltonian cycles, reversed broadcast motion, xor translation per block; P = 2^d (s. 4.2.2, Figs. 12-19)"},
      {ReduceScatterAlgo::ReduceSpread, "reduce_spread", "butterfly reduce-and-spread of the whole vector, then subselection (s. 5, Fig. 21), any P"},
  };
  return all;
}

std::string_view reduce_scatter_algo_name(ReduceScatterAlgo a) { return detail::name_in(reduce_scatter_algorithms(), a); }

ReduceScatterAlgo reduce_scatter_algo_from_name(std::string_view name) {
  return detail::algorithm_in(reduce_scatter_algorithms(), name, "reduce_scatter");
}

ReduceScatterAlgo reduce_scatter_algo_from_env(ReduceScatterAlgo fallback) {
  return detail::algorithm_from_env(reduce_scatter_algorithms(), "LIBCOMM_REDUCE_SCATTER", fallback, "reduce_scatter");
}

ReduceScatterChoice choose_reduce_scatter(ReduceScatterAlgo requested, int p,
                                          const ReduceScatterOptions& opts) {
  const auto ps = [p] { return std::to_string(p); };  // only for the reasons that name P
  const bool pow2 = cube::log2_exact(p) >= 0;
  ReduceScatterChoice c = ReduceScatterChoice::requested(requested);
  switch (requested) {
    case ReduceScatterAlgo::Auto:
      if (pow2 && p >= 4) c = {ReduceScatterAlgo::DCycles, "auto: d_cycles, P = " + ps() + " is a power of two"};
      else c = {ReduceScatterAlgo::Ring, "auto: ring (P = " + ps() + (pow2 ? " < 4)" : " is not a power of two)")};
      break;
    case ReduceScatterAlgo::DCycles:
      if (pow2) break;
      require(opts.allow_fallback, "reduce_scatter: d_cycles needs a power-of-two number of ranks "
                                   "(a binary d-cube), P = " + ps() + "; use ring, reduce_spread or auto");
      c = {ReduceScatterAlgo::Ring, "d_cycles needs a power of two, P = " + ps() + ": ran ring instead (allow_fallback)"};
      break;
    default:
      break;
  }
  if (c.algo == ReduceScatterAlgo::Ring && opts.order == NodeOrder::Gray && !pow2)
    throw Error("reduce_scatter: ring with order gray needs a power-of-two number of ranks, P = " + ps());
  return c;
}

ReduceScatterChoice choose_reduce_scatter(ReduceScatterAlgo requested, std::size_t block_bytes,
                                          const Comm& comm, const ReduceScatterOptions& opts) {
  return detail::choose_from_table("reduce_scatter", requested, block_bytes, comm, opts,
                                   reduce_scatter_algo_from_name,
                                   [&](ReduceScatterAlgo a, const ReduceScatterOptions& o) {
                                     return choose_reduce_scatter(a, comm.size(), o);
                                   });
}

namespace detail {

ReduceBlocks::ReduceBlocks(std::span<const std::size_t> count_bytes, ElemType t, ReduceOp o)
    : count(count_bytes.begin(), count_bytes.end()), displ(count_bytes.size()), type(t), op(o), es(elem_size(t)) {
  for (std::size_t r = 0; r < count.size(); ++r) {
    count[r] /= es;  // whole elements: resolve() refused any other count
    displ[r] = total;
    total += count[r];
    max = std::max(max, count[r]);
  }
}

}  // namespace detail

namespace {

// Counts are bytes (the unit of every operation, docs/architecture.md); a reduction needs
// whole elements of its type.
void require_whole_elements(std::span<const std::size_t> counts, ElemType type, int rank) {
  const std::size_t es = elem_size(type);
  for (std::size_t r = 0; r < counts.size(); ++r)
    require(counts[r] % es == 0, [&] {
      return "reduce_scatter: rank " + std::to_string(rank) + ": counts[" + std::to_string(r) + "] = " +
             std::to_string(counts[r]) + " bytes is not a whole number of " + std::string(elem_type_name(type)) +
             " elements (" + std::to_string(es) + " bytes each)";
    });
}

void check_reduce_scatter_args(const void* send, void* recv, std::span<const std::size_t> counts,
                               ElemType type, ReduceOp op, const Comm& comm, ReduceScatterAlgo algo,
                               const ReduceScatterOptions& opts, bool have_buffers = true) {
  const int p = comm.size(), me = comm.rank();
  std::string local;
  std::size_t total = 0;  // bytes
  bool overflow = false;
  const auto limit = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
  for (auto c : counts) {
    if (c > limit - total) overflow = true;
    else total += c;
  }
  if (counts.size() != static_cast<std::size_t>(p)) {
    local = "counts has " + std::to_string(counts.size()) + " entries, P = " + std::to_string(p);
  } else if (overflow) {
    local = "counts add up to more bytes than the address space holds";
  } else if (!have_buffers) {
  } else if (total > 0 && send == nullptr) {
    local = "send buffer is null";
  } else if (counts[static_cast<std::size_t>(me)] > 0 && recv == nullptr) {
    local = "recv buffer is null";
  } else if (counts[static_cast<std::size_t>(me)] > 0) {
    const auto* s = static_cast<const std::byte*>(send);
    const auto* r = static_cast<const std::byte*>(recv);
    const std::size_t rn = counts[static_cast<std::size_t>(me)];
    if (s < r + rn && r < s + total) local = "send and recv buffers overlap";
  }
  if (local.empty() && type == ElemType::ComplexDouble && op != ReduceOp::Sum)
    local = std::string(reduce_op_name(op)) + " is not defined for complex numbers (no order); use sum";
  using u64 = unsigned long long;
  const u64 h = detail::hash_sizes(counts);
  const u64 mode = static_cast<u64>(algo) * 1024 + static_cast<u64>(type) * 64 +
                   static_cast<u64>(op) * 8 + static_cast<u64>(opts.order) * 2 + (opts.allow_fallback ? 1 : 0);
  std::array<u64, 5> v = {local.empty() ? 0ULL : static_cast<u64>(p - me), h, ~h, mode, ~mode};
  detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, v.data(), 5, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                                  comm.internal()),
                    "MPI_Allreduce");
  const std::string where = "reduce_scatter: rank " + std::to_string(me) + ": ";
  if (!local.empty()) throw Error(where + local);
  if (v[0] != 0)
    throw Error(where + "rank " + std::to_string(p - static_cast<int>(v[0])) +
                " reported an invalid argument (see its message)");
  if (v[1] != ~v[2]) throw Error(where + "counts differ across ranks");
  if (v[3] != ~v[4])
    throw Error(where + "ranks asked for different algorithms, element types, operations or options "
                "(this rank: " + std::string(reduce_scatter_algo_name(algo)) + ", " +
                std::string(elem_type_name(type)) + ", " + std::string(reduce_op_name(op)) + ")");
}

// Check mode (libcomm/check.hpp): the same counts, element type and operation everywhere.
void check_reduce_scatter_agreement(std::span<const std::size_t> counts, ElemType type, ReduceOp op,
                                    const Comm& comm) {
  const std::vector<std::uint64_t> vec(counts.begin(), counts.end());
  const detail::SameField fields[] = {
      {"element type", static_cast<std::uint64_t>(type),
       [](std::uint64_t v) { return std::string(elem_type_name(static_cast<ElemType>(v))); }},
      {"operation", static_cast<std::uint64_t>(op),
       [](std::uint64_t v) { return std::string(reduce_op_name(static_cast<ReduceOp>(v))); }}};
  detail::check_same_on_all_ranks(comm, "reduce_scatter", fields, "counts", vec);
}

ReduceScatterChoice resolve(ReduceScatterAlgo algo, std::span<const std::size_t> counts, ElemType type,
                            ReduceOp op, const Comm& comm, const ReduceScatterOptions& opts) {
  require(counts.size() == static_cast<std::size_t>(comm.size()), [&] {
    return "reduce_scatter: rank " + std::to_string(comm.rank()) + ": counts has " + std::to_string(counts.size()) +
           " entries, P = " + std::to_string(comm.size());
  });
  require(type != ElemType::ComplexDouble || op == ReduceOp::Sum, [&] {
    return "reduce_scatter: " + std::string(reduce_op_name(op)) + " is not defined for complex numbers";
  });
  require_whole_elements(counts, type, comm.rank());
  const std::size_t largest = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  // Auto's choice depends on the largest block, the fallback switch and the ring order.
  const DecisionKey key{"reduce_scatter", largest, 1.0,
                        static_cast<std::uint64_t>(opts.order) * 2 + opts.allow_fallback};
  return detail::decided_choice(algo, comm, key,
                                [&] { return choose_reduce_scatter(algo, largest, comm, opts); });
}

// The key of a kept plan: equal counts by their size, unequal ones by their hash (the plan
// kept only when its counts are these).
PlanKey plan_key(ReduceScatterAlgo ran, std::span<const std::size_t> counts, bool equal, ElemType type, ReduceOp op,
                 const ReduceScatterOptions& opts) {
  const std::uint64_t options = (static_cast<std::uint64_t>(type) * 8 + static_cast<std::uint64_t>(op)) * 4 +
                                static_cast<std::uint64_t>(opts.order) * 2 + (equal ? 1 : 0);
  return PlanKey{"reduce_scatter", static_cast<int>(ran), counts.empty() ? 0 : equal ? counts[0] : detail::hash_sizes(counts),
                 options};
}

std::shared_ptr<detail::PlanState> reduce_scatter_state(const ReduceScatterChoice& c, const detail::ReduceBlocks& b,
                                                        const Comm& comm, const ReduceScatterOptions& opts,
                                                        bool own_scratch) {
  return detail::choice_state(
      comm, c.reason(), c.algo == ReduceScatterAlgo::Native, [&] { return detail::native_ireduce_scatter(b, comm.mpi()); },
      [&] { return detail::build_reduce_scatter_program(c.algo, b, comm.rank(), opts); }, own_scratch);
}

}  // namespace

namespace detail {

StepProgram build_reduce_scatter_program(ReduceScatterAlgo a, const ReduceBlocks& b, int rank,
                                         const ReduceScatterOptions& opts) {
  switch (a) {
    case ReduceScatterAlgo::Ring: return ring_reduce_scatter_program(b, rank, opts.order);
    case ReduceScatterAlgo::DCycles: return dcycles_reduce_scatter_program(b, rank);
    case ReduceScatterAlgo::ReduceSpread: return reduce_spread_reduce_scatter_program(b, rank);
    default:
      throw Error("reduce_scatter: '" + std::string(reduce_scatter_algo_name(a)) + "' has no step program");
  }
}

}  // namespace detail

StepProgram reduce_scatter_program(ReduceScatterAlgo algo, std::span<const std::size_t> counts, ElemType type,
                                   ReduceOp op, int rank, const ReduceScatterOptions& opts) {
  require(!counts.empty() && rank >= 0 && rank < static_cast<int>(counts.size()),
          "reduce_scatter_program: rank " + std::to_string(rank) + " of P = " + std::to_string(counts.size()) +
              " does not exist");
  require_whole_elements(counts, type, rank);
  const ReduceScatterChoice c = choose_reduce_scatter(algo, static_cast<int>(counts.size()), opts);
  return detail::build_reduce_scatter_program(c.algo, detail::ReduceBlocks(counts, type, op), rank, opts);
}

ReduceScatterChoice reduce_scatter(const void* send, void* recv, std::span<const std::size_t> counts,
                                   ElemType type, ReduceOp op, const Comm& comm, ReduceScatterAlgo algo,
                                   const ReduceScatterOptions& opts) {
  if (check_mode()) check_reduce_scatter_agreement(counts, type, op, comm);
  if (opts.check_args) check_reduce_scatter_args(send, recv, counts, type, op, comm, algo, opts);
  const ReduceScatterChoice c = resolve(algo, counts, type, op, comm, opts);
  if (c.algo == ReduceScatterAlgo::Native) {
    detail::native_reduce_scatter(static_cast<const std::byte*>(send), static_cast<std::byte*>(recv),
                                  detail::ReduceBlocks(counts, type, op), comm.mpi());
    return c;
  }
  bool equal = true, empty = true;
  for (auto n : counts) {
    equal = equal && n == counts[0];
    empty = empty && n == 0;
  }
  if (empty) return c;
  detail::run_cached(comm, plan_key(c.algo, counts, equal, type, op, opts),
                     equal ? std::span<const std::size_t>() : counts, send, recv,
                     [&] { return reduce_scatter_state(c, detail::ReduceBlocks(counts, type, op), comm, opts, false); });
  return c;
}

Plan plan_reduce_scatter(const Comm& comm, std::span<const std::size_t> counts, ElemType type, ReduceOp op,
                         ReduceScatterAlgo algo, const ReduceScatterOptions& opts) {
  // Collective like MPI_Reduce_scatter_init: the argument check runs once here, without buffers.
  if (check_mode()) check_reduce_scatter_agreement(counts, type, op, comm);
  if (opts.check_args) check_reduce_scatter_args(nullptr, nullptr, counts, type, op, comm, algo, opts, false);
  const ReduceScatterChoice c = resolve(algo, counts, type, op, comm, opts);
  return Plan(reduce_scatter_state(c, detail::ReduceBlocks(counts, type, op), comm, opts, true));
}

Request ireduce_scatter(const void* send, void* recv, std::span<const std::size_t> counts, ElemType type,
                        ReduceOp op, const Comm& comm, ReduceScatterAlgo algo, const ReduceScatterOptions& opts) {
  ReduceScatterOptions o = opts;
  o.check_args = false;  // no blocking collective inside a non-blocking call
  if (check_mode()) check_reduce_scatter_agreement(counts, type, op, comm);
  const ReduceScatterChoice c = resolve(algo, counts, type, op, comm, o);
  const bool equal = std::all_of(counts.begin(), counts.end(), [&](std::size_t n) { return n == counts[0]; });
  PlanKey key = plan_key(c.algo, counts, equal, type, op, o);
  key.options = key.options * 64 + static_cast<std::uint64_t>(algo);  // the kept plan's reason is this request's
  Plan plan(detail::request_plan(comm, key, equal ? std::span<const std::size_t>() : counts, [&] {
    return reduce_scatter_state(c, detail::ReduceBlocks(counts, type, op), comm, o, true);
  }));
  plan.start(send, recv);
  return plan;
}

}  // namespace libcomm
