// The local dense kernels of matvec (Eigen underneath) against plain loops, and the seeded
// generator every rank uses to regenerate its part of the matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/dense.hpp"

namespace {

TEST(DenseKernels, SeededValuesAreDeterministicAndSpread) {
  double sum = 0, lo = 1, hi = -1;
  for (std::uint64_t i = 0; i < 200; ++i)
    for (std::uint64_t j = 0; j < 50; ++j) {
      const double v = kernels::seeded_value(1, 1, i, j);
      EXPECT_EQ(v, kernels::seeded_value(1, 1, i, j));
      ASSERT_GE(v, -1.0);
      ASSERT_LT(v, 1.0);
      sum += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  EXPECT_LT(std::abs(sum / 10000), 0.03);
  EXPECT_LT(lo, -0.99);
  EXPECT_GT(hi, 0.99);
  // Seed, stream and both indices all matter; (i, j) is not symmetric.
  EXPECT_NE(kernels::seeded_value(1, 1, 3, 4), kernels::seeded_value(2, 1, 3, 4));
  EXPECT_NE(kernels::seeded_value(1, 1, 3, 4), kernels::seeded_value(1, 2, 3, 4));
  EXPECT_NE(kernels::seeded_value(1, 1, 3, 4), kernels::seeded_value(1, 1, 4, 3));
}

TEST(DenseKernels, SeededBlockMatchesEntriesAndKeepsPadding) {
  const std::size_t rows = 5, cols = 4, ld = 7;
  std::vector<double> a(ld * cols, 42.0);
  kernels::fill_seeded_block(a.data(), rows, cols, ld, 9, 1, 10, 20);
  for (std::size_t c = 0; c < cols; ++c)
    for (std::size_t r = 0; r < ld; ++r)
      EXPECT_EQ(a[r + c * ld], r < rows ? kernels::seeded_value(9, 1, 10 + r, 20 + c) : 42.0);
}

struct Shape {
  std::size_t rows, cols, ld;
};
const Shape kShapes[] = {{1, 1, 1}, {3, 5, 3}, {5, 3, 8}, {17, 13, 17}, {0, 4, 1}, {4, 0, 4}, {64, 70, 65}};

std::vector<double> block(const Shape& s) {
  std::vector<double> a(std::max<std::size_t>(1, s.ld * s.cols));
  kernels::fill_seeded_block(a.data(), s.rows, s.cols, s.ld, 3, 1, 0, 0);
  return a;
}
std::vector<double> vec(std::size_t n, std::uint64_t stream) {
  std::vector<double> v(n + 1);
  for (std::size_t k = 0; k < n; ++k) v[k] = kernels::seeded_value(3, stream, k, 0);
  return v;
}

TEST(DenseKernels, GemvMatchesLoops) {
  for (const auto& s : kShapes) {
    const auto a = block(s);
    const auto x = vec(s.cols, 2);
    std::vector<double> y(s.rows + 1, NAN);
    kernels::gemv(a.data(), s.rows, s.cols, s.ld, x.data(), y.data());
    for (std::size_t r = 0; r < s.rows; ++r) {
      double want = 0;
      for (std::size_t c = 0; c < s.cols; ++c) want += a[r + c * s.ld] * x[c];
      EXPECT_NEAR(y[r], want, 1e-13) << s.rows << "x" << s.cols;
    }
    EXPECT_TRUE(std::isnan(y[s.rows])) << "wrote past the end";
  }
}

TEST(DenseKernels, TransposedGemvMatchesLoops) {
  for (const auto& s : kShapes) {
    const auto a = block(s);
    const auto x = vec(s.rows, 2);
    std::vector<double> y(s.cols + 1, NAN);
    kernels::gemv_transposed(a.data(), s.rows, s.cols, s.ld, x.data(), y.data());
    for (std::size_t c = 0; c < s.cols; ++c) {
      double want = 0;
      for (std::size_t r = 0; r < s.rows; ++r) want += a[r + c * s.ld] * x[r];
      EXPECT_NEAR(y[c], want, 1e-13) << s.rows << "x" << s.cols;
    }
    EXPECT_TRUE(std::isnan(y[s.cols]));
  }
}

TEST(DenseKernels, Rank1UpdateMatchesLoopsAndKeepsPadding) {
  for (const auto& s : kShapes) {
    auto a = block(s);
    const auto before = a;
    const auto y = vec(s.rows, 4), x = vec(s.cols, 5);
    kernels::rank1_update(a.data(), s.rows, s.cols, s.ld, y.data(), x.data());
    for (std::size_t c = 0; c < s.cols; ++c)
      for (std::size_t r = 0; r < s.ld; ++r) {
        const double want = r < s.rows ? before[r + c * s.ld] + y[r] * x[c] : before[r + c * s.ld];
        EXPECT_NEAR(a[r + c * s.ld], want, 1e-15);
      }
  }
}

// The column partition of s. 2: the sum of the local products of column blocks is the
// product (what the reduce-scatter adds up).
TEST(DenseKernels, ColumnBlocksSumToTheProduct) {
  const std::size_t m = 11, n = 20;
  std::vector<double> a(m * n);
  kernels::fill_seeded_block(a.data(), m, n, m, 5, 1, 0, 0);
  const auto x = vec(n, 2);
  std::vector<double> y(m), sum(m, 0.0), part(m);
  kernels::gemv(a.data(), m, n, m, x.data(), y.data());
  for (std::size_t c0 : {0u, 7u, 8u, 15u}) {
    const std::size_t c1 = c0 == 0 ? 7 : (c0 == 7 ? 8 : (c0 == 8 ? 15 : 20));
    kernels::gemv(a.data() + c0 * m, m, c1 - c0, m, x.data() + c0, part.data());
    for (std::size_t r = 0; r < m; ++r) sum[r] += part[r];
  }
  for (std::size_t r = 0; r < m; ++r) EXPECT_NEAR(sum[r], y[r], 1e-13);
}

}  // namespace
