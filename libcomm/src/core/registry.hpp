// An operation's algorithms as data: one registry per operation (`Op::algorithms()`, in
// enum order), which everything else reads: names both ways, the environment override, the
// applicability rules and their fallbacks (docs/fallbacks.md is printed from them), the
// cost formulas the model policy compares, and the public AlgoInfo lists.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/choice.hpp"
#include "libcomm/cost_params.hpp"
#include "libcomm/error.hpp"
#include "libcomm/settings.hpp"

namespace libcomm::detail {

template <class Op>
struct AlgorithmEntry {
  using Algo = typename Op::Algo;
  using Shape = typename Op::Shape;
  Algo algo;
  std::string_view name;     // command line, environment, tuning tables
  std::string_view summary;  // one line for --help and docs
  // Why the algorithm cannot run on `shape`, or "" when it can (nullptr: runs on any). It
  // reads only what every rank shares (P, the node map, the sizes, the options), so every
  // rank decides alike.
  std::string (*unfit)(const Shape& shape) = nullptr;
  std::string_view applies = {};  // where it runs, in words (docs/fallbacks.md), when unfit is set
  // What runs instead when it cannot (Algo::Auto: nothing; the call is refused).
  Algo fallback = Algo::Auto;
  std::string_view fallback_why = {};  // why that one (docs/fallbacks.md)
  // Predicted seconds of one call (docs/algorithms.md, "Cost formulas"); nullptr: Auto
  // never considers the algorithm (Auto itself).
  double (*cost)(const Shape& shape, const CostParams& params) = nullptr;
  // Moves data through the node's shared-memory window where the ranks share a node (the
  // candidates online always tries there, beside native).
  bool node_memory = false;
  // Works on the node map, not on P alone (the hierarchical and one-node algorithms).
  bool node_map = false;
};

template <class Op>
const AlgorithmEntry<Op>& entry_of(typename Op::Algo a) {
  const auto table = Op::algorithms();
  const auto k = static_cast<std::size_t>(a);
  if (k < table.size() && table[k].algo == a) return table[k];
  for (const auto& e : table)
    if (e.algo == a) return e;
  throw Error(std::string(Op::name) + ": internal error: algorithm " + std::to_string(k) + " is not registered");
}

template <class Op>
std::string_view name_of(typename Op::Algo a) {
  const auto table = Op::algorithms();
  const auto k = static_cast<std::size_t>(a);
  return k < table.size() && table[k].algo == a ? table[k].name : entry_of<Op>(a).name;
}

// Throws Error "unknown <what> algorithm 'NAME' (valid: ...)".
template <class Op>
typename Op::Algo algorithm_named(std::string_view name) {
  std::string valid;
  for (const auto& e : Op::algorithms()) {
    if (e.name == name) return e.algo;
    valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  }
  throw Error("unknown " + std::string(Op::what) + " algorithm '" + std::string(name) + "' (valid: " + valid + ")");
}

// The algorithm named by the operation's variable (Op::setting), or `fallback` when it is
// unset; an unknown name throws, naming the variable.
template <class Op>
typename Op::Algo algorithm_from_env(typename Op::Algo fallback) {
  const std::string v = setting_in_environment(Op::setting);
  if (v.empty()) return fallback;
  try {
    return algorithm_named<Op>(v);
  } catch (const Error& e) {
    throw Error(std::string(setting_info(Op::setting).name) + ": " + e.what());
  }
}

// The public AlgoInfo list (algorithm, name, summary) of the registry.
template <class Op>
const std::vector<AlgoInfo<typename Op::Algo>>& algorithm_infos() {
  static const std::vector<AlgoInfo<typename Op::Algo>> infos = [] {
    std::vector<AlgoInfo<typename Op::Algo>> v;
    for (const auto& e : Op::algorithms()) v.push_back({e.algo, e.name, e.summary});
    return v;
  }();
  return infos;
}

}  // namespace libcomm::detail
