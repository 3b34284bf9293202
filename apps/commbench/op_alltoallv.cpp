// commbench --op alltoallv: the irregular all-to-all (libcomm/alltoallv.hpp, paper 001).
// Counts come from a traffic pattern (kernels/traffic.hpp); the size of a row of the
// table is M_max in bytes (the longest message), i.e. M_max = block / element size
// elements. Algorithms are timed as NAME/MODE (b, n1, n2); every run is compared byte for
// byte with the result of MPI_Alltoallv computed (untimed) when the size is prepared.
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "apps/common.hpp"
#include "kernels/traffic.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/cost_model.hpp"
#include "operation.hpp"

namespace commbench {
namespace {

using libcomm::AlltoallvAlgo;
using libcomm::AlltoallvMode;

std::string g_pattern = "pattern1", g_modes = "b,n1,n2";
std::size_t g_elem = 48;
std::uint64_t g_seed = 1;
std::int64_t g_small = 8;
std::string g_predict;  // --predict PLATFORM or file:PATH

// --modes: "b,n1,n2" -> the modes; an empty list or an unknown or empty name is an error.
std::vector<libcomm::AlltoallvMode> modes_of(const std::string& text) {
  std::vector<libcomm::AlltoallvMode> modes;
  std::stringstream ss(text);
  std::string m;
  while (std::getline(ss, m, ',')) modes.push_back(libcomm::alltoallv_mode_from_name(m));
  libcomm::require(!modes.empty() && text.back() != ',', "'" + text + "' is not a list of modes b, n1, n2");
  return modes;
}

bool is_square(int p) {
  int q = 0;
  while ((q + 1) * (q + 1) <= p) ++q;
  return q * q == p;
}

class AlltoallvOp : public Operation {
 public:
  AlltoallvOp(const libcomm::Comm& comm, const Settings& s)
      : Operation("alltoallv"), comm_(comm), allow_fallback_(!s.no_fallback) {
    try {
      spec_.pattern = kernels::traffic_pattern_from_name(g_pattern);
    } catch (const std::invalid_argument& e) {
      throw libcomm::Error(std::string("--pattern: ") + e.what());
    }
    libcomm::require(g_elem >= 1, "--elem: element size must be at least 1 byte");
    spec_.seed = g_seed;
    spec_.small = g_small;
    modes_ = modes_of(g_modes);
    if (!g_predict.empty()) {
      try {
        platform_ = libcomm::flat_platform_from_name(g_predict);
      } catch (const libcomm::Error& e) {
        throw libcomm::Error(std::string("--predict: ") + e.what());
      }
    }
  }

  double predict_us(const std::string& algo, std::size_t block) const override {
    if (g_predict.empty()) return -1;
    auto spec = spec_;
    spec.mmax = static_cast<std::int64_t>(block / g_elem);
    const auto m = kernels::traffic_matrix(spec, comm_.size());
    const auto [a, mode] = parse(algo);
    return libcomm::predict_alltoallv_us(a, mode, platform_, comm_.size(), m, g_elem);
  }

  double count_spread() const override { return stats_.spread(); }
  double mean_message() const override { return stats_.mean_bytes; }

  // NAME alone: every --modes (native has none).
  std::vector<std::string> expand(const std::string& name) const override {
    const TimedName t = parse_timed(name);
    if (t.algo == "native" || !t.mode.empty()) {
      if (!t.mode.empty()) libcomm::alltoallv_mode_from_name(t.mode);
      return {name};
    }
    std::vector<std::string> names;
    for (auto m : modes_) names.push_back(name + "/" + std::string(libcomm::alltoallv_mode_name(m)));
    return names;
  }
  bool in_all(std::string_view name) const override { return name != "mesh" || is_square(comm_.size()); }

  static std::pair<AlltoallvAlgo, AlltoallvMode> parse(const std::string& name) {
    const TimedName t = parse_timed(name);
    const auto m = t.mode.empty() ? AlltoallvMode::Blocking : libcomm::alltoallv_mode_from_name(t.mode);
    return {libcomm::alltoallv_algo_from_name(t.algo), m};
  }

  void check_applicable(const std::string& algo, std::size_t) const override {
    libcomm::AlltoallvOptions o;
    o.allow_fallback = allow_fallback_;
    // Throws for mesh on a non-square P with --no-fallback.
    const auto a = libcomm::choose_alltoallv(parse(algo).first, comm_.size(), o).algo;
    if (a != AlltoallvAlgo::Native && a != AlltoallvAlgo::Direct) libcomm::alltoallv_schedule(a, comm_.size());
  }

  void prepare(std::size_t block) override {
    const int p = comm_.size(), me = comm_.rank();
    site_ = block;
    spec_.mmax = static_cast<std::int64_t>(block / g_elem);
    const auto m = kernels::traffic_matrix(spec_, p);
    std::vector<std::int64_t> m_bytes(m);
    for (auto& c : m_bytes) c *= static_cast<std::int64_t>(g_elem);
    stats_ = libcomm::alltoallv_count_stats(m_bytes, p);
    sc_.assign(p, 0), sd_.assign(p, 0), rc_.assign(p, 0), rd_.assign(p, 0);
    std::int64_t s = 0, r = 0;
    for (int k = 0; k < p; ++k) {
      sc_[k] = m[static_cast<std::size_t>(me) * p + k], sd_[k] = s, s += sc_[k];
      rc_[k] = m[static_cast<std::size_t>(k) * p + me], rd_[k] = r, r += rc_[k];
    }
    send_.assign(static_cast<std::size_t>(s) * g_elem, std::byte{0});
    for (int k = 0; k < p; ++k)
      kernels::fill_elements(send_.data() + static_cast<std::size_t>(sd_[k]) * g_elem, me, k, 0,
                             sc_[k], g_elem);
    recv_.assign(static_cast<std::size_t>(r) * g_elem, std::byte{0});
    ref_.assign(recv_.size(), std::byte{0});
    for (auto* v : {&sc_, &sd_, &rc_, &rd_})  // libcomm counts bytes
      for (auto& x : *v) x *= static_cast<std::int64_t>(g_elem);
    libcomm::alltoallv(send_.data(), sc_, sd_, ref_.data(), rc_, rd_, comm_, AlltoallvAlgo::Native);
  }

