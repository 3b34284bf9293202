// Binary-cube helpers of paper 004: Gray code (s. 3, Table 1), the d-cycles exchange
// formulas (s. 4.2.1, 4.2.3), single-cycle reordering (s. 4.1) and the subblock
// partitioning of Fig. 20 (s. 4.2.4).
#include <bit>

#include "cycles.hpp"
#include "libcomm/error.hpp"

namespace libcomm::cube {

std::uint32_t gray_inverse(std::uint32_t g) {
  std::uint32_t x = g;
  for (std::uint32_t s = g >> 1; s != 0; s >>= 1) x ^= s;
  return x;
}

int log2_exact(int p) {
  if (p <= 0 || !std::has_single_bit(static_cast<unsigned>(p))) return -1;
  return std::countr_zero(static_cast<unsigned>(p));
}

std::vector<int> transition_sequence(int d) {
  require(d >= 0 && d < 31, "transition_sequence: d = " + std::to_string(d) + " out of range");
  std::vector<int> t;
  const std::uint32_t n = 1u << d;
  for (std::uint32_t u = 0; u + 1 < n; ++u) {
    // Consecutive Gray codes differ in exactly one bit.
    t.push_back(std::countr_zero(gray(u) ^ gray(u + 1)));
  }
  return t;
}

std::uint32_t rotate_left(std::uint32_t x, int i, int d) {
  if (d == 0) return x;
  i %= d;
  const std::uint32_t mask = (d >= 32) ? ~0u : ((1u << d) - 1);
  x &= mask;
  if (i == 0) return x;
  return ((x << i) | (x >> (d - i))) & mask;
}

int dcycles_dim(int d, int u, int i) {
  // t_u = index of the lowest set bit of u + 1 (the Gray-code transition sequence).
  return (std::countr_zero(static_cast<unsigned>(u + 1)) + i) % d;
}

std::uint32_t dcycles_broadcast_origin(int d, std::uint32_t pa, int j, int i) {
  return pa ^ rotate_left(gray(static_cast<std::uint32_t>(j)), i, d);
}

std::uint32_t dcycles_reduce_sender(int d, std::uint32_t j, int i, int u) {
  const std::uint32_t n = 1u << d;
  return j ^ rotate_left(gray(n - 1 - static_cast<std::uint32_t>(u)), i, d);
}

std::uint32_t dcycles_reduce_receiver(int d, std::uint32_t j, int i, int u) {
  const std::uint32_t n = 1u << d;
  return j ^ rotate_left(gray(n - 2 - static_cast<std::uint32_t>(u)), i, d);
}

std::uint32_t ring_origin(NodeOrder order, int p, std::uint32_t pa, int s) {
  if (order == NodeOrder::Binary) return (pa + static_cast<std::uint32_t>(s)) % static_cast<std::uint32_t>(p);
  return gray((static_cast<std::uint32_t>(s) + gray_inverse(pa)) % static_cast<std::uint32_t>(p));
}

std::uint32_t ring_reduce_block(NodeOrder order, int p, std::uint32_t pa, int s) {
  const auto n = static_cast<std::uint32_t>(p);
  const std::uint32_t q = order == NodeOrder::Gray ? gray_inverse(pa) : pa;
  const std::uint32_t pos = (q + n * 2 - static_cast<std::uint32_t>(s) % n) % n;
  return order == NodeOrder::Gray ? gray(pos) : pos;
}

Part subblock(std::size_t n, int parts, int i) {
  if (parts <= 1) return {0, n};
  const auto d = static_cast<std::size_t>(parts);
  const auto k = static_cast<std::size_t>(i);
  const std::size_t beta = (n + d - 1) / d;  // ceil(n / d)
  if (beta == 0) return {0, 0};
  const std::size_t gamma = n - d * (beta - 1);  // subblocks of beta elements
  if (k < gamma) return {k * beta, beta};
  return {gamma * beta + (k - gamma) * (beta - 1), beta - 1};
}

std::vector<std::size_t> consecutive_counts(std::size_t m, int p) {
  require(p > 0, "consecutive_counts: P must be positive");
  std::vector<std::size_t> c(static_cast<std::size_t>(p), 0);
  if (m == 0) return c;
  const std::size_t per = (m + c.size() - 1) / c.size();
  const std::size_t alpha = m / per;
  for (std::size_t k = 0; k < alpha; ++k) c[k] = per;
  if (alpha < c.size()) c[alpha] = m - alpha * per;
  return c;
}

}  // namespace libcomm::cube

namespace libcomm::detail {

int ring_position(NodeOrder order, int rank) {
  return order == NodeOrder::Gray ? static_cast<int>(cube::gray_inverse(static_cast<std::uint32_t>(rank))) : rank;
}

int ring_node(NodeOrder order, int p, int q) {
  q = ((q % p) + p) % p;
  return order == NodeOrder::Gray ? static_cast<int>(cube::gray(static_cast<std::uint32_t>(q))) : q;
}

}  // namespace libcomm::detail
