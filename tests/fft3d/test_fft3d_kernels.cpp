// The local kernels of fft3d against brute-force references: pack/unpack of row pieces
// (even and uneven pieces, empty pieces, element sizes) and the batched strided FFTW plans
// against a naive DFT.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/fft_pack.hpp"
#include "kernels/fft_plan.hpp"

namespace {

using kernels::cplx;
using kernels::RowPieces;

RowPieces pieces(std::size_t rows, std::size_t row_len, const std::vector<std::size_t>& lens) {
  RowPieces l;
  l.rows = rows;
  l.row_len = row_len;
  std::size_t off = 0, blk = 0;
  for (std::size_t n : lens) {
    l.piece_offset.push_back(off);
    l.piece_len.push_back(n);
    l.block_offset.push_back(blk);
    off += n;
    blk += rows * n;
  }
  return l;
}

TEST(Fft3dKernels, PackMatchesDefinitionAndUnpackInverts) {
  for (const auto& lens : std::vector<std::vector<std::size_t>>{
           {4, 4, 4}, {5, 4, 3}, {0, 7, 0, 5}, {12}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}) {
    const std::size_t rows = 5, row_len = 12;
    RowPieces l = pieces(rows, row_len, lens);
    l.check();
    std::vector<cplx> src(rows * row_len), blocks(rows * row_len, cplx(-1, -1)),
        back(rows * row_len, cplx(-7, 0));
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = cplx(static_cast<double>(i), 0.5);
    kernels::pack_row_pieces(src.data(), blocks.data(), l);
    for (std::size_t d = 0; d < lens.size(); ++d)
      for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < lens[d]; ++j)
          ASSERT_EQ(blocks[l.block_offset[d] + i * lens[d] + j],
                    src[i * row_len + l.piece_offset[d] + j]);
    kernels::unpack_row_pieces(blocks.data(), back.data(), l);
    EXPECT_EQ(back, src);
  }
}

TEST(Fft3dKernels, PiecesWithGapsLeaveTheRestOfTheRowAlone) {
  RowPieces l;
  l.rows = 3;
  l.row_len = 10;
  l.piece_offset = {1, 6};
  l.piece_len = {2, 3};
  l.block_offset = {0, 6};
  std::vector<double> src(30), blocks(15), back(30, -1.0);
  for (std::size_t i = 0; i < 30; ++i) src[i] = static_cast<double>(i);
  kernels::pack_row_pieces(src.data(), blocks.data(), l, sizeof(double));
  EXPECT_EQ(blocks, (std::vector<double>{1, 2, 11, 12, 21, 22, 6, 7, 8, 16, 17, 18, 26, 27, 28}));
  kernels::unpack_row_pieces(blocks.data(), back.data(), l, sizeof(double));
  for (std::size_t i = 0; i < 30; ++i) {
    const std::size_t j = i % 10;
    const bool inside = (j >= 1 && j < 3) || (j >= 6 && j < 9);
    EXPECT_EQ(back[i], inside ? src[i] : -1.0) << i;
  }
}

TEST(Fft3dKernels, CheckRejectsPiecesOutsideTheRow) {
  RowPieces l = pieces(2, 8, {4, 4});
  l.piece_len[1] = 5;
  EXPECT_THROW(l.check(), std::invalid_argument);
  l.piece_len.pop_back();
  EXPECT_THROW(l.check(), std::invalid_argument);
}

// Naive DFT of one line.
std::vector<cplx> dft(const std::vector<cplx>& x, int sign) {
  const std::size_t n = x.size();
  std::vector<cplx> y(n);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t j = 0; j < n; ++j)
      y[k] += x[j] * std::polar(1.0, sign * 2 * M_PI * static_cast<double>(j * k % n) / static_cast<double>(n));
  return y;
}

TEST(Fft3dKernels, StridedBatchedPlanEqualsNaiveDft) {
  // [a][n][b] array, transform along the middle axis (stride b), batch over a and b: the
  // y transform of the pencil decomposition.
  const std::size_t a = 3, n = 6, b = 4;
  kernels::FftBuffer<cplx> buf(a * n * b);
  std::vector<cplx> in(a * n * b);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = cplx(std::sin(1.0 + static_cast<double>(i)), std::cos(0.3 * static_cast<double>(i)));
  const auto sd = [](std::size_t v) { return static_cast<std::ptrdiff_t>(v); };
  auto plan = kernels::FftPlan::dft(kernels::FftKind::Forward, {{sd(n), sd(b), sd(b)}},
                                    {{sd(a), sd(n * b), sd(n * b)}, {sd(b), 1, 1}}, buf.data(),
                                    buf.data(), FFTW_ESTIMATE);
  ASSERT_FALSE(plan.empty());
  std::copy(in.begin(), in.end(), buf.data());
  plan.execute();
  for (std::size_t i = 0; i < a; ++i)
    for (std::size_t k = 0; k < b; ++k) {
      std::vector<cplx> line(n);
      for (std::size_t j = 0; j < n; ++j) line[j] = in[(i * n + j) * b + k];
      const auto want = dft(line, -1);
      for (std::size_t j = 0; j < n; ++j)
        EXPECT_LT(std::abs(buf[(i * n + j) * b + k] - want[j]), 1e-12);
    }
}

