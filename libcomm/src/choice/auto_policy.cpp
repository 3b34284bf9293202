// The Auto policy setting (libcomm/auto_policy.hpp).
#include "libcomm/auto_policy.hpp"

#include <atomic>
#include <cstdlib>
#include <string>

#include "libcomm/error.hpp"

namespace libcomm {

namespace {
constexpr AutoPolicy kDefaultPolicy = AutoPolicy::Online;
constexpr int kUnset = -1;
std::atomic<int> g_policy{kUnset};
int g_env_policy = static_cast<int>(kDefaultPolicy);
}  // namespace

std::string_view auto_policy_name(AutoPolicy p) {
  switch (p) {
    case AutoPolicy::Online: return "online";
    case AutoPolicy::Model: return "model";
    case AutoPolicy::Table: return "table";
  }
  return "?";
}

AutoPolicy auto_policy_from_name(std::string_view name) {
  for (AutoPolicy p : {AutoPolicy::Online, AutoPolicy::Model, AutoPolicy::Table})
    if (auto_policy_name(p) == name) return p;
  throw Error("unknown auto policy '" + std::string(name) + "' (valid: online, model, table)");
}

AutoPolicy auto_policy() {
  const int set = g_policy.load(std::memory_order_relaxed);
  if (set != kUnset) return static_cast<AutoPolicy>(set);
  // LIBCOMM_AUTO, read once (a bad value fails every call that asks, naming it).
  static const std::string env_error = [] {
    const char* env = std::getenv("LIBCOMM_AUTO");
    if (env == nullptr || *env == '\0') {
      g_env_policy = static_cast<int>(kDefaultPolicy);
      return std::string();
    }
    try {
      g_env_policy = static_cast<int>(auto_policy_from_name(env));
      return std::string();
    } catch (const Error& e) {
      return std::string("LIBCOMM_AUTO: ") + e.what();
    }
  }();
  if (!env_error.empty()) throw Error(env_error);
  return static_cast<AutoPolicy>(g_env_policy);
}

void set_auto_policy(AutoPolicy p) { g_policy.store(static_cast<int>(p), std::memory_order_relaxed); }
void reset_auto_policy() { g_policy.store(kUnset, std::memory_order_relaxed); }

}  // namespace libcomm
