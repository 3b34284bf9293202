// libcomm::Error: the one exception type of the library. Messages name the argument and
// the rank that was at fault so that a user of a 512-rank job can find the culprit.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

namespace libcomm {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// The ranks of a communicator run with different settings (LIBCOMM_* variables, tuning or
// model files): thrown on every rank alike when libcomm makes its state for the
// communicator (runtime/same_settings.cpp). The drop-in library runs the MPI library's own
// collectives on such a communicator instead.
class SettingsDiffer : public Error {
 public:
  explicit SettingsDiffer(const std::string& what) : Error(what) {}
};

// Throws Error("<where>: <what>") when cond is false.
inline void require(bool cond, const std::string& what) {
  if (!cond) throw Error(what);
}
// The same for a fixed message, without building a std::string when cond holds (a literal
// would otherwise be copied into one on every call).
inline void require(bool cond, const char* what) {
  if (!cond) throw Error(what);
}
// The same with the message built only when cond fails (hot paths: a message of
// std::to_string pieces costs allocations on every call otherwise).
template <class MakeMessage>
  requires std::is_invocable_r_v<std::string, MakeMessage>
inline void require(bool cond, MakeMessage&& what) {
  if (!cond) throw Error(what());
}

}  // namespace libcomm
