// The one home of libcomm's configuration (libcomm/settings.hpp): every LIBCOMM_* variable
// declared below, read from the environment here and nowhere else.
#include "libcomm/settings.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>

#include "libcomm/error.hpp"

extern char** environ;

#ifndef LIBCOMM_CHECK_DEFAULT
#define LIBCOMM_CHECK_DEFAULT 0
#endif
#define LIBCOMM_STR2(x) #x
#define LIBCOMM_STR(x) LIBCOMM_STR2(x)

namespace libcomm {

namespace {

// Ranges of the numeric variables: {min, max}.
struct Range {
  double min = 0, max = 0;
};

struct Declared {
  Declared(SettingInfo i, Range r = {}, bool all = false) : info(i), range(r), all_is_zero(all) {}
  SettingInfo info;
  Range range;
  bool all_is_zero;  // a count that also takes "all" (read as 0)
};

const std::vector<Declared>& declared() {
  static const std::vector<Declared> all = {
      {{Setting::Alltoall, "LIBCOMM_ALLTOALL", "name", "auto", "auto, native or a name of `commbench --list`",
        "the algorithm of the all-to-all (`libcomm::alltoall` asked for auto, `MPI_Alltoall` under the drop-in)"}},
      {{Setting::Alltoallv, "LIBCOMM_ALLTOALLV", "name", "auto", "auto, native or a name of `commbench --list`",
        "the algorithm of the irregular all-to-all"}},
      {{Setting::Allgather, "LIBCOMM_ALLGATHER", "name", "auto", "auto, native or a name of `commbench --list`",
        "the algorithm of the all-to-all broadcast (allgather and allgatherv)"}},
      {{Setting::ReduceScatter, "LIBCOMM_REDUCE_SCATTER", "name", "auto",
        "auto, native or a name of `commbench --list`",
        "the algorithm of the all-to-all reduction (reduce_scatter and reduce_scatter_block)"}},
      {{Setting::Auto, "LIBCOMM_AUTO", "name", "online", "online, model, table",
        "how auto chooses: measuring the candidates on the first calls, the cost model, or a tuning table"}},
      {{Setting::OnlineAfter, "LIBCOMM_ONLINE_AFTER", "count", "16", "0 to 1000000",
        "online: the calls of a size class that run native before the candidates are measured"},
       {0, 1000000}},
      {{Setting::OnlineReps, "LIBCOMM_ONLINE_REPS", "count", "3", "1 to 100",
        "online: timed runs of each candidate (unset: 3, and 12 for a class of 1 KiB or less)"},
       {1, 100}},
      {{Setting::OnlineCandidates, "LIBCOMM_ONLINE_CANDIDATES", "count", "6", "1 to 1000, or all",
        "online: the model's cheapest candidates measured besides native and the shared-window ones"},
       {1, 1000},
       true},
      {{Setting::OnlineMargin, "LIBCOMM_ONLINE_MARGIN", "fraction", "0.03", "0 to below 1",
        "online: how much faster than native another candidate must measure to win"},
       {0, 1}},
      {{Setting::OnlineSave, "LIBCOMM_ONLINE_SAVE", "path", "", "a file name",
        "the drop-in writes what online learned to this file at MPI_Finalize (a tuning table)"}},
      {{Setting::Nodes, "LIBCOMM_NODES", "spec", "shared", "a node map spec: shared, flat, ppn=N, sizes=..., map=..., "
        "file:PATH", "the drop-in's node map for the hierarchical algorithms"}},
      {{Setting::Tuning, "LIBCOMM_TUNING", "path", "", "a tuning table file",
        "the tuning table auto's table policy uses and online starts from"}},
      {{Setting::TuningDir, "LIBCOMM_TUNING_DIR", "path", "", "a directory",
        "where <LIBCOMM_PLATFORM>.tune and .model are looked for (unset: the source tree's inputs/tuning)"}},
      {{Setting::Platform, "LIBCOMM_PLATFORM", "name", "", "a platform name",
        "the platform whose tuning table and model file are used when LIBCOMM_TUNING / LIBCOMM_MODEL are unset"}},
      {{Setting::Model, "LIBCOMM_MODEL", "path", "", "a cost model file (commbench --calibrate)",
        "the cost model's parameters"}},
      {{Setting::Check, "LIBCOMM_CHECK", "flag", LIBCOMM_STR(LIBCOMM_CHECK_DEFAULT), "0 or 1",
        "check mode: every collective compares its arguments across the ranks first (extra collectives)"}},
      {{Setting::CheckArgs, "LIBCOMM_CHECK_ARGS", "flag", "0", "0 or 1",
        "the drop-in runs libcomm's collective argument check (one small allreduce per call)"}},
      {{Setting::Verbose, "LIBCOMM_VERBOSE", "flag", "0", "0 or 1",
        "the drop-in logs what ran, once per operation, rank count and choice, on rank 0", false}},
      {{Setting::Timeout, "LIBCOMM_TIMEOUT", "seconds", "0", "0 to 1e9 (0: no timeout)",
        "a wait that sees no message complete for this long fails, naming the ranks it waits for"},
       {0, 1e9}},
      {{Setting::TraceStages, "LIBCOMM_TRACE_STAGES", "path", "", "a directory",
        "each rank appends the times of every stage of its step programs to DIR/stages.<rank>.txt", false}},
      {{Setting::TestSlow, "LIBCOMM_TEST_SLOW", "spec", "", "op:algorithm:seconds[:rank],...",
        "tests only: every run of that algorithm first waits that long"}},
  };
  return all;
}

struct Value {
  std::string text;  // as set, or the default
  bool set = false;
  double number = 0;
  std::string error;  // why the value is not one the variable takes
};

// The environment as read at one moment. Never freed: a reader may hold one across a
// reload (there are as many as reloads, a test's handful).
struct Snapshot {
  std::vector<Value> values;
  unsigned long generation = 0;
};

std::string parse_error(const Declared& d, const std::string& v) {
  const std::string head = std::string(d.info.name) + "='" + v + "'";
  if (d.info.type == "count")
    return head + ": expected a whole number from " + std::to_string(static_cast<long long>(d.range.min)) + " to " +
           std::to_string(static_cast<long long>(d.range.max)) + (d.all_is_zero ? " or 'all'" : "");
  if (d.info.type == "fraction") return head + ": expected a fraction from 0 to below 1";
  if (d.info.type == "seconds") return head + " is not a number of seconds (0 to 1e9; 0 or unset: no timeout)";
  return head + " is not 1/on/true/yes or 0/off/false/no";
}

Value parse(const Declared& d, const char* env) {
  Value v;
  v.set = env != nullptr && *env != '\0';
  v.text = v.set ? env : std::string(d.info.fallback);
  const std::string_view type = d.info.type;
  if (type == "flag") {
    const std::string& s = v.text;
    if (s == "1" || s == "on" || s == "true" || s == "yes") v.number = 1;
    else if (s == "0" || s == "off" || s == "false" || s == "no") v.number = 0;
    else v.error = parse_error(d, s);
  } else if (type == "count" || type == "fraction" || type == "seconds") {
    if (d.all_is_zero && v.text == "all") return v;  // (number 0)
    char* end = nullptr;
    errno = 0;
    const double x = type == "count" ? static_cast<double>(std::strtoll(v.text.c_str(), &end, 10))
                                     : std::strtod(v.text.c_str(), &end);
    const bool below_max = type == "fraction" ? x < d.range.max : x <= d.range.max;
    if (v.text.empty() || *end != '\0' || errno != 0 || !(x >= d.range.min) || !below_max)
      v.error = parse_error(d, v.text);
    else
      v.number = x;
  }
  return v;
}

std::mutex g_mutex;
std::atomic<const Snapshot*> g_snapshot{nullptr};
std::atomic<unsigned long> g_generation{1};

// Every snapshot ever read, kept reachable (a reader may still hold one after a reload;
// none is freed, and none is a leak).
std::vector<const Snapshot*>& every_snapshot() {
  static auto* all = new std::vector<const Snapshot*>;
  return *all;
}

// (Called with g_mutex held.)
const Snapshot& read_environment() {
  const std::vector<Declared>& all = declared();
  auto* s = new Snapshot;  // (never freed: see Snapshot)
  every_snapshot().push_back(s);
  for (const Declared& d : all) s->values.push_back(parse(d, std::getenv(std::string(d.info.name).c_str())));
  s->generation = g_generation.load();
  return *s;
}

const Snapshot& snapshot() {
  if (const Snapshot* s = g_snapshot.load(std::memory_order_acquire)) return *s;
  std::lock_guard lock(g_mutex);
  if (const Snapshot* s = g_snapshot.load(std::memory_order_relaxed)) return *s;
  const Snapshot& fresh = read_environment();
  g_snapshot.store(&fresh, std::memory_order_release);
  return fresh;
}

const Value& value(Setting s) {
  const Value& v = snapshot().values[static_cast<std::size_t>(s)];
  if (!v.error.empty()) throw Error(v.error);
  return v;
}

// A file is compared by its contents: the same table under two paths is the same table.
std::string file_value(const std::string& path) {
  if (path.empty()) return "none";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "'" + path + "' (cannot be read: " + std::strerror(errno) + ")";
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  char hash[24];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(std::hash<std::string>{}(bytes)));
  return "'" + path + "' (" + std::to_string(bytes.size()) + " bytes, contents " + hash + ")";
}

}  // namespace

