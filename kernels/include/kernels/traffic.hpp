// Traffic patterns of irregular all-to-all exchanges (paper 001, Fig. 14, plus the usual
// stress cases) as P x P matrices of element counts, and deterministic element contents
// for byte-exact validation. Local work, no MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kernels {

enum class TrafficPattern {
  Pattern1,  // one spike: each node sends Mmax elements to one random node, `small` elsewhere
  Pattern2,  // 2-D transpose spike: node i sends Mmax to its mirror across the diagonal
  Uniform,   // Mmax elements everywhere (a regular all-to-all)
  Skewed,    // seeded random, heavy-tailed: floor(Mmax * u^4), u uniform in [0, 1)
  ManyZero,  // seeded random: zero with probability zero_fraction, else 1 .. Mmax
  AllZero,   // nothing moves
};

struct TrafficSpec {
  TrafficPattern pattern = TrafficPattern::Pattern1;
  std::int64_t mmax = 1024;    // elements of the longest message (M_max)
  std::int64_t small = 8;      // Pattern1/2: the other messages hold 0 .. small elements
  std::uint64_t seed = 1;      // random choices (spike destinations, sizes)
  double zero_fraction = 0.8;  // ManyZero
};

// Name <-> pattern: "pattern1", "pattern2", "uniform", "skewed", "many_zero", "all_zero".
const std::vector<std::pair<std::string_view, TrafficPattern>>& traffic_patterns();
std::string_view traffic_pattern_name(TrafficPattern p);
// Throws std::invalid_argument naming the value and listing the valid names.
TrafficPattern traffic_pattern_from_name(std::string_view name);

// counts[i * P + j]: elements node i sends to node j. The same on every rank for the
// same spec and P (each entry depends only on seed, i and j).
std::vector<std::int64_t> traffic_matrix(const TrafficSpec& spec, int nprocs);

// Pattern2's partner of node i: with C = ceil(sqrt P) columns, node (x, y) = x * C + y
// sends to (y, x); when the mirror does not exist (P not a square), to itself.
int transpose_partner(int i, int nprocs);

// Element t of message (src, dst) holds esize bytes determined by (src, dst, t).
void fill_elements(std::byte* out, int src, int dst, std::int64_t first, std::int64_t n,
                   std::size_t esize);
// Index of the first element of `in` (elements first .. first + n - 1 of message
// (src, dst)) that differs from fill_elements, or n when all match.
std::int64_t check_elements(const std::byte* in, int src, int dst, std::int64_t first,
                            std::int64_t n, std::size_t esize);

}  // namespace kernels
