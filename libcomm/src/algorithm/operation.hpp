// What an operation's files build on: the descriptor and the shape (algorithm.hpp), the
// terms of the cost formulas, the argument checks and plans (runtime/), and OperationBase,
// which names an operation and gives the defaults of what most operations share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "../runtime/check.hpp"
#include "../runtime/plan_state.hpp"
#include "algorithm.hpp"
#include "cost_terms.hpp"
#include "libcomm/settings.hpp"

namespace libcomm::detail {

// A string literal as a template argument (an operation's name).
template <std::size_t N>
struct Literal {
  char text[N];
  constexpr Literal(const char (&s)[N]) { std::copy_n(s, N, text); }  // NOLINT: implicit by design
  constexpr std::string_view view() const { return {text, N - 1}; }
};

// What names an operation, and the defaults of what most operations share.
template <class AlgoT, class OptionsT, Setting S, Literal Name, Literal What = Name>
struct OperationBase {
  using Algo = AlgoT;
  using Options = OptionsT;
  static constexpr Setting setting = S;        // LIBCOMM_<OP>
  static constexpr std::string_view name = Name.view();  // "alltoall": tables, keys, messages
  static constexpr std::string_view what = What.view();  // "all-to-all": "unknown ... algorithm"
  struct Extra {};  // what its descriptors add (nothing)
  // The argument check's words when the ranks' sizes differ.
  template <class Args>
  static std::string sizes_differ(const Args&, std::uint64_t, std::uint64_t) {
    return "counts differ across ranks";
  }
};

}  // namespace libcomm::detail
