// The tests' slowdown switch (LIBCOMM_TEST_SLOW, read once, or set by a test program).
#include <atomic>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <vector>

#include "driver.hpp"

namespace libcomm::detail {

namespace {

struct Slowdown {
  std::string op, algo;
  double seconds = 0;
  int rank = -1;  // -1: every rank
};

std::vector<Slowdown> parse_slowdowns(const char* v) {
  std::vector<Slowdown> out;
  if (v == nullptr || *v == '\0') return out;
  std::stringstream items(v);
  for (std::string item; std::getline(items, item, ',');) {
    std::vector<std::string> f;
    std::stringstream fields(item);
    for (std::string x; std::getline(fields, x, ':');) f.push_back(x);
    Slowdown s;
    try {
      if (f.size() < 3 || f.size() > 4) throw std::invalid_argument("fields");
      s.op = f[0];
      s.algo = f[1];
      s.seconds = std::stod(f[2]);
      if (f.size() == 4) s.rank = std::stoi(f[3]);
      if (!(s.seconds >= 0)) throw std::invalid_argument("negative");
    } catch (const std::exception&) {
      throw Error("LIBCOMM_TEST_SLOW: '" + item + "' is not op:algorithm:seconds[:rank]");
    }
    out.push_back(s);
  }
  return out;
}

// (At start-up nothing can report an Error: a malformed switch is said on stderr and ignored.)
std::vector<Slowdown> slowdowns_from_env() {
  try {
    return parse_slowdowns(setting_text(Setting::TestSlow).c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "libcomm: %s (ignored)\n", e.what());
    return {};
  }
}

std::mutex g_slow_mutex;
std::vector<Slowdown> g_slow = slowdowns_from_env();
std::atomic<bool> g_any_slow{!g_slow.empty()};

}  // namespace

double test_slowdown(std::string_view op, std::string_view algo, int rank) {
  if (!g_any_slow.load(std::memory_order_relaxed)) return 0;  // (one load on the hot path)
  std::lock_guard lock(g_slow_mutex);
  for (const Slowdown& s : g_slow)
    if (s.op == op && s.algo == algo && (s.rank < 0 || s.rank == rank)) return s.seconds;
  return 0;
}

void set_test_slowdown(const std::string& spec) {
  std::lock_guard lock(g_slow_mutex);
  g_slow = parse_slowdowns(spec.c_str());
  g_any_slow.store(!g_slow.empty(), std::memory_order_relaxed);
}

}  // namespace libcomm::detail
