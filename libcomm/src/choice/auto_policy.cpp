// The Auto policy setting (libcomm/auto_policy.hpp).
#include "libcomm/auto_policy.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "libcomm/error.hpp"

namespace libcomm {

namespace {
constexpr AutoPolicy kDefaultPolicy = AutoPolicy::Online;
constexpr int kUnset = -1;
std::atomic<int> g_policy{kUnset};
std::mutex g_env_mutex;
std::atomic<bool> g_env_read{false};
int g_env_policy = static_cast<int>(kDefaultPolicy);
std::string g_env_error;
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
  // LIBCOMM_AUTO, read once (and again after reload_environment); a bad value fails every
  // call that asks, naming it.
  if (!g_env_read.load(std::memory_order_acquire)) {
    std::lock_guard lock(g_env_mutex);
    if (!g_env_read.load(std::memory_order_relaxed)) {
      g_env_error.clear();
      g_env_policy = static_cast<int>(kDefaultPolicy);
      const char* env = std::getenv("LIBCOMM_AUTO");
      if (env != nullptr && *env != '\0') {
        try {
          g_env_policy = static_cast<int>(auto_policy_from_name(env));
        } catch (const Error& e) {
          g_env_error = std::string("LIBCOMM_AUTO: ") + e.what();
        }
      }
      g_env_read.store(true, std::memory_order_release);
    }
  }
  if (!g_env_error.empty()) throw Error(g_env_error);
  return static_cast<AutoPolicy>(g_env_policy);
}

void forget_environment_policy() {
  std::lock_guard lock(g_env_mutex);
  g_env_read.store(false, std::memory_order_release);
}


void set_auto_policy(AutoPolicy p) { g_policy.store(static_cast<int>(p), std::memory_order_relaxed); }
void reset_auto_policy() { g_policy.store(kUnset, std::memory_order_relaxed); }

}  // namespace libcomm
