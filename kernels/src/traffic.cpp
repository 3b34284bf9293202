#include "kernels/traffic.hpp"
#include "splitmix.hpp"

#include <algorithm>
#include <stdexcept>

namespace kernels {

namespace {

std::uint64_t entry_hash(std::uint64_t seed, int i, int j, std::uint64_t salt) {
  return detail::splitmix64(detail::splitmix64(seed ^ (salt << 56)) ^
             (static_cast<std::uint64_t>(static_cast<std::uint32_t>(i)) << 32) ^
             static_cast<std::uint32_t>(j));
}

double unit(std::uint64_t h) {
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

int ceil_sqrt(int p) {
  int c = 1;
  while (c * c < p) ++c;
  return c;
}

std::uint64_t message_base(int src, int dst) {
  return detail::splitmix64((static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) ^
             static_cast<std::uint32_t>(dst));
}

inline std::byte element_byte(std::uint64_t base, std::uint64_t g) {
  return static_cast<std::byte>(((base ^ (g * 0x9e3779b97f4a7c15ULL)) >> 29) & 0xff);
}

}  // namespace

const std::vector<std::pair<std::string_view, TrafficPattern>>& traffic_patterns() {
  static const std::vector<std::pair<std::string_view, TrafficPattern>> all = {
      {"pattern1", TrafficPattern::Pattern1},  {"pattern2", TrafficPattern::Pattern2},
      {"uniform", TrafficPattern::Uniform},    {"skewed", TrafficPattern::Skewed},
      {"many_zero", TrafficPattern::ManyZero}, {"all_zero", TrafficPattern::AllZero}};
  return all;
}

std::string_view traffic_pattern_name(TrafficPattern p) {
  for (const auto& [n, q] : traffic_patterns())
    if (q == p) return n;
  return "?";
}

TrafficPattern traffic_pattern_from_name(std::string_view name) {
  std::string valid;
  for (const auto& [n, q] : traffic_patterns()) {
    if (n == name) return q;
    valid += (valid.empty() ? "" : ", ") + std::string(n);
  }
  throw std::invalid_argument("unknown traffic pattern '" + std::string(name) +
                              "' (valid: " + valid + ")");
}

int transpose_partner(int i, int p) {
  const int c = ceil_sqrt(p);
  const int j = (i % c) * c + i / c;
  return j < p ? j : i;
}

std::vector<std::int64_t> traffic_matrix(const TrafficSpec& spec, int p) {
  if (p <= 0) throw std::invalid_argument("traffic_matrix: P must be positive");
  if (spec.mmax < 0 || spec.small < 0) throw std::invalid_argument("traffic_matrix: negative size");
  const auto up = static_cast<std::size_t>(p);
  std::vector<std::int64_t> m(up * up, 0);
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) {
      std::int64_t& v = m[static_cast<std::size_t>(i) * up + static_cast<std::size_t>(j)];
      const std::uint64_t h = entry_hash(spec.seed, i, j, 1);
      switch (spec.pattern) {
        case TrafficPattern::Pattern1:
        case TrafficPattern::Pattern2: {
          const int spike = spec.pattern == TrafficPattern::Pattern1
                                ? static_cast<int>(entry_hash(spec.seed, i, -1, 2) % up)
                                : transpose_partner(i, p);
          v = j == spike ? spec.mmax
                         : static_cast<std::int64_t>(
                               h % static_cast<std::uint64_t>(std::min(spec.small, spec.mmax) + 1));
          break;
        }
        case TrafficPattern::Uniform:
          v = spec.mmax;
          break;
        case TrafficPattern::Skewed: {
          const double u = unit(h);
          v = static_cast<std::int64_t>(static_cast<double>(spec.mmax) * u * u * u * u);
          break;
        }
        case TrafficPattern::ManyZero:
          v = unit(h) < spec.zero_fraction || spec.mmax == 0
                  ? 0
                  : 1 + static_cast<std::int64_t>(entry_hash(spec.seed, i, j, 3) %
                                                  static_cast<std::uint64_t>(spec.mmax));
          break;
        case TrafficPattern::AllZero:
          v = 0;
          break;
      }
    }
  return m;
}

void fill_elements(std::byte* out, int src, int dst, std::int64_t first, std::int64_t n,
                   std::size_t esize) {
  const std::uint64_t base = message_base(src, dst);
  const std::uint64_t g0 = static_cast<std::uint64_t>(first) * esize;
  const std::uint64_t bytes = static_cast<std::uint64_t>(n) * esize;
  for (std::uint64_t b = 0; b < bytes; ++b) out[b] = element_byte(base, g0 + b);
}

std::int64_t check_elements(const std::byte* in, int src, int dst, std::int64_t first,
                            std::int64_t n, std::size_t esize) {
  const std::uint64_t base = message_base(src, dst);
  const std::uint64_t g0 = static_cast<std::uint64_t>(first) * esize;
  const std::uint64_t bytes = static_cast<std::uint64_t>(n) * esize;
  for (std::uint64_t b = 0; b < bytes; ++b)
    if (in[b] != element_byte(base, g0 + b)) return static_cast<std::int64_t>(b / esize);
  return n;
}

}  // namespace kernels
