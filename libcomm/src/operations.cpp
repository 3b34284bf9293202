// The operations of libcomm by name (libcomm/operations.hpp): the one list of them, read
// off each operation's registry.
#include "libcomm/operations.hpp"

#include <string>

#include "allgather/allgather_internal.hpp"
#include "alltoall/alltoall_internal.hpp"
#include "alltoallv/alltoallv_internal.hpp"
#include "libcomm/error.hpp"
#include "reduce_scatter/reduce_scatter_internal.hpp"

namespace libcomm {

namespace {

template <class Op>
OperationAlgorithms listed() {
  OperationAlgorithms o;
  o.op = Op::name;
  o.what = Op::what;
  for (const auto& e : Op::algorithms()) {
    o.names.push_back(e.name);
    o.summaries.push_back(e.summary);
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

}  // namespace libcomm
