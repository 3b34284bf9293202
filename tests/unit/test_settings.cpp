// The configuration registry (libcomm/settings.hpp): every LIBCOMM_* variable declared once,
// read from the environment at the first use and at reload_settings(), a bad value an
// Error naming the variable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "libcomm/error.hpp"
#include "libcomm/settings.hpp"

namespace {

using libcomm::Setting;

std::string error_of(Setting s) {
  try {
    (void)libcomm::setting_number(s);
  } catch (const libcomm::Error& e) {
    return e.what();
  }
  return "";
}

// Sets (or, with nullptr, unsets) a variable and reads the settings again.
void set(const char* var, const char* value) {
  if (value == nullptr) ::unsetenv(var);
  else ::setenv(var, value, 1);
  libcomm::reload_settings();
}

TEST(Settings, EveryVariableDeclaredOnceInEnumOrder) {
  std::set<std::string_view> names;
  int k = 0;
  for (const auto& i : libcomm::setting_infos()) {
    EXPECT_EQ(static_cast<int>(i.setting), k++) << i.name;
    EXPECT_TRUE(i.name.starts_with("LIBCOMM_")) << i.name;
    EXPECT_TRUE(names.insert(i.name).second) << i.name << " declared twice";
    EXPECT_FALSE(i.doc.empty()) << i.name;
    EXPECT_FALSE(i.allowed.empty()) << i.name;
  }
}

TEST(Settings, DefaultsAndEnvironment) {
  set("LIBCOMM_ONLINE_AFTER", nullptr);
  EXPECT_EQ(libcomm::setting_count(Setting::OnlineAfter), 16);
  EXPECT_FALSE(libcomm::setting_is_set(Setting::OnlineAfter));
  ::setenv("LIBCOMM_ONLINE_AFTER", "4", 1);
  EXPECT_EQ(libcomm::setting_count(Setting::OnlineAfter), 16) << "read again only at reload_settings";
  EXPECT_EQ(libcomm::setting_in_environment(Setting::OnlineAfter), "4");
  libcomm::reload_settings();
  EXPECT_EQ(libcomm::setting_count(Setting::OnlineAfter), 4);
  EXPECT_TRUE(libcomm::setting_is_set(Setting::OnlineAfter));
  set("LIBCOMM_ONLINE_CANDIDATES", "all");
  EXPECT_EQ(libcomm::setting_count(Setting::OnlineCandidates), 0);
  set("LIBCOMM_ONLINE_AFTER", nullptr);
  set("LIBCOMM_ONLINE_CANDIDATES", nullptr);
}

TEST(Settings, BadValuesNameTheVariable) {
  const struct {
    const char* var;
    Setting setting;
    const char* value;
    const char* says;
  } cases[] = {
      {"LIBCOMM_ONLINE_REPS", Setting::OnlineReps, "0", "expected a whole number from 1 to 100"},
      {"LIBCOMM_ONLINE_REPS", Setting::OnlineReps, "3x", "expected a whole number from 1 to 100"},
      {"LIBCOMM_ONLINE_CANDIDATES", Setting::OnlineCandidates, "none", "or 'all'"},
      {"LIBCOMM_ONLINE_MARGIN", Setting::OnlineMargin, "1", "expected a fraction from 0 to below 1"},
      {"LIBCOMM_TIMEOUT", Setting::Timeout, "3s", "is not a number of seconds"},
      {"LIBCOMM_CHECK", Setting::Check, "maybe", "is not 1/on/true/yes or 0/off/false/no"},
  };
  for (const auto& c : cases) {
    set(c.var, c.value);
    const std::string msg = error_of(c.setting);
    EXPECT_NE(msg.find(std::string(c.var) + "='" + c.value + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.says), std::string::npos) << msg;
    set(c.var, nullptr);
    EXPECT_EQ(error_of(c.setting), "");
  }
}

TEST(Settings, SteeringSettingsCoverUnknownVariablesAndFiles) {
  set("LIBCOMM_ALLTOAL", "bruck");  // misspelt: still compared across the ranks
  set("LIBCOMM_VERBOSE", "1");      // may differ between ranks: not compared
  std::string others, files;
  bool verbose = false;
  for (const auto& [name, value] : libcomm::steering_settings()) {
    if (name == "the other LIBCOMM_* variables") others = value;
    if (name == "the tuning table") files = value;
    verbose = verbose || name == "LIBCOMM_VERBOSE";
  }
  EXPECT_NE(others.find("LIBCOMM_ALLTOAL=bruck"), std::string::npos) << others;
  EXPECT_FALSE(verbose);
  EXPECT_EQ(files, "none");
  set("LIBCOMM_ALLTOAL", nullptr);
  set("LIBCOMM_VERBOSE", nullptr);
}

TEST(Settings, ConfigTableSaysWhereEachValueCameFrom) {
  set("LIBCOMM_AUTO", "model");
  const std::string table = libcomm::settings_table(false);
  EXPECT_NE(table.find("LIBCOMM_AUTO"), std::string::npos);
  EXPECT_NE(table.find("model   (environment)"), std::string::npos) << table;
  EXPECT_NE(table.find("16   (default)"), std::string::npos) << table;
  set("LIBCOMM_AUTO", nullptr);
  const std::string md = libcomm::settings_table(true);
  for (const auto& i : libcomm::setting_infos()) EXPECT_NE(md.find("`" + std::string(i.name) + "`"), std::string::npos);
}

}  // namespace
