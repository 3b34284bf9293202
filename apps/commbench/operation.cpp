// The operation registry (operation.hpp), shared by commbench and tune.
#include <algorithm>

#include "operation.hpp"

namespace commbench {

std::map<std::string, OperationEntry>& registry() {
  static std::map<std::string, OperationEntry> ops;
  return ops;
}

std::vector<std::string> reference_first(std::vector<std::string> names, const std::string& ref) {
  names.erase(std::remove(names.begin(), names.end(), ref), names.end());
  names.insert(names.begin(), ref);
  return names;
}

}  // namespace commbench
