// Helpers shared by the unit tests that check libcomm::Error messages.
#pragma once

#include <string>

#include "libcomm/error.hpp"

namespace libcomm::testing {

// The message of the libcomm::Error that fn() throws, or "" when it returns normally.
template <class F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace libcomm::testing
