// Comma-separated lists on the command line (--algo ring,bruck, --layout rows,cols, ...).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/error.hpp"

namespace apps {

// "a,b,c" -> {a, b, c}. An empty text, an empty item or a trailing comma is an error
// naming `option`: "--algo: 'ring,,bruck' is not a comma-separated list".
std::vector<std::string> split_list(const std::string& text, const std::string& option);

// The names a list option selects: split_list, with the item "all" standing for `all`
// and every name kept once (its first place).
std::vector<std::string> expand_list(const std::string& text, const std::string& option,
                                     const std::vector<std::string>& all);

// Moves the items for which is_reference holds to the front, keeping the order of the rest
// (the reference, `native`, is timed first: every ratio divides by its median).
template <class T, class Pred>
void reference_first(std::vector<T>& items, Pred is_reference) {
  std::stable_partition(items.begin(), items.end(), is_reference);
}

// Names of the values of an enumeration, as a table {{value, "name"}, ...}, and the two
// lookups: name_of (a value missing from the table is "?") and from_name, whose Error
// lists the valid names: "unknown layout 'x' (valid: rows, cols, all)" (`more` appends).
template <class T>
struct Named {
  T value;
  std::string_view name;
};

template <class T, std::size_t N>
std::string_view name_of(const Named<T> (&table)[N], T value) {
  for (const auto& entry : table)
    if (entry.value == value) return entry.name;
  return "?";
}

template <class T, std::size_t N>
T from_name(const Named<T> (&table)[N], std::string_view name, const std::string& what, const std::string& more = "") {
  std::string valid;
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
    valid += (valid.empty() ? "" : ", ") + std::string(entry.name);
  }
  throw libcomm::Error("unknown " + what + " '" + std::string(name) + "' (valid: " + valid + more + ")");
}

}  // namespace apps
