// The name table every operation keeps as data (`<op>_algorithms()`: algorithm, name,
// summary), and what is read from it: a name by algorithm, an algorithm by name, and the
// operation's environment variable. Written once for the four operations.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include "libcomm/error.hpp"

namespace libcomm::detail {

template <class Table, class Algo>
std::string_view name_in(const Table& table, Algo a) {
  // The tables list the algorithms in enum order: one look (the drop-in library names
  // the algorithm of every call), the search only if a table ever stops doing so.
  const auto k = static_cast<std::size_t>(a);
  if (k < table.size() && table[k].algo == a) return table[k].name;
  for (const auto& info : table)
    if (info.algo == a) return info.name;
  return "?";
}

// Throws Error "unknown <what> algorithm 'NAME' (valid: ...)".
template <class Table>
auto algorithm_in(const Table& table, std::string_view name, std::string_view what) {
  std::string valid;
  for (const auto& info : table) {
    if (info.name == name) return info.algo;
    valid += (valid.empty() ? "" : ", ") + std::string(info.name);
  }
  throw Error("unknown " + std::string(what) + " algorithm '" + std::string(name) + "' (valid: " + valid + ")");
}

// The algorithm named by environment variable `var`, or `fallback` when it is unset or
// empty; an unknown name throws, naming the variable.
template <class Table, class Algo>
Algo algorithm_from_env(const Table& table, const char* var, Algo fallback, std::string_view what) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return fallback;
  try {
    return algorithm_in(table, v, what);
  } catch (const Error& e) {
    throw Error(std::string(var) + ": " + e.what());
  }
}

}  // namespace libcomm::detail
