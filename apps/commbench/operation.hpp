// commbench's plug-in interface: one Operation per collective (--op NAME), each in its own
// op_<name>.cpp that registers itself. main.cpp owns the command line, the timing loop
// and the table; an Operation owns its buffers, its algorithms and its validation.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "libcomm/auto_policy.hpp"
#include "libcomm/comm.hpp"

namespace commbench {

// An algorithm as commbench times it: NAME[:POLICY][/MODE]: MODE is one of alltoallv's
// modes, and auto may name a policy of its own, auto:online, auto:model or auto:table
// (libcomm/auto_policy.hpp; plain auto follows --auto / LIBCOMM_AUTO). Throws Error for an
// unknown policy.
struct TimedName {
  std::string algo;  // the algorithm's registry name
  std::string mode;  // after '/', or empty
  std::string policy;  // after ':', or empty
};
TimedName parse_timed(const std::string& text);

// Sets the Auto policy a timed name asks for (auto:model, ...) for one call, and puts the
// previous one back.
class PolicyScope {
 public:
  explicit PolicyScope(const std::string& timed);
  ~PolicyScope();
  PolicyScope(const PolicyScope&) = delete;
  PolicyScope& operator=(const PolicyScope&) = delete;

 private:
  bool set_ = false;
  libcomm::AutoPolicy previous_ = libcomm::AutoPolicy::Online;
};

// Options every operation understands.
struct Settings {
  std::string algo_list = "all";  // --algo
  bool no_fallback = false;       // --no-fallback
};

class Operation {
 public:
  explicit Operation(std::string op) : operation_(std::move(op)) {}
  virtual ~Operation() = default;
  // The algorithms to time for an --algo list ("all" = every one of the operation's
  // registry, auto included, also inside a list; auto:POLICY names auto under one policy;
  // each name once), reference first (its
  // time is the denominator of every ratio). Throws libcomm::Error naming the bad name and
  // listing the valid ones.
  std::vector<std::string> select(const std::string& list) const;
  // Throws libcomm::Error, on every rank alike, if `algo` cannot run here (before timing).
  virtual void check_applicable(const std::string& algo, std::size_t block) const = 0;
  // Allocates and fills the buffers for one size. `block` is the bytes per destination
  // block (for irregular operations: the mean).
  virtual void prepare(std::size_t block) = 0;
  // Poisons the receive buffers before a run (not timed), so a run that leaves a block
  // unwritten cannot pass on the previous run's data.
  virtual void reset() = 0;
  // Runs `algo` once on the prepared buffers (collective). `checked` is true for the
  // first run of each algorithm and size (arguments are checked then). Returns the name
  // of what actually ran (differs for auto and fallbacks). The caller sets the policy an
  // auto:POLICY name asks for (PolicyScope), outside the timed call.
  virtual std::string run(const std::string& algo, bool checked) = 0;
  // Whether the last run was auto's online policy still measuring (its warm-up).
  bool measuring() const { return measuring_; }
  // Why `algo` ran as it did (auto's choice, a fallback); "" when it ran as asked.
  virtual std::string note(const std::string& algo, std::size_t block) const = 0;
  // Wrong blocks on this rank after the last run (first problem described on stderr).
  virtual long long check(const std::string& algo) = 0;
  // A cost-model prediction of one run in microseconds (commbench --predict), or < 0 when
  // the operation has no model or none was asked for.
  // Irregular operations: longest / mean message of the last prepared counts (what auto
  // decides on besides the size); 1 for regular ones.
  virtual double count_spread() const { return 1.0; }
  // The prepared size's mean message in bytes (alltoallv's pattern); -1: every block alike.
  virtual double mean_message() const { return -1; }
  virtual double predict_us(const std::string& /*algo*/, std::size_t /*block*/) const { return -1; }

 protected:
  // The names one --algo entry times (alltoallv: one per mode); `name` is a checked entry.
  virtual std::vector<std::string> expand(const std::string& name) const { return {name}; }
  // Whether "all" includes the algorithm (alltoallv: mesh only on a perfect square).
  virtual bool in_all(std::string_view) const { return true; }
  // Why `algo` ran as another algorithm ("" when it ran as asked): the library's choice at
  // `block` (auto's, or a fallback) under the policy the timed name asks for. from_name maps
  // the registry name to the operation's enumeration; choose(a, block) is the library's choice.
  template <class FromName, class Choose>
  static std::string choice_note(const std::string& algo, std::size_t block, FromName from_name, Choose choose) {
    const PolicyScope policy(algo);
    const auto a = from_name(parse_timed(algo).algo);
    const auto c = choose(a, block);
    return c.algo == a ? "" : c.reason();
  }
  // For in_all: a one-node algorithm (shared_window) is in "all" only where the ranks share
  // one node (elsewhere it would run as its fallback).
  static bool in_all_on(std::string_view name, const libcomm::Comm& comm) {
    return name != "shared_window" || comm.nodes().num_nodes() == 1;
  }
  // The largest of a layout's blocks (what the library decides on for unequal blocks).
  static std::size_t largest(const std::vector<std::size_t>& counts) {
    return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  }
  template <class Choice>
  std::string ran(const Choice& c, std::string_view name) {
    measuring_ = c.measuring();
    return std::string(name);
  }
  std::string operation_;  // its name in libcomm/operations.hpp
  bool measuring_ = false;
};

struct OperationEntry {
  std::string summary;
  // Adds the operation's own options to the command line (in a group of its name).
  std::function<void(CLI::App&)> add_options;
  std::function<std::unique_ptr<Operation>(const libcomm::Comm&, const Settings&)> make;
};

// --list: every operation with its algorithms (the registries' names and summaries).
void list_operations(std::ostream& os);

std::map<std::string, OperationEntry>& registry();

// OperationEntry::make of an operation constructed from (comm, settings).
template <class Op>
std::unique_ptr<Operation> make_operation(const libcomm::Comm& comm, const Settings& s) {
  return std::make_unique<Op>(comm, s);
}

// A static Registrar in op_<name>.cpp adds the operation at start-up.
struct Registrar {
  Registrar(const std::string& name, OperationEntry entry) { registry()[name] = std::move(entry); }
};

// Reference first: moves `reference` to the front of `names`, adding it if missing.
std::vector<std::string> reference_first(std::vector<std::string> names, const std::string& reference);

}  // namespace commbench