const std::vector<SettingInfo>& setting_infos() {
  static const std::vector<SettingInfo> infos = [] {
    std::vector<SettingInfo> v;
    for (const Declared& d : declared()) v.push_back(d.info);
    return v;
  }();
  return infos;
}

const SettingInfo& setting_info(Setting s) { return setting_infos()[static_cast<std::size_t>(s)]; }

std::string tuning_directory() {
  const Value& dir = value(Setting::TuningDir);
  return dir.set ? dir.text : LIBCOMM_DEFAULT_TUNING_DIR;
}

SettingsFile settings_file(Setting var, std::string_view extension) {
  if (const Value& named = value(var); named.set) return {named.text, true};
  if (const Value& platform = value(Setting::Platform); platform.set) {
    std::string file = tuning_directory() + "/" + platform.text + std::string(extension);
    if (std::ifstream(file)) return {std::move(file), false};
  }
  return {};
}

std::string setting_text(Setting s) { return value(s).text; }

std::string setting_in_environment(Setting s) {
  const char* v = std::getenv(std::string(setting_info(s).name).c_str());
  return v == nullptr ? std::string() : std::string(v);
}
bool setting_is_set(Setting s) { return snapshot().values[static_cast<std::size_t>(s)].set; }
long long setting_count(Setting s) { return static_cast<long long>(value(s).number); }
double setting_number(Setting s) { return value(s).number; }
bool setting_flag(Setting s) { return value(s).number != 0; }

