// Block-moving kernels used by Bruck's algorithm, against brute-force references.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/blocks.hpp"

namespace {

// n blocks of `block` bytes; every byte names its block and offset.
std::vector<std::byte> numbered_blocks(std::size_t n, std::size_t block) {
  std::vector<std::byte> v(n * block);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < block; ++i) v[k * block + i] = std::byte((k * 31 + i * 7 + 1) & 0xff);
  return v;
}

bool same_block(const std::byte* a, const std::byte* b, std::size_t block) {
  return std::memcmp(a, b, block) == 0;
}

const std::vector<std::size_t> kBits = {1, 2, 4, 8, 16, 32, 64};

TEST(Kernels, RotateBlocksUp) {
  for (std::size_t block : {1, 3, 8}) {
    for (std::size_t n = 1; n <= 20; ++n) {
      const auto src = numbered_blocks(n, block);
      for (std::size_t shift = 0; shift <= 2 * n + 1; ++shift) {
        std::vector<std::byte> dst(n * block, std::byte{0xEE});
        kernels::rotate_blocks_up(src.data(), dst.data(), n, shift, block);
        for (std::size_t k = 0; k < n; ++k)
          EXPECT_TRUE(same_block(dst.data() + k * block, src.data() + ((k + shift) % n) * block,
                                 block))
              << "n = " << n << ", shift = " << shift << ", slot " << k << ", block " << block;
      }
    }
  }
  // Zero blocks or zero block size: nothing is touched.
  std::byte guard{0x42};
  kernels::rotate_blocks_up(nullptr, &guard, 0, 3, 8);
  kernels::rotate_blocks_up(nullptr, &guard, 5, 3, 0);
  EXPECT_EQ(guard, std::byte{0x42});
}

TEST(Kernels, CountWithBitMatchesBruteForce) {
  for (std::size_t n = 0; n <= 70; ++n)
    for (std::size_t bit : kBits) {
      std::size_t expected = 0;
      for (std::size_t k = 0; k < n; ++k) expected += (k & bit) != 0;
      EXPECT_EQ(kernels::count_with_bit(n, bit), expected) << "n = " << n << ", bit = " << bit;
    }
}

TEST(Kernels, PackAndUnpackBlocksWithBitRoundTrip) {
  for (std::size_t block : {1, 5, 16})
    for (std::size_t n = 1; n <= 70; ++n) {
      const auto blocks = numbered_blocks(n, block);
      for (std::size_t bit : kBits) {
        const std::string where = "n = " + std::to_string(n) + ", bit = " + std::to_string(bit) +
                                  ", block = " + std::to_string(block);
        std::vector<std::byte> packed(n * block, std::byte{0xEE});
        const std::size_t k = kernels::pack_blocks_with_bit(blocks.data(), packed.data(), n, bit, block);
        ASSERT_EQ(k, kernels::count_with_bit(n, bit)) << where;
        // Packed slots hold exactly the blocks with the bit set, in increasing order.
        std::size_t slot = 0;
        for (std::size_t j = 0; j < n; ++j)
          if (j & bit) {
            EXPECT_TRUE(same_block(packed.data() + slot * block, blocks.data() + j * block, block))
                << where << ": slot " << slot << " should hold block " << j;
            ++slot;
          }
        // The rest of `packed` is untouched.
        for (std::size_t i = k * block; i < packed.size(); ++i)
          ASSERT_EQ(packed[i], std::byte{0xEE}) << where << ": pack wrote past its blocks";
        // Unpacking into a blank array restores those blocks and leaves the others alone.
        std::vector<std::byte> restored(n * block, std::byte{0xDD});
        EXPECT_EQ(kernels::unpack_blocks_with_bit(packed.data(), restored.data(), n, bit, block), k)
            << where;
        for (std::size_t j = 0; j < n; ++j) {
          if (j & bit) {
            EXPECT_TRUE(same_block(restored.data() + j * block, blocks.data() + j * block, block))
                << where << ": block " << j;
          } else {
            for (std::size_t i = 0; i < block; ++i)
              ASSERT_EQ(restored[j * block + i], std::byte{0xDD}) << where << ": block " << j;
          }
        }
      }
    }
}

}  // namespace
