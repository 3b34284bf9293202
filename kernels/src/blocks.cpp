#include "kernels/blocks.hpp"

namespace kernels {

void rotate_blocks_up(const std::byte* src, std::byte* dst, std::size_t n, std::size_t shift,
                      std::size_t block) {
  if (n == 0 || block == 0) return;
  shift %= n;
  // Two contiguous copies: src[shift..n) -> dst[0..n-shift), src[0..shift) -> dst[n-shift..n).
  std::memcpy(dst, src + shift * block, (n - shift) * block);
  std::memcpy(dst + (n - shift) * block, src, shift * block);
}

std::size_t count_with_bit(std::size_t n, std::size_t bit) {
  // Full periods of length 2*bit contribute `bit` each; the tail contributes what passes bit.
  const std::size_t period = 2 * bit;
  const std::size_t tail = n % period;
  return (n / period) * bit + (tail > bit ? tail - bit : 0);
}

std::size_t pack_blocks_with_bit(const std::byte* blocks, std::byte* packed, std::size_t n,
                                 std::size_t bit, std::size_t block) {
  std::size_t out = 0;
  // Runs of `bit` consecutive blocks start at every odd multiple of bit.
  for (std::size_t start = bit; start < n; start += 2 * bit) {
    const std::size_t len = (start + bit <= n ? bit : n - start);
    std::memcpy(packed + out * block, blocks + start * block, len * block);
    out += len;
  }
  return out;
}

std::size_t unpack_blocks_with_bit(const std::byte* packed, std::byte* blocks, std::size_t n,
                                   std::size_t bit, std::size_t block) {
  std::size_t in = 0;
  for (std::size_t start = bit; start < n; start += 2 * bit) {
    const std::size_t len = (start + bit <= n ? bit : n - start);
    std::memcpy(blocks + start * block, packed + in * block, len * block);
    in += len;
  }
  return in;
}

}  // namespace kernels
