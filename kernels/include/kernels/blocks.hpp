// Block moves used by communication algorithms and apps: local work, no MPI.
#pragma once

#include <cstddef>
#include <cstring>

namespace kernels {

// dst[k] = src[(k + shift) mod n] for n blocks of `block` bytes (Bruck's initial rotation
// uses shift = rank). src and dst must not overlap.
void rotate_blocks_up(const std::byte* src, std::byte* dst, std::size_t n, std::size_t shift,
                      std::size_t block);

// Packs the blocks k = 0..n-1 whose index has bit `bit` set into consecutive slots of
// `packed`; returns how many were packed. unpack_blocks_with_bit is its inverse.
std::size_t pack_blocks_with_bit(const std::byte* blocks, std::byte* packed, std::size_t n,
                                 std::size_t bit, std::size_t block);
std::size_t unpack_blocks_with_bit(const std::byte* packed, std::byte* blocks, std::size_t n,
                                   std::size_t bit, std::size_t block);

// Number of k in [0, n) with (k & bit) != 0.
std::size_t count_with_bit(std::size_t n, std::size_t bit);

}  // namespace kernels
