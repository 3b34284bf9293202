// Traffic patterns (kernels/traffic.hpp): the shapes the paper's Fig. 14 defines.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "kernels/traffic.hpp"

namespace {

using kernels::TrafficPattern;
using kernels::TrafficSpec;

TEST(Traffic, Pattern1HasOneSpikePerRowAndSmallElsewhere) {
  for (int p : {1, 2, 7, 16, 61}) {
    TrafficSpec s{TrafficPattern::Pattern1, 1024, 5, 42};
    const auto m = kernels::traffic_matrix(s, p);
    std::set<int> spikes;
    for (int i = 0; i < p; ++i) {
      int big = 0;
      for (int j = 0; j < p; ++j) {
        const auto v = m[i * p + j];
        if (v == 1024) {
          ++big;
          spikes.insert(j);
        } else {
          EXPECT_LE(v, 5) << "P " << p << " i " << i << " j " << j;
        }
      }
      EXPECT_EQ(big, 1) << "P " << p << " row " << i;
    }
    if (p >= 16) {
      EXPECT_GT(spikes.size(), 1u) << "spike destinations are random, not all equal";
    }
  }
}

TEST(Traffic, Pattern2SpikeIsTheTransposePartner) {
  // P = 16: C = 4, node 1 = (0,1) sends to (1,0) = node 4; node 5 = (1,1) to itself.
  EXPECT_EQ(kernels::transpose_partner(1, 16), 4);
  EXPECT_EQ(kernels::transpose_partner(4, 16), 1);
  EXPECT_EQ(kernels::transpose_partner(5, 16), 5);
  // P = 7: C = 3, node 5 = (1,2) mirrors to (2,1) = 7, which does not exist: itself.
  EXPECT_EQ(kernels::transpose_partner(5, 7), 5);
  EXPECT_EQ(kernels::transpose_partner(2, 7), 6);
  const auto m = kernels::traffic_matrix({TrafficPattern::Pattern2, 300, 2, 1}, 16);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(m[i * 16 + kernels::transpose_partner(i, 16)], 300);
}

TEST(Traffic, SeededAndDeterministic) {
  TrafficSpec a{TrafficPattern::Skewed, 1000, 8, 7};
  EXPECT_EQ(kernels::traffic_matrix(a, 9), kernels::traffic_matrix(a, 9));
  TrafficSpec b = a;
  b.seed = 8;
  EXPECT_NE(kernels::traffic_matrix(a, 9), kernels::traffic_matrix(b, 9));
  for (auto v : kernels::traffic_matrix(a, 9)) EXPECT_TRUE(v >= 0 && v < 1000);
}

TEST(Traffic, ManyZeroAndAllZero) {
  const auto m = kernels::traffic_matrix({TrafficPattern::ManyZero, 50, 8, 3, 0.8}, 40);
  int zeros = 0;
  for (auto v : m) {
    zeros += v == 0;
    EXPECT_LE(v, 50);
  }
  EXPECT_GT(zeros, 1000);  // ~80 % of 1600
  EXPECT_LT(zeros, 1500);
  for (auto v : kernels::traffic_matrix({TrafficPattern::AllZero, 50}, 5)) EXPECT_EQ(v, 0);
  for (auto v : kernels::traffic_matrix({TrafficPattern::Uniform, 50}, 5)) EXPECT_EQ(v, 50);
}

TEST(Traffic, NamesRoundTripAndBadNameListsValid) {
  for (const auto& [name, p] : kernels::traffic_patterns())
    EXPECT_EQ(kernels::traffic_pattern_from_name(name), p);
  try {
    kernels::traffic_pattern_from_name("spiky");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("pattern1"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("spiky"), std::string::npos);
  }
}

TEST(Traffic, ElementContentsDependOnSourceDestinationAndIndex) {
  std::vector<std::byte> a(10 * 22), b(10 * 22);
  kernels::fill_elements(a.data(), 1, 2, 0, 10, 22);
  EXPECT_EQ(kernels::check_elements(a.data(), 1, 2, 0, 10, 22), 10);
  EXPECT_EQ(kernels::check_elements(a.data() + 3 * 22, 1, 2, 3, 7, 22), 7);  // a suffix
  EXPECT_LT(kernels::check_elements(a.data(), 2, 1, 0, 10, 22), 10);         // wrong pair
  EXPECT_LT(kernels::check_elements(a.data(), 1, 2, 1, 9, 22), 9);           // shifted
  a[5 * 22 + 3] ^= std::byte{1};
  EXPECT_EQ(kernels::check_elements(a.data(), 1, 2, 0, 10, 22), 5);
}

}  // namespace
