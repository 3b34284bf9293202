// Auto through the tuning table for the operations whose choice is (algorithm, reason) and
// whose options carry allow_fallback (allgather, reduce_scatter): the table's row if its
// algorithm can run here, else the built-in rule with a note saying why.
#pragma once

#include <cstddef>
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

}  // namespace libcomm::detail
