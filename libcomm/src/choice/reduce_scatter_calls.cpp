// The public calls of the all-to-all reduction (libcomm/reduce_scatter.hpp): each is a call of the one
// driver (driver.hpp) on the operation its folder defines.
#include "../reduce_scatter/reduce_scatter_internal.hpp"
#include "driver.hpp"

namespace libcomm {

using Driver = detail::Driver<detail::ReduceScatterOp>;
using detail::ReduceScatterOp;

const std::vector<ReduceScatterAlgoInfo>& reduce_scatter_algorithms() {
  return detail::algorithm_infos<ReduceScatterOp>();
}
std::string_view reduce_scatter_algo_name(ReduceScatterAlgo a) { return detail::name_of<ReduceScatterOp>(a); }
ReduceScatterAlgo reduce_scatter_algo_from_name(std::string_view name) {
  return detail::algorithm_named<ReduceScatterOp>(name);
}
ReduceScatterAlgo reduce_scatter_algo_from_env(ReduceScatterAlgo fallback) {
  return detail::algorithm_from_env<ReduceScatterOp>(fallback);
}

ReduceScatterChoice choose_reduce_scatter(ReduceScatterAlgo requested, int p, const ReduceScatterOptions& opts) {
  require(p > 0, "choose_reduce_scatter: P must be positive, got " + std::to_string(p));
  const NodeMap flat = NodeMap::one_rank_per_node(p);
  const std::vector<std::size_t> none(static_cast<std::size_t>(p), 0);
  const auto s = ReduceScatterOp::shape(none, ElemType::Double, ReduceOp::Sum, flat, opts);
  return Driver::choice_without_comm(requested, s, opts.allow_fallback);
}

ReduceScatterChoice choose_reduce_scatter(ReduceScatterAlgo requested, std::size_t block_bytes, const Comm& comm,
                                          const ReduceScatterOptions& opts) {
  const std::vector<std::size_t> counts(static_cast<std::size_t>(comm.size()), block_bytes);
  const ReduceScatterOp::Args a{nullptr, nullptr, counts, ElemType::Int, ReduceOp::Sum};
  ReduceScatterOp::Shape s = ReduceScatterOp::shape(a, comm, opts);
  s.problem.clear();  // (a size question: any block size may be asked about)
  return Driver::choose(requested, s, comm);
}

StepProgram reduce_scatter_program(ReduceScatterAlgo algo, std::span<const std::size_t> counts, ElemType type,
                                   ReduceOp op, int rank, const ReduceScatterOptions& opts) {
  require(!counts.empty() && rank >= 0 && rank < static_cast<int>(counts.size()),
          "reduce_scatter_program: rank " + std::to_string(rank) + " of P = " + std::to_string(counts.size()) +
              " does not exist");
  const std::size_t es = elem_size(type);
  for (std::size_t r = 0; r < counts.size(); ++r)
    require(counts[r] % es == 0, [&] {
      return "reduce_scatter: rank " + std::to_string(rank) + ": counts[" + std::to_string(r) + "] = " +
             std::to_string(counts[r]) + " bytes is not a whole number of " + std::string(elem_type_name(type)) +
             " elements (" + std::to_string(es) + " bytes each)";
    });
  const NodeMap flat = NodeMap::one_rank_per_node(static_cast<int>(counts.size()));
  const auto s = ReduceScatterOp::shape(counts, type, op, flat, opts);
  return Driver::program_for(algo, s, rank, opts.allow_fallback);
}

ReduceScatterChoice reduce_scatter(const void* send, void* recv, std::span<const std::size_t> counts, ElemType type,
                                   ReduceOp op, const Comm& comm, ReduceScatterAlgo algo,
                                   const ReduceScatterOptions& opts) {
  return Driver::blocking({send, recv, counts, type, op}, comm, algo, opts);
}

Plan plan_reduce_scatter(const Comm& comm, std::span<const std::size_t> counts, ElemType type, ReduceOp op,
                         ReduceScatterAlgo algo, const ReduceScatterOptions& opts) {
  return Driver::persistent({nullptr, nullptr, counts, type, op}, comm, algo, opts);
}

Request ireduce_scatter(const void* send, void* recv, std::span<const std::size_t> counts, ElemType type,
                        ReduceOp op, const Comm& comm, ReduceScatterAlgo algo, const ReduceScatterOptions& opts) {
  return Driver::nonblocking({send, recv, counts, type, op}, comm, algo, opts);
}

}  // namespace libcomm
