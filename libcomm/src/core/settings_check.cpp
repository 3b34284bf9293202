#include "settings_check.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

#include "libcomm/cost_params.hpp"
#include "libcomm/error.hpp"
#include "libcomm/tuning.hpp"
#include "mpi_bytes.hpp"

extern char** environ;

namespace libcomm::detail {

namespace {

// The variables that steer a collective: the algorithm of each operation, auto's policy
// and its online parameters, the node map, where tables and models come from, the checks
// (each adds collectives), the learned table's save (collective at finalize) and the
// tests' switches. README, "Settings every rank must share".
constexpr const char* kSteering[] = {
    "LIBCOMM_ALLTOALL",     "LIBCOMM_ALLTOALLV",     "LIBCOMM_ALLGATHER",  "LIBCOMM_REDUCE_SCATTER",
    "LIBCOMM_AUTO",         "LIBCOMM_ONLINE_AFTER",  "LIBCOMM_ONLINE_REPS", "LIBCOMM_ONLINE_CANDIDATES",
    "LIBCOMM_ONLINE_MARGIN", "LIBCOMM_ONLINE_SAVE",  "LIBCOMM_NODES",      "LIBCOMM_TUNING",
    "LIBCOMM_TUNING_DIR",   "LIBCOMM_PLATFORM",      "LIBCOMM_MODEL",      "LIBCOMM_CHECK",
    "LIBCOMM_CHECK_ARGS",   "LIBCOMM_TEST_SLOW"};
// Read by each rank for itself: a difference changes no rank's sequence of calls.
constexpr const char* kRankLocal[] = {"LIBCOMM_VERBOSE", "LIBCOMM_TIMEOUT", "LIBCOMM_TIMEOUT_FACTOR",
                                      "LIBCOMM_TRACE_STAGES"};

struct Setting {
  std::string name;
  std::string compared;  // what must be equal on every rank
  std::string shown;     // how the message shows it
};

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string value_of(const char* var) {
  const char* v = std::getenv(var);
  return v == nullptr || *v == '\0' ? std::string("(unset)") : "'" + std::string(v) + "'";
}

// A file is compared by its contents: the same table under two paths is the same table.
Setting file_setting(const std::string& name, const std::string& path) {
  if (path.empty()) return {name, "(none)", "none"};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::string why = "'" + path + "' (cannot be read: " + std::strerror(errno) + ")";
    return {name, why, why};
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  char hash[24];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(bytes)));
  return {name, hash, "'" + path + "' (" + std::to_string(bytes.size()) + " bytes, contents " + hash + ")"};
}

std::vector<Setting> settings_of_this_rank() {
  std::vector<Setting> all;
  for (const char* var : kSteering) {
    const std::string v = value_of(var);
    all.push_back({var, v, v});
  }
  // Any other LIBCOMM_* variable (a misspelt one included) is compared as one setting.
  std::vector<std::string> others;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (!kv.starts_with("LIBCOMM_")) continue;
    const std::string_view name = kv.substr(0, kv.find('='));
    const auto known = [&](const auto& list) {
      return std::any_of(std::begin(list), std::end(list), [&](const char* v) { return name == v; });
    };
    if (!known(kSteering) && !known(kRankLocal)) others.emplace_back(kv);
  }
  std::sort(others.begin(), others.end());
  std::string rest;
  for (const auto& kv : others) rest += (rest.empty() ? "" : " ") + kv;
  if (rest.empty()) rest = "(none)";
  all.push_back({"the other LIBCOMM_* variables", rest, rest});
  all.push_back(file_setting("the tuning table", settings_file("LIBCOMM_TUNING", ".tune").path));
  all.push_back(file_setting("the cost model file", settings_file("LIBCOMM_MODEL", ".model").path));
  return all;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> steering_settings() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : settings_of_this_rank()) out.emplace_back(s.name, s.shown);
  return out;
}

void require_same_settings(MPI_Comm comm) {
  const std::vector<Setting> mine = settings_of_this_rank();
  const std::size_t n = mine.size();  // the same list on every rank
  // One all-reduce: the maximum of each hash and of its complement; they agree everywhere
  // exactly when the smallest and largest hash are equal.
  std::vector<std::uint64_t> v(2 * n);
  for (std::size_t k = 0; k < n; ++k) {
    v[2 * k] = fnv1a(mine[k].compared);
    v[2 * k + 1] = ~v[2 * k];
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, MPI_MAX, comm),
            "MPI_Allreduce");
  std::size_t k = 0;
  while (k < n && v[2 * k] == ~v[2 * k + 1]) ++k;
  if (k == n) return;
  // They differ: every rank learns every rank's value of that setting, so that every rank
  // names the same two ranks.
  int p = 0;
  check_mpi(MPI_Comm_size(comm, &p), "MPI_Comm_size");
  const std::string text = mine[k].compared + '\n' + mine[k].shown;
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(p)), starts(static_cast<std::size_t>(p));
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm), "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < p; ++r) starts[static_cast<std::size_t>(r)] = total, total += lengths[static_cast<std::size_t>(r)];
  std::string every(static_cast<std::size_t>(total), '\0');
  check_mpi(MPI_Allgatherv(text.data(), length, MPI_CHAR, every.data(), lengths.data(), starts.data(), MPI_CHAR,
                           comm),
            "MPI_Allgatherv");
  const auto at = [&](int r) {
    return every.substr(static_cast<std::size_t>(starts[static_cast<std::size_t>(r)]),
                        static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]));
  };
  const auto compared = [](const std::string& t) { return t.substr(0, t.find('\n')); };
  const auto shown = [](const std::string& t) { return t.substr(t.find('\n') + 1); };
  int other = 1;
  while (other < p && compared(at(other)) == compared(at(0))) ++other;
  if (other == p) other = p - 1;  // (a hash collision of two different texts: cannot happen in practice)
  throw SettingsDiffer("settings differ between the ranks of a communicator of " + std::to_string(p) +
                       " ranks: " + mine[k].name + " is " + shown(at(0)) + " on rank 0 but " + shown(at(other)) +
                       " on rank " + std::to_string(other) +
                       " (every rank must run with the same LIBCOMM_* variables, tuning table and cost model)");
}

}  // namespace libcomm::detail
