// Auto through the tuning table for the operations whose choice is (algorithm, reason) and
// whose options carry allow_fallback (allgather, reduce_scatter): the table's row if its
// algorithm can run here, else the built-in rule with a note saying why. And the decision
// memo every operation's call path goes through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "libcomm/comm.hpp"
#include "libcomm/error.hpp"
#include "libcomm/tuning.hpp"

namespace libcomm::detail {

// `rule(algo, opts)` resolves an algorithm for comm.size() ranks (throws Error when it
// cannot run); `from_name` maps a table entry to the operation's enum.
template <class Algo, class Options, class FromName, class Rule>
auto choose_from_table(const char* op, Algo requested, std::size_t block_bytes, const Comm& comm,
                       const Options& opts, FromName from_name, Rule rule) {
  if (requested != Algo::Auto) return rule(requested, opts);
  const auto pick = tuned_choice(tuning_query(op, comm, block_bytes));
  if (!pick) {
    auto built_in = rule(requested, opts);
    built_in.reason += " (no tuning table row)";
    return built_in;
  }
  // The row may come from another rank count: an algorithm that cannot run here (or not
  // with these options) gives way to the built-in rule.
  try {
    Options strict = opts;
    strict.allow_fallback = false;
    auto tuned = rule(from_name(pick->algo), strict);
    tuned.reason = "auto: " + pick->algo + " from " + pick->reason;
    return tuned;
  } catch (const Error& e) {
    auto built_in = rule(requested, opts);
    built_in.reason += " (the table's " + pick->algo + " cannot run here: " + e.what() + ")";
    return built_in;
  }
}

// What a call runs, without the explanation: Auto's decision (made by `decide`, which
// returns a choice with its reason) is remembered on comm under `key`, so repeated calls
// with one operation, size and options cost a lookup; other requests go to `decide`.
template <class Algo, class Decide>
Algo decided_algorithm(Algo requested, const Comm& comm, const DecisionKey& key, Decide decide) {
  if (requested != Algo::Auto) return decide().algo;
  const std::uint64_t epoch = tuning_table_epoch();  // read first: a newer table misses
  if (const auto hit = comm.remembered_decision(key, epoch)) return static_cast<Algo>(*hit);
  const Algo algo = decide().algo;
  comm.remember_decision(key, epoch, static_cast<int>(algo));
  return algo;
}

}  // namespace libcomm::detail
