// The Auto policy setting (libcomm/auto_policy.hpp).
#include "libcomm/auto_policy.hpp"

#include <atomic>
#include <string>

#include "libcomm/error.hpp"
#include "libcomm/settings.hpp"

namespace libcomm {

namespace {
constexpr int kUnset = -1;
std::atomic<int> g_policy{kUnset};  // set_auto_policy's, else kUnset
}  // namespace

std::string_view auto_policy_name(AutoPolicy p) {
  constexpr std::string_view kNames[] = {"online", "model", "table"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(AutoPolicy::Table) + 1);
  const auto k = static_cast<std::size_t>(p);
  return k < std::size(kNames) ? kNames[k] : "?";
}

AutoPolicy auto_policy_from_name(std::string_view name) {
  for (AutoPolicy p : {AutoPolicy::Online, AutoPolicy::Model, AutoPolicy::Table})
    if (auto_policy_name(p) == name) return p;
  throw Error("unknown auto policy '" + std::string(name) + "' (valid: online, model, table)");
}

// LIBCOMM_AUTO unless the program set one; a bad name fails every call that asks, naming it.
AutoPolicy auto_policy() {
  const int set = g_policy.load(std::memory_order_relaxed);
  if (set != kUnset) return static_cast<AutoPolicy>(set);
  // (Parsed at each reload of the settings, not at each call.)
  static std::atomic<unsigned long> parsed_generation{0};
  static std::atomic<int> parsed{static_cast<int>(AutoPolicy::Online)};
  if (parsed_generation.load(std::memory_order_acquire) != settings_generation()) {
    const std::string name = setting_text(Setting::Auto);
    try {
      parsed.store(static_cast<int>(auto_policy_from_name(name)), std::memory_order_relaxed);
    } catch (const Error& e) {
      throw Error(std::string("LIBCOMM_AUTO: ") + e.what());
    }
    parsed_generation.store(settings_generation(), std::memory_order_release);
  }
  return static_cast<AutoPolicy>(parsed.load(std::memory_order_relaxed));
}

void set_auto_policy(AutoPolicy p) { g_policy.store(static_cast<int>(p), std::memory_order_relaxed); }
void reset_auto_policy() { g_policy.store(kUnset, std::memory_order_relaxed); }

}  // namespace libcomm
