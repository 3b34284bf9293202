// Helpers shared by the mini-apps: size parsing and the validation patterns.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/error.hpp"

namespace {

TEST(ParseSize, AcceptsPlainNumbersAndBinarySuffixes) {
  EXPECT_EQ(apps::parse_size("0", "--min"), 0u);
  EXPECT_EQ(apps::parse_size("4096", "--min"), 4096u);
  EXPECT_EQ(apps::parse_size("64K", "--min"), 65536u);
  EXPECT_EQ(apps::parse_size("64KiB", "--min"), 65536u);
  EXPECT_EQ(apps::parse_size("64k", "--min"), 65536u);
  EXPECT_EQ(apps::parse_size("1M", "--min"), std::size_t{1} << 20);
  EXPECT_EQ(apps::parse_size("1MiB", "--min"), std::size_t{1} << 20);
  EXPECT_EQ(apps::parse_size("2G", "--min"), std::size_t{2} << 30);
  EXPECT_EQ(apps::parse_size("2GiB", "--min"), std::size_t{2} << 30);
  EXPECT_EQ(apps::parse_size("12B", "--min"), 12u);
  EXPECT_EQ(apps::parse_size("007", "--min"), 7u);
}

TEST(ParseSize, RejectsWhatIsNotASize) {
  for (const char* bad : {"-5", "abc", "12Q", "", "K", "1.5K", " 8", "8 ", "1KiBB", "+3",
                          "99999999999999999999", "99999999999999999G"}) {
    try {
      const std::size_t v = apps::parse_size(bad, "--max");
      ADD_FAILURE() << "'" << bad << "' parsed as " << v;
    } catch (const libcomm::Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("--max"), std::string::npos) << msg;
      EXPECT_NE(msg.find("'" + std::string(bad) + "'"), std::string::npos) << msg;
    }
  }
}

TEST(FormatSize, ReadableUnits) {
  EXPECT_EQ(apps::format_size(0), "0 B");
  EXPECT_EQ(apps::format_size(100), "100 B");
  EXPECT_EQ(apps::format_size(1536), "1.5 KiB");
  EXPECT_EQ(apps::format_size(65536), "64 KiB");
  EXPECT_EQ(apps::format_size(std::size_t{1} << 30), "1 GiB");
}

TEST(Median, OddEvenEmpty) {
  EXPECT_EQ(apps::median({}), 0.0);
  EXPECT_EQ(apps::median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(apps::median({4.0, 1.0, 2.0, 3.0}), 2.5);
}

TEST(Pattern, CheckAcceptsWhatFillWrote) {
  for (std::size_t n = 0; n <= 100; ++n) {
    std::vector<std::byte> block(n + 1, std::byte{0x5A});
    apps::fill_pattern(block.data(), 3, 5, n);
    EXPECT_EQ(apps::check_pattern(block.data(), 3, 5, n), n);
    EXPECT_EQ(block[n], std::byte{0x5A}) << "fill_pattern wrote past " << n << " bytes";
  }
}

TEST(Pattern, DetectsASingleFlippedByteAnywhere) {
  for (std::size_t n = 0; n <= 33; ++n) {
    std::vector<std::byte> block(n);
    apps::fill_pattern(block.data(), 2, 7, n);
    for (std::size_t at = 0; at < n; ++at)
      for (std::byte flip : {std::byte{0x01}, std::byte{0x80}, std::byte{0xFF}}) {
        block[at] ^= flip;
        EXPECT_EQ(apps::check_pattern(block.data(), 2, 7, n), at)
            << "size " << n << ", byte " << at << " flipped by " << int(flip);
        block[at] ^= flip;
      }
    EXPECT_EQ(apps::check_pattern(block.data(), 2, 7, n), n);
  }
}

TEST(Pattern, BlocksOfOtherPairsAndShiftsDiffer) {
  const std::size_t n = 64;
  std::vector<std::byte> block(n + 8);
  apps::fill_pattern(block.data(), 1, 2, n);
  EXPECT_LT(apps::check_pattern(block.data(), 2, 1, n), n);  // wrong pair
  EXPECT_LT(apps::check_pattern(block.data(), 1, 3, n), n);
  EXPECT_LT(apps::check_pattern(block.data(), 0, 2, n), n);
  EXPECT_LT(apps::check_pattern(block.data() + 8, 1, 2, n), n);  // shifted by a word
  EXPECT_LT(apps::check_pattern(block.data() + 1, 1, 2, n - 1), n - 1);  // shifted by a byte
  EXPECT_EQ(apps::pattern_word(1, 2, 0), apps::pattern_word(1, 2, 0));
  EXPECT_NE(apps::pattern_word(1, 2, 0), apps::pattern_word(1, 2, 1));
  EXPECT_NE(apps::pattern_word(0, 1, 0), apps::pattern_word(1, 0, 0));
}

}  // namespace