void reload_settings() {
  std::lock_guard lock(g_mutex);
  g_generation.fetch_add(1);
  g_snapshot.store(&read_environment(), std::memory_order_release);
}

unsigned long settings_generation() { return snapshot().generation; }

std::vector<std::pair<std::string, std::string>> steering_settings() {
  std::vector<std::pair<std::string, std::string>> out;
  const Snapshot& now = snapshot();
  for (const SettingInfo& i : setting_infos()) {
    if (!i.steers) continue;
    const Value& v = now.values[static_cast<std::size_t>(i.setting)];
    out.emplace_back(i.name, v.set ? "'" + v.text + "'" : "(unset)");
  }
  // Any other LIBCOMM_* variable (a misspelt one included) is compared as one setting.
  std::vector<std::string> others;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (!kv.starts_with("LIBCOMM_")) continue;
    const std::string_view name = kv.substr(0, kv.find('='));
    if (std::none_of(setting_infos().begin(), setting_infos().end(), [&](const SettingInfo& i) { return i.name == name; }))
      others.emplace_back(kv);
  }
  std::sort(others.begin(), others.end());
  std::string rest;
  for (const auto& kv : others) rest += (rest.empty() ? "" : " ") + kv;
  out.emplace_back("the other LIBCOMM_* variables", rest.empty() ? "(none)" : rest);
  out.emplace_back("the tuning table", file_value(settings_file(Setting::Tuning, ".tune").path));
  out.emplace_back("the cost model file", file_value(settings_file(Setting::Model, ".model").path));
  return out;
}

std::string settings_table(bool markdown) {
  std::ostringstream out;
  const Snapshot& now = snapshot();
  if (markdown) {
    out << "| variable | takes | default | what it does |\n|---|---|---|---|\n";
    for (const SettingInfo& i : setting_infos())
      out << "| `" << i.name << "` | " << i.allowed << " | " << (i.fallback.empty() ? "none" : "`" + std::string(i.fallback) + "`")
          << " | " << i.doc << (i.steers ? "" : " (may differ between ranks)") << " |\n";
    return out.str();
  }
  for (const SettingInfo& i : setting_infos()) {
    const Value& v = now.values[static_cast<std::size_t>(i.setting)];
    out << i.name << std::string(27 - std::min<std::size_t>(i.name.size(), 26), ' ')
        << (v.text.empty() ? "(none)" : v.text) << "   (" << (v.set ? "environment" : "default")
        << (v.error.empty() ? "" : "; not valid: " + v.error) << ")\n";
  }
  return out.str();
}

}  // namespace libcomm
