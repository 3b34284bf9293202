#include "apps/lists.hpp"

#include <sstream>

#include "libcomm/error.hpp"

namespace apps {

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  libcomm::require(!out.empty() && text.back() != ',' && std::find(out.begin(), out.end(), std::string()) == out.end(),
                   [&] { return option + ": '" + text + "' is not a comma-separated list"; });
  return out;
}

std::vector<std::string> expand_list(const std::string& text, const std::string& option,
                                     const std::vector<std::string>& all) {
  std::vector<std::string> out;
  const auto keep = [&](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const auto& item : split_list(text, option)) {
    if (item != "all") {
      keep(item);
      continue;
    }
    for (const auto& name : all) keep(name);
  }
  return out;
}

}  // namespace apps
