// An MPI library's fixed decision as a table (Open MPI's coll_tuned_decision_fixed.c, which
// SimGrid's ompi selector copies): bands of communicator size, each a list of (bytes below,
// what runs) whose first match wins. The native formulas price what such a table picks.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <utility>

namespace libcomm::detail::cost {

inline constexpr double kAnySize = 1e300;  // an open-ended last entry

template <class Pick>
struct DecisionBand {
  int ranks_below;
  std::initializer_list<std::pair<double, Pick>> bytes_below;
};

// What the table runs on p ranks for `bytes` (each table's own measure: a block, the whole
// vector); `otherwise` past its bands and entries.
template <class Pick, std::size_t N>
Pick decide(const DecisionBand<Pick> (&table)[N], int p, double bytes, Pick otherwise) {
  for (const DecisionBand<Pick>& band : table) {
    if (p >= band.ranks_below) continue;
    for (const auto& [below, pick] : band.bytes_below)
      if (bytes < below) return pick;
    return otherwise;
  }
  return otherwise;
}

}  // namespace libcomm::detail::cost
