// Local dense linear algebra of the matvec app (Eigen underneath) and the seeded entries
// that let every rank regenerate any part of the same matrix and vectors. No MPI.
//
// Blocks are column-major: entry (i, j) of a rows x cols block sits at a[i + j * ld],
// ld >= rows. Zero rows or columns are allowed everywhere (nothing is read or written).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kernels {

// A value in [-1, 1) determined only by (seed, stream, i, j): a counter-based generator
// (splitmix64 finaliser over the key), so no rank needs to generate what it does not hold.
double seeded_value(std::uint64_t seed, std::uint64_t stream, std::uint64_t i, std::uint64_t j);

// Fills the rows x cols block whose top-left entry is global (row0, col0) with
// seeded_value(seed, stream, row0 + r, col0 + c).
void fill_seeded_block(double* a, std::size_t rows, std::size_t cols, std::size_t ld,
                       std::uint64_t seed, std::uint64_t stream, std::size_t row0, std::size_t col0);

// y = A x (y has `rows` entries, x `cols`).
void gemv(const double* a, std::size_t rows, std::size_t cols, std::size_t ld, const double* x,
          double* y);
// y = A^T x (y has `cols` entries, x `rows`): the local part of vector-matrix x^T A.
void gemv_transposed(const double* a, std::size_t rows, std::size_t cols, std::size_t ld,
                     const double* x, double* y);
// A += y x^T (y has `rows` entries, x `cols`): the local part of a rank-1 update.
void rank1_update(double* a, std::size_t rows, std::size_t cols, std::size_t ld, const double* y,
                  const double* x);

}  // namespace kernels
