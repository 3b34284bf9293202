// An algorithm is the unit of libcomm: one descriptor, defined in the algorithm's own file,
// says what it is (name, summary, paper section), where it applies and what runs instead,
// what it costs and how it runs. An operation's registry is the list of its descriptors, in
// the order of its public enum; everything else reads the registry: names both ways, the
// environment override, the fallbacks (docs/fallbacks.md is printed from them), the model
// policy's candidates, the plans. docs/architecture.md, "Adding an algorithm".
//
// An operation (alltoall/alltoall_internal.hpp is the model) derives from OperationBase
// (operation.hpp), which names it (Algo, Options, setting: its LIBCOMM_<OP>, name, what) and gives
// the defaults (Extra: nothing; sizes_differ: a fixed text), and supplies what really
// differs: Args (the buffers and sizes of one call), Shape (what choices and plans depend
// on, derived from ShapeBase, with `opts`), algorithms(), shape(args, comm, opts),
// options(shape) (the options decisions and plans depend on), and for the collective
// argument check argument_check, modes_differ and check_agreement (check mode). The
// Operation concept (choice/driver.hpp) checks it. What only some operations need is in
// OpHooks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/choice.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/cost_params.hpp"
#include "libcomm/error.hpp"
#include "libcomm/program.hpp"
#include "libcomm/settings.hpp"