  void reset() override { std::memset(recv_.data(), 0xA5, recv_.size()); }

  std::string run(const std::string& algo, bool checked) override {
    const auto [a, m] = parse(algo);
    libcomm::AlltoallvOptions o;
    o.check_args = checked;
    o.mode = m;
    o.element_bytes = g_elem;  // paper 001 deals elements
    o.allow_fallback = allow_fallback_;
    o.site = site_;  // auto decides once per size (STAR-MPI's call site)
    const auto c = libcomm::alltoallv(send_.data(), sc_, sd_, recv_.data(), rc_, rd_, comm_, a, o);
    return ran(c, c.algo == a ? std::string_view(algo) : libcomm::alltoallv_algo_name(c));
  }

  std::string note(const std::string& algo, std::size_t block) const override {
    const PolicyScope policy(algo);
    const auto a = parse(algo).first;
    if (a == AlltoallvAlgo::Auto) {
      const auto c = libcomm::choose_alltoallv(a, stats_, comm_);
      return "M_max " + apps::format_size(block) + ": " + c.reason();
    }
    libcomm::AlltoallvOptions o;
    o.allow_fallback = allow_fallback_;
    if (const auto c = libcomm::choose_alltoallv(a, comm_.size(), o); c.algo != a) return c.reason();
    return "alltoallv: pattern " + g_pattern + ", element " + std::to_string(g_elem) +
           " B, M_max = " + std::to_string(block / g_elem) + " elements (block = M_max in bytes)";
  }

  long long check(const std::string& algo) override {
    const int p = comm_.size(), me = comm_.rank();
    long long bad = 0;
    for (int k = 0; k < p; ++k) {
      const auto at = static_cast<std::size_t>(rd_[k]), len = static_cast<std::size_t>(rc_[k]);  // bytes
      const bool same = len == 0 || std::memcmp(recv_.data() + at, ref_.data() + at, len) == 0;
      const auto elements = rc_[k] / static_cast<std::int64_t>(g_elem);
      const bool content = kernels::check_elements(recv_.data() + at, k, me, 0, elements, g_elem) == elements;
      if (!same || !content) {
        if (bad == 0)
          std::cerr << "commbench: rank " << me << ": alltoallv " << algo << " data from rank " << k
                    << (same ? " has wrong contents" : " differs from MPI_Alltoallv") << "\n";
        ++bad;
      }
    }
    return bad;
  }

 private:
  const libcomm::Comm& comm_;
  bool allow_fallback_ = true;  // !--no-fallback
  kernels::TrafficSpec spec_;
  libcomm::FlatPlatform platform_;
  std::vector<AlltoallvMode> modes_;
  libcomm::AlltoallvCountStats stats_;  // of the prepared counts: what auto decides on
  std::uint64_t site_ = 0;              // the prepared size: auto's site
  std::vector<std::int64_t> sc_, sd_, rc_, rd_;
  std::vector<std::byte> send_, recv_, ref_;
};

const Registrar registrar(
    "alltoallv",
    {"irregular all-to-all (paper 001): counts from a traffic pattern; sizes are M_max in bytes",
     [](CLI::App& app) {
       std::vector<std::string> names;
       for (const auto& [n, p] : kernels::traffic_patterns()) names.emplace_back(n);
       app.add_option("--pattern", g_pattern, "alltoallv: traffic pattern")
           ->check(CLI::IsMember(names))
           ->capture_default_str();
       app.add_option("--elem", g_elem,
                      "alltoallv: element size in bytes (the paper: 48 on T3D, 22 on SP2)")
           ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
           ->capture_default_str();
       app.add_option("--modes", g_modes, "alltoallv: modes timed for each algorithm: b, n1, n2")
           ->check(CLI::Validator(
               [](std::string& text) -> std::string {  // checked whatever --op is
                 try {
                   modes_of(text);
                 } catch (const libcomm::Error& e) {
                   return e.what();
                 }
                 return {};
               },
               "MODES"))
           ->capture_default_str();
       app.add_option(
           "--predict", g_predict,
           "alltoallv: also print the flat model's prediction (paper 001 s. 2, Theorem 2 "
           "method) for a Table 1 platform (CM5, SP2, T3D, T3E, Myrinet) or for "
           "file:PATH, a platform measured by commbench --calibrate PATH")
           ->check(CLI::Validator(
               [](std::string& text) -> std::string {
                 try {
                   (void)libcomm::flat_platform_from_name(text);
                 } catch (const libcomm::Error& e) {
                   return e.what();
                 }
                 return {};
               },
               "PLATFORM"));
       app.add_option("--seed", g_seed, "alltoallv: seed of the random pattern choices")
           ->check(apps::seed_number())
           ->capture_default_str();
       app.add_option("--small", g_small,
                      "alltoallv: pattern1/2: other messages hold 0..SMALL elements")
           ->check(apps::number_in(0, 1 << 20))
           ->capture_default_str();
     },
     make_operation<AlltoallvOp>});

}  // namespace
}  // namespace commbench
