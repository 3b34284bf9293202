#include "kernels/dense.hpp"
#include "splitmix.hpp"

#include <Eigen/Dense>

namespace kernels {
namespace {

using ConstBlock = Eigen::Map<const Eigen::MatrixXd, 0, Eigen::OuterStride<>>;
using Block = Eigen::Map<Eigen::MatrixXd, 0, Eigen::OuterStride<>>;
using ConstVec = Eigen::Map<const Eigen::VectorXd>;
using Vec = Eigen::Map<Eigen::VectorXd>;

// Eigen wants a non-zero stride even for empty blocks.
Eigen::Index stride(std::size_t ld, std::size_t rows) {
  return static_cast<Eigen::Index>(ld > 0 ? ld : (rows > 0 ? rows : 1));
}

}  // namespace

double seeded_value(std::uint64_t seed, std::uint64_t stream, std::uint64_t i, std::uint64_t j) {
  using detail::splitmix64;
  const std::uint64_t h = splitmix64(splitmix64(splitmix64(seed ^ (stream << 56)) ^ i) ^ (j * 0xd6e8feb86659fd93ULL));
  // 53 random bits -> [0, 1) -> [-1, 1).
  return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

void fill_seeded_block(double* a, std::size_t rows, std::size_t cols, std::size_t ld,
                       std::uint64_t seed, std::uint64_t stream, std::size_t row0, std::size_t col0) {
  for (std::size_t c = 0; c < cols; ++c)
    for (std::size_t r = 0; r < rows; ++r) a[r + c * ld] = seeded_value(seed, stream, row0 + r, col0 + c);
}

void gemv(const double* a, std::size_t rows, std::size_t cols, std::size_t ld, const double* x,
          double* y) {
  if (rows == 0) return;
  Vec yv(y, static_cast<Eigen::Index>(rows));
  if (cols == 0) {
    yv.setZero();
    return;
  }
  const ConstBlock A(a, static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols),
                     Eigen::OuterStride<>(stride(ld, rows)));
  yv.noalias() = A * ConstVec(x, static_cast<Eigen::Index>(cols));
}

void gemv_transposed(const double* a, std::size_t rows, std::size_t cols, std::size_t ld,
                     const double* x, double* y) {
  if (cols == 0) return;
  Vec yv(y, static_cast<Eigen::Index>(cols));
  if (rows == 0) {
    yv.setZero();
    return;
  }
  const ConstBlock A(a, static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols),
                     Eigen::OuterStride<>(stride(ld, rows)));
  yv.noalias() = A.transpose() * ConstVec(x, static_cast<Eigen::Index>(rows));
}

void rank1_update(double* a, std::size_t rows, std::size_t cols, std::size_t ld, const double* y,
                  const double* x) {
  if (rows == 0 || cols == 0) return;
  Block A(a, static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols),
          Eigen::OuterStride<>(stride(ld, rows)));
  A.noalias() += ConstVec(y, static_cast<Eigen::Index>(rows)) *
                 ConstVec(x, static_cast<Eigen::Index>(cols)).transpose();
}

}  // namespace kernels
