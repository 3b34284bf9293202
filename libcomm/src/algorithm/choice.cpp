#include "libcomm/choice.hpp"

#include <mutex>
#include <unordered_set>

namespace libcomm {

const std::string* intern_reason(std::string_view text) {
  static std::mutex mutex;
  static std::unordered_set<std::string> texts;  // nodes never move: the pointers stay valid
  std::lock_guard lock(mutex);
  return &*texts.emplace(text).first;
}

}  // namespace libcomm