namespace libcomm::detail {

struct PlanState;

enum class Form : std::uint8_t { Blocking, Nonblocking, Persistent };

// What every operation's shape holds; set by Op::shape (alltoallv: its decision figures
// once the ranks have agreed on them).
struct ShapeBase {
  int p = 1;
  const NodeMap* nodes = nullptr;
  std::size_t largest = 0, total = 0;  // bytes: the largest block, all blocks
  bool equal = true;                   // every block is `largest` bytes
  std::span<const std::size_t> sizes;  // when not equal: what a plan is made for (its key holds their hash)
  std::uint64_t key_bytes = 0;         // what a decision is remembered under (a size; alltoallv: its site)
  std::uint64_t decision_bytes = 0;    // the size the policies decide on
  double spread = 1.0;                 // alltoallv: longest / mean message
  bool topology = false;               // a switch tree is attached (alltoall)
  bool skip_when_empty = true;         // total 0: this rank has nothing to do (alltoallv: it may route others')
  std::uint64_t plan_variant = 0;      // what else a kept plan depends on (alltoallv: native beyond int counts)
  std::string problem;                 // what makes the call invalid on this rank ("" when nothing)
  bool one_node_shared() const { return p > 1 && nodes->num_nodes() == 1; }
  // Blocks of these sizes (allgatherv, reduce_scatter): largest, total, equal, and the
  // sizes kept when they differ; decisions go by the largest.
  void set_blocks(std::span<const std::size_t> counts) {
    largest = total = 0;
    equal = true;
    for (std::size_t n : counts) {
      equal = equal && n == counts[0];
      largest = std::max(largest, n);
      total += n;
    }
    sizes = equal ? std::span<const std::size_t>() : counts;
    key_bytes = decision_bytes = largest;
  }
  // Every block's size: the kept sizes, or P times the largest.
  std::vector<std::size_t> block_sizes() const {
    return equal ? std::vector<std::size_t>(static_cast<std::size_t>(p), largest)
                 : std::vector<std::size_t>(sizes.begin(), sizes.end());
  }
};

// The node layout cost formulas see (libcomm/cost_params.hpp).
inline Layout layout_of(const ShapeBase& s) { return Layout::of(*s.nodes); }

// One plan to make: the choice, the call's shape, the communicator and the form.
template <class Op>
struct PlanCall {
  const Choice<typename Op::Algo>& choice;
  const typename Op::Shape& shape;
  const Comm& comm;
  Form form;
  bool own_scratch() const { return form != Form::Blocking; }
};

template <class Op>
struct Algorithm {
  using Algo = typename Op::Algo;
  using Shape = typename Op::Shape;
  Algo algo;
  std::string_view name;     // command line, environment, tuning tables
  std::string_view summary;  // one line for --list and docs
  std::string_view paper;    // what it implements: "paper 002, s. 2.4"; empty for native and auto
  // Why it cannot run on `shape`, or "" when it can (nullptr: it runs on any). Reads only
  // what every rank shares (P, the node map, the sizes, the options).
  std::string (*unfit)(const Shape& shape) = nullptr;
  std::string_view applies = {};  // where it runs, in words, when unfit is set
  Algo fallback = Algo::Auto;     // what runs where it cannot (Auto: nothing, the call is refused)
  std::string_view fallback_why = {};
  // Predicted seconds of one call (docs/algorithms.md, "Cost formulas"); nullptr: Auto never
  // picks it.
  double (*cost)(const Shape& shape, const CostParams& params) = nullptr;
  // How it runs, one of: rank `rank`'s step program on the shape (the executor runs it), or a
  // plan of its own (the MPI library's collective, programs on sub-communicators).
  StepProgram (*program)(const Shape& shape, int rank) = nullptr;
  std::shared_ptr<PlanState> (*plan)(const PlanCall<Op>& call) = nullptr;
  // A blocking run beside the executor (the MPI library's blocking collective).
  void (*run)(const typename Op::Args& args, const Shape& shape, const Comm& comm) = nullptr;
  // Moves data through the node's shared-memory window where the ranks share a node (the
  // candidates online always tries there, beside native); its plan is made collectively.
  bool node_memory = false;
  bool node_map = false;  // works on the node map, not on P alone
  typename Op::Extra extra = {};
};

// What only some operations have (each defaults to nothing): hooks_of<Op> below.
template <class Op>
struct OpHooks {
  using Shape = typename Op::Shape;
  using OpChoice = Choice<typename Op::Algo>;
  bool per_site = false;  // decided per call site and agreed size class, not per call's size
  void (*agree)(Shape&, const Comm&) = nullptr;  // statistics every rank must share before deciding (collective)
  std::optional<OpChoice> (*unmeasured_default)(const Shape&) = nullptr;  // auto where it can neither measure nor agree
  std::optional<OpChoice> (*nothing_to_exchange)(const Shape&) = nullptr;  // the agreed figures leave nothing to do
  void (*after_check)(Shape&, std::uint64_t extra) = nullptr;  // what the argument check learned (OR over ranks)
  void (*on_run)(const typename Op::Args&, const Shape&, const Comm&, typename Op::Algo ran) = nullptr;  // every run (statistics)
};
template <class Op>
inline constexpr OpHooks<Op> hooks_of{};

template <class Op>
const Algorithm<Op>& entry_of(typename Op::Algo a) {
  const auto table = Op::algorithms();
  const auto k = static_cast<std::size_t>(a);
  if (k < table.size() && table[k].algo == a) return table[k];
  throw Error(std::string(Op::name) + ": internal error: algorithm " + std::to_string(k) + " is not registered");
}

template <class Op>
std::string_view name_of(typename Op::Algo a) {
  return entry_of<Op>(a).name;
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

// The algorithm the operation's variable names in the environment now, or `fallback` when
// it is unset; an unknown name throws, naming the variable.
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

// The public AlgoInfo list (algorithm, name, summary, paper) of the registry.
template <class Op>
const std::vector<AlgoInfo<typename Op::Algo>>& algorithm_infos() {
  static const std::vector<AlgoInfo<typename Op::Algo>> infos = [] {
    std::vector<AlgoInfo<typename Op::Algo>> v;
    for (const auto& e : Op::algorithms()) v.push_back({e.algo, e.name, e.summary, e.paper});
    return v;
  }();
  return infos;
}

// An operation's registry from its descriptors, in enum order, checked once.
template <class Op>
std::span<const Algorithm<Op>> registry(std::initializer_list<const Algorithm<Op>*> entries) {
  static const std::vector<Algorithm<Op>> all = [&] {
    std::vector<Algorithm<Op>> v;
    for (const Algorithm<Op>* e : entries) {
      if (static_cast<std::size_t>(e->algo) != v.size())
        throw Error(std::string(Op::name) + ": internal error: " + std::string(e->name) + " is out of enum order");
      v.push_back(*e);
    }
    return v;
  }();
  return all;
}

}  // namespace libcomm::detail
