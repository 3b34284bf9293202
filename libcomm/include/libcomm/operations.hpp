// The four operations by name, with their algorithms (each operation's registry, in
// order): for what works on any operation given as text (tuning tables, commbench, tune).
#pragma once

#include <string_view>
#include <vector>

#include "libcomm/comm.hpp"

namespace libcomm {

// What an algorithm needs and what runs where it cannot (each operation's registry; the
// rules themselves decide every call, this is their text, for docs/fallbacks.md).
struct AlgorithmApplicability {
  std::string_view name;
  std::string_view applies;       // "P a power of two"; empty: runs everywhere
  std::string_view fallback;      // the algorithm that runs instead; empty: the call is refused
  std::string_view fallback_why;  // why that one
  bool node_map = false;          // whether it depends on the node map (not on P alone)
};

struct OperationAlgorithms {
  std::string_view op;    // "alltoall", "alltoallv", "allgather", "reduce_scatter"
  std::string_view what;  // in messages: "all-to-all", ...
  std::vector<std::string_view> names, summaries;
  std::vector<AlgorithmApplicability> applicability;  // in registry order
  // What a request for `algo` runs on P ranks, one per node (itself, or its fallback);
  // Error when it is refused.
  std::string_view (*runs_at)(std::string_view algo, int p) = nullptr;
};

// What auto's cost model predicts for every algorithm that applies to a call of `op` on comm
// with blocks of `bytes` (equal blocks; alltoallv: the longest message `bytes`, the mean
// `mean_bytes`, every message `bytes` long when it is negative), in registry order: name and
// seconds (docs/algorithms.md, "Cost formulas"). No communication.
struct Prediction {
  std::string_view algo;
  double seconds = 0;
};
std::vector<Prediction> predict(std::string_view op, const Comm& comm, std::size_t bytes, double mean_bytes = -1);

// alltoall, alltoallv, allgather, reduce_scatter.
const std::vector<OperationAlgorithms>& operations();
// Throws Error "unknown operation 'X' (valid: ...)".
const OperationAlgorithms& operation_named(std::string_view op);
// `name` when it is an algorithm of `op`; Error "unknown <what> algorithm 'NAME' (valid: ...)".
std::string_view algorithm_of(std::string_view op, std::string_view name);

}  // namespace libcomm
