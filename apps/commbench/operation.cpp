// The operation registry (operation.hpp), shared by commbench and tune.
#include <algorithm>
#include <iomanip>
#include <sstream>

#include "libcomm/error.hpp"
#include "libcomm/operations.hpp"
#include "operation.hpp"

namespace commbench {

TimedName parse_timed(const std::string& text) {
  TimedName t;
  std::string rest = text;
  if (const auto slash = rest.find('/'); slash != std::string::npos) {  // NAME[:POLICY]/MODE
    t.mode = rest.substr(slash + 1);
    rest.resize(slash);
  }
  if (const auto colon = rest.find(':'); colon != std::string::npos) {
    t.policy = rest.substr(colon + 1);
    rest.resize(colon);
  }
  t.algo = rest;
  libcomm::require(t.policy.empty() || t.algo == "auto",
                   "'" + text + "': only auto takes a policy (auto:online, auto:model, auto:table)");
  if (!t.policy.empty()) libcomm::auto_policy_from_name(t.policy);  // (throws for an unknown one)
  return t;
}

PolicyScope::PolicyScope(const std::string& timed) {
  const TimedName t = parse_timed(timed);
  if (t.policy.empty()) return;
  previous_ = libcomm::auto_policy();
  libcomm::set_auto_policy(libcomm::auto_policy_from_name(t.policy));
  set_ = true;
}

PolicyScope::~PolicyScope() {
  if (set_) libcomm::set_auto_policy(previous_);
}

std::vector<std::string> Operation::select(const std::string& list) const {
  const libcomm::OperationAlgorithms& reg = libcomm::operation_named(operation_);
  std::vector<std::string> names;
  const auto add = [&](const std::string& name) {
    for (auto& n : expand(name))
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
  };
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    if (item == "all") {  // every algorithm of the registry
      for (std::string_view n : reg.names)
        if (in_all(n)) add(std::string(n));
      continue;
    }
    try {
      const TimedName t = parse_timed(item);
      libcomm::algorithm_of(operation_, t.algo);  // (throws for an unknown name, listing the valid ones)
      add(item);
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--algo: ") + e.what());
    }
  }
  return reference_first(names, "native");
}

void list_operations(std::ostream& os) {
  for (const auto& [name, entry] : registry()) {
    os << "--op " << name << ": " << entry.summary << "\n";
    const auto& reg = libcomm::operation_named(name);
    for (std::size_t k = 0; k < reg.names.size(); ++k)
      os << "  " << std::left << std::setw(24) << reg.names[k] << reg.summaries[k] << "\n";
    if (name == "alltoallv") os << "  (time NAME/MODE with MODE b, n1 or n2; NAME alone times every --modes)\n";
  }
  os << "auto:online, auto:model, auto:table time auto under that policy (plain auto: --auto)\n";
}

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
