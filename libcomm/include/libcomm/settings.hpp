// The LIBCOMM_* environment variables, declared once (libcomm/src/config/settings.cpp):
// each with its type, default, allowed values and a one-line description, parsed in one
// place. `commbench --config` prints what they are and where each value came from; the
// README's table of variables is that output (a test compares them).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace libcomm {

enum class Setting {
  Alltoall, Alltoallv, Allgather, ReduceScatter,  // an operation's algorithm
  Auto, OnlineAfter, OnlineReps, OnlineCandidates, OnlineMargin, OnlineSave,
  Nodes, Tuning, TuningDir, Platform, Model,
  Check, CheckArgs, Verbose, Timeout, TraceStages, TestSlow,
};

struct SettingInfo {
  Setting setting;
  std::string_view name;     // LIBCOMM_...
  std::string_view type;     // "name", "count", "fraction", "seconds", "flag", "path", "spec"
  std::string_view fallback; // the value when unset ("" for none)
  std::string_view allowed;  // the values it takes, in words
  std::string_view doc;      // what it does, one line
  // Steers what a rank runs or how many collectives it makes: every rank of a communicator
  // must have the same value (compared when libcomm makes a communicator's state).
  bool steers = true;
};

// Every variable, in declaration order.
const std::vector<SettingInfo>& setting_infos();
const SettingInfo& setting_info(Setting s);

// The value in effect: the environment's when set (and not empty), else the default; read
// once, and again after reload_settings(). A value the variable does not take is an Error
// naming it, raised by every call that asks for it.
std::string setting_text(Setting s);
bool setting_is_set(Setting s);  // set in the environment (not the default)
long long setting_count(Setting s);  // "count" (a whole number; "all" reads as 0 where allowed)
double setting_number(Setting s);    // "fraction", "seconds"
bool setting_flag(Setting s);        // "flag": 1/on/true/yes or 0/off/false/no

// A file that steers auto: the one LIBCOMM_TUNING or LIBCOMM_MODEL names (`named`: one that
// cannot be read is an Error), else <tuning_directory()>/<LIBCOMM_PLATFORM> + `extension`
// where that exists, else none (empty path).
struct SettingsFile {
  std::string path;
  bool named = false;
};
SettingsFile settings_file(Setting var, std::string_view extension);
// Where that search looks: LIBCOMM_TUNING_DIR, else the source tree's inputs/tuning.
std::string tuning_directory();

// The variable as the environment holds it at this moment ("" when unset), not what libcomm
// runs by (that changes only at reload_settings): for <op>_algo_from_env.
std::string setting_in_environment(Setting s);

// Reads the environment again (libcomm::reload_environment calls it).
void reload_settings();
// Changes at every reload: a caller that keeps a parsed value compares it.
unsigned long settings_generation();

// What every rank must share, as (name, value) pairs: each steering variable, any other
// LIBCOMM_* variable in the environment (misspelt ones included) and the files behind
// LIBCOMM_TUNING and LIBCOMM_MODEL (by contents). libcomm compares them across the ranks.
std::vector<std::pair<std::string, std::string>> steering_settings();

// The table `commbench --config` prints: each variable, its value, and whether it came from
// the environment or is the default. `markdown`: the README's table (no values: types,
// defaults and descriptions).
std::string settings_table(bool markdown);

}  // namespace libcomm
