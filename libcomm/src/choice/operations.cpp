// The operations of libcomm by name (libcomm/operations.hpp): the one list of them, read
// off each operation's registry.
#include "libcomm/operations.hpp"

#include <string>

#include "../allgather/allgather_internal.hpp"
#include "../alltoall/alltoall_internal.hpp"
#include "../alltoallv/alltoallv_internal.hpp"
#include "driver.hpp"
#include "libcomm/error.hpp"
#include "libcomm/settings.hpp"
#include "../reduce_scatter/reduce_scatter_internal.hpp"

namespace libcomm {

namespace {

template <class Op>
std::string_view runs_at(std::string_view algo, int p);

template <>
std::string_view runs_at<detail::AlltoallOp>(std::string_view algo, int p) {
  return alltoall_algo_name(choose_alltoall(alltoall_algo_from_name(algo), 8, p).algo);
}
template <>
std::string_view runs_at<detail::AlltoallvOp>(std::string_view algo, int p) {
  return alltoallv_algo_name(choose_alltoallv(alltoallv_algo_from_name(algo), p, AlltoallvOptions{}).algo);
}
template <>
std::string_view runs_at<detail::AllgatherOp>(std::string_view algo, int p) {
  return allgather_algo_name(choose_allgather(allgather_algo_from_name(algo), p).algo);
}
template <>
std::string_view runs_at<detail::ReduceScatterOp>(std::string_view algo, int p) {
  return reduce_scatter_algo_name(choose_reduce_scatter(reduce_scatter_algo_from_name(algo), p).algo);
}

template <class Op>
OperationAlgorithms listed() {
  OperationAlgorithms o;
  o.op = Op::name;
  o.what = Op::what;
  o.runs_at = runs_at<Op>;
  for (const auto& e : Op::algorithms()) {
    o.names.push_back(e.name);
    o.summaries.push_back(e.summary);
    const bool has_fallback = e.fallback != Op::Algo::Auto;
    o.applicability.push_back({e.name, e.applies, has_fallback ? detail::name_of<Op>(e.fallback) : std::string_view(),
                               e.fallback_why, e.node_map});
  }
  return o;
}

}  // namespace

const std::vector<OperationAlgorithms>& operations() {
  static const std::vector<OperationAlgorithms> all = {
      listed<detail::AlltoallOp>(), listed<detail::AlltoallvOp>(), listed<detail::AllgatherOp>(),
      listed<detail::ReduceScatterOp>()};
  return all;
}

const OperationAlgorithms& operation_named(std::string_view op) {
  std::string valid;
  for (const auto& o : operations()) {
    if (o.op == op) return o;
    valid += (valid.empty() ? "" : ", ") + std::string(o.op);
  }
  throw Error("unknown operation '" + std::string(op) + "' (valid: " + valid + ")");
}

std::string_view algorithm_of(std::string_view op, std::string_view name) {
  const OperationAlgorithms& o = operation_named(op);
  std::string valid;
  for (std::string_view n : o.names) {
    if (n == name) return n;
    valid += (valid.empty() ? "" : ", ") + std::string(n);
  }
  throw Error("unknown " + std::string(o.what) + " algorithm '" + std::string(name) + "' (valid: " + valid + ")");
}

namespace {

template <class Op>
std::vector<Prediction> predictions(const typename Op::Shape& s) {
  std::vector<Prediction> out;
  for (const detail::Candidate& c : detail::Driver<Op>::question(s, nullptr).candidates) out.push_back({c.name, c.predicted});
  return out;
}

}  // namespace

std::vector<Prediction> predict(std::string_view op, const Comm& comm, std::size_t bytes, double mean_bytes) {
  if (op == detail::AlltoallOp::name) {
    static const AlltoallOptions o;
    return predictions<detail::AlltoallOp>(detail::AlltoallOp::shape({nullptr, nullptr, bytes}, comm, o));
  }
  if (op == detail::AllgatherOp::name) {
    static const AllgatherOptions o;
    return predictions<detail::AllgatherOp>(detail::AllgatherOp::shape({nullptr, bytes, nullptr, {}, bytes}, comm, o));
  }
  if (op == detail::ReduceScatterOp::name) {
    static const ReduceScatterOptions o;
    const std::vector<std::size_t> counts(static_cast<std::size_t>(comm.size()), bytes);
    auto s = detail::ReduceScatterOp::shape({nullptr, nullptr, counts, ElemType::Double, ReduceOp::Sum}, comm, o);
    s.problem.clear();
    return predictions<detail::ReduceScatterOp>(s);
  }
  static const AlltoallvOptions o;
  operation_named(op);  // (an unknown name is an Error)
  return predictions<detail::AlltoallvOp>(
      detail::AlltoallvOp::shape(comm.size(), comm.nodes(), {bytes, mean_bytes < 0 ? static_cast<double>(bytes) : mean_bytes}, o));
}

// Reads the environment's settings again (libcomm/settings.hpp), so that what a call runs
// never depends on when the program changed a variable afterwards.
void reload_environment() { reload_settings(); }

}  // namespace libcomm
