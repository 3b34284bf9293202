// The four operations by name, with their algorithms (each operation's registry, in
// order): for what works on any operation given as text (tuning tables, commbench, tune).
#pragma once

#include <string_view>
#include <vector>

namespace libcomm {

struct OperationAlgorithms {
  std::string_view op;    // "alltoall", "alltoallv", "allgather", "reduce_scatter"
  std::string_view what;  // in messages: "all-to-all", ...
  std::vector<std::string_view> names, summaries;
};

// alltoall, alltoallv, allgather, reduce_scatter.
const std::vector<OperationAlgorithms>& operations();
// Throws Error "unknown operation 'X' (valid: ...)".
const OperationAlgorithms& operation_named(std::string_view op);
// `name` when it is an algorithm of `op`; Error "unknown <what> algorithm 'NAME' (valid: ...)".
std::string_view algorithm_of(std::string_view op, std::string_view name);

}  // namespace libcomm