TEST(Fft3dKernels, RealToComplexAndBackScalesByN) {
  const std::size_t lines = 3, n = 10, nc = n / 2 + 1;
  kernels::FftBuffer<double> r(lines * n);
  kernels::FftBuffer<cplx> c(lines * nc);
  const auto sd = [](std::size_t v) { return static_cast<std::ptrdiff_t>(v); };
  auto fwd = kernels::FftPlan::r2c({{sd(n), 1, 1}}, {{sd(lines), sd(n), sd(nc)}}, r.data(), c.data(), FFTW_ESTIMATE);
  auto bwd = kernels::FftPlan::c2r({{sd(n), 1, 1}}, {{sd(lines), sd(nc), sd(n)}}, c.data(), r.data(), FFTW_ESTIMATE);
  std::vector<double> in(lines * n);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::sin(0.7 * static_cast<double>(i * i));
  std::copy(in.begin(), in.end(), r.data());
  fwd.execute();
  for (std::size_t l = 0; l < lines; ++l) {
    std::vector<cplx> line(in.begin() + static_cast<std::ptrdiff_t>(l * n), in.begin() + static_cast<std::ptrdiff_t>((l + 1) * n));
    const auto want = dft(line, -1);
    for (std::size_t k = 0; k < nc; ++k) EXPECT_LT(std::abs(c[l * nc + k] - want[k]), 1e-12);
  }
  bwd.execute();
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_NEAR(r[i] / static_cast<double>(n), in[i], 1e-13);
}

// The SimGrid cost model (fft3d --model-fft) charges nominal_flops(): 5 n log2 n per complex
// transform (2.5 for real data) times the batch, kept across a move.
TEST(Fft3dKernels, NominalFlopsCountFiveNLogNPerTransform) {
  const std::ptrdiff_t n = 16, m = 8, lines = 3;
  kernels::FftBuffer<cplx> c(static_cast<std::size_t>(lines * n * m));
  kernels::FftBuffer<double> r(static_cast<std::size_t>(lines * n));
  auto two_d = kernels::FftPlan::dft(kernels::FftKind::Forward, {{n, m, m}, {m, 1, 1}},
                                     {{lines, n * m, n * m}}, c.data(), c.data(), FFTW_ESTIMATE);
  EXPECT_DOUBLE_EQ(two_d.nominal_flops(), 5.0 * 128 * 7 * 3);  // 3 transforms of 128 points
  auto real = kernels::FftPlan::r2c({{n, 1, 1}}, {{lines, n, n / 2 + 1}}, r.data(), c.data(),
                                    FFTW_ESTIMATE);
  EXPECT_DOUBLE_EQ(real.nominal_flops(), 2.5 * 16 * 4 * 3);
  kernels::FftPlan moved = std::move(two_d);
  EXPECT_DOUBLE_EQ(moved.nominal_flops(), 5.0 * 128 * 7 * 3);
  EXPECT_DOUBLE_EQ(two_d.nominal_flops(), 0.0);
  EXPECT_EQ(pieces(5, 9, {2, 0, 4}).elements(), 5u * 6u);  // what --model-copy charges
}

TEST(Fft3dKernels, EmptyBatchGivesANoOpPlan) {
  kernels::FftBuffer<cplx> buf(4);
  auto plan = kernels::FftPlan::dft(kernels::FftKind::Forward, {{4, 1, 1}}, {{0, 4, 4}}, buf.data(), buf.data(), FFTW_ESTIMATE);
  EXPECT_TRUE(plan.empty());
  EXPECT_DOUBLE_EQ(plan.nominal_flops(), 0.0);
  plan.execute();  // must not crash
  EXPECT_THROW(kernels::fft_plan_flags_from_name("fast"), std::invalid_argument);
  EXPECT_EQ(kernels::fft_plan_flags_from_name("measure"), FFTW_MEASURE);
}

}  // namespace
