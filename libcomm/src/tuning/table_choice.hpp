// Auto through the tuning table for the operations whose choice is (algorithm, reason) and
// whose options carry allow_fallback (allgather, reduce_scatter): the table's row if its
// algorithm can run here, else the built-in rule with a note saying why. And the decision
// memo every operation's call path goes through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "libcomm/choice.hpp"
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
  if (!pick) return rule(requested, opts).note(" (no tuning table row)");
  // The row may come from another rank count: an algorithm that cannot run here (or not
  // with these options) gives way to the built-in rule.
  try {
    Options strict = opts;
    strict.allow_fallback = false;
    const auto tuned = rule(from_name(pick->algo), strict);
    return decltype(tuned)(tuned.algo, "auto: " + pick->algo + " from " + pick->reason);
  } catch (const Error& e) {
    return rule(requested, opts).note(" (the table's " + pick->algo + " cannot run here: " + e.what() + ")");
  }
}

// What a call runs and why: Auto's decision (made by `decide`, which returns a Choice) is
// remembered on comm under `key` with its reason, so repeated calls with one operation,
// size and options cost a lookup and build no string; other requests go to `decide`.
template <class Algo, class Decide>
Choice<Algo> decided_choice(Algo requested, const Comm& comm, const DecisionKey& key, Decide decide) {
  if (requested != Algo::Auto) return decide();
  const std::uint64_t epoch = tuning_table_epoch();  // read first: a newer table misses
  if (const auto hit = comm.remembered_decision(key, epoch)) return {static_cast<Algo>(hit->algo), hit->reason};
  Choice<Algo> c = decide();
  comm.remember_decision(key, epoch, {static_cast<int>(c.algo), c.interned_reason()});
  return c;
}

}  // namespace libcomm::detail
