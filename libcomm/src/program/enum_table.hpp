// A value per enumerator, listed in enum order up to `Last`: the names of the small enums
// (areas, element types, reductions, alltoallv modes, auto policies) and element sizes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "libcomm/error.hpp"

namespace libcomm::detail {

// table[e]; `past` for a value beyond the table (a cast), which no enumerator is.
template <auto Last, class T, std::size_t N>
constexpr T enum_table(const T (&table)[N], decltype(Last) e, T past) {
  static_assert(N == static_cast<std::size_t>(Last) + 1, "one entry per enumerator");
  const auto k = static_cast<std::size_t>(e);
  return k < N ? table[k] : past;
}

// The enumerator named `name` in such a table of names; else an Error listing them all
// ("unknown <what> 'x' (valid: a, b, c)").
template <auto Last, std::size_t N>
decltype(Last) enum_named(const std::string_view (&names)[N], std::string_view name, const char* what) {
  static_assert(N == static_cast<std::size_t>(Last) + 1, "one name per enumerator");
  std::string valid;
  for (std::size_t k = 0; k < N; ++k) {
    if (names[k] == name) return static_cast<decltype(Last)>(k);
    valid += (k ? ", " : "") + std::string(names[k]);
  }
  throw Error("unknown " + std::string(what) + " '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace libcomm::detail
