// The Auto policy setting (libcomm/auto_policy.hpp).
#include "libcomm/auto_policy.hpp"

#include <atomic>
#include <string>

#include "libcomm/error.hpp"
#include "libcomm/settings.hpp"
#include "../program/enum_table.hpp"

namespace libcomm {

namespace {
constexpr int kUnset = -1;
std::atomic<int> g_policy{kUnset};  // set_auto_policy's, else kUnset
constexpr std::string_view kAutoPolicyNames[] = {"online", "model", "table"};
}  // namespace

std::string_view auto_policy_name(AutoPolicy p) {
  return detail::enum_table<AutoPolicy::Table>(kAutoPolicyNames, p, std::string_view("?"));
}

AutoPolicy auto_policy_from_name(std::string_view name) {
  return detail::enum_named<AutoPolicy::Table>(kAutoPolicyNames, name, "auto policy");
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
