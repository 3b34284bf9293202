// The index arithmetic of the matvec layouts (paper 004, s. 2, Figs. 2-4), without MPI:
// splits, node labels, the reordering permutations, and a serial emulation of the whole
// distributed y = A x on every node of a Pr x Pc array that must reproduce the product.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "kernels/dense.hpp"
#include "kernels/distribution.hpp"

namespace {

using kernels::Grid;
using kernels::GridOrder;

TEST(Distribution, EvenCountsAreBalancedAndComplete) {
  for (std::size_t n : {0u, 1u, 2u, 7u, 36u, 37u, 1000u})
    for (int parts = 1; parts <= 9; ++parts) {
      const auto c = kernels::even_counts(n, parts);
      ASSERT_EQ(c.size(), static_cast<std::size_t>(parts));
      EXPECT_EQ(std::accumulate(c.begin(), c.end(), std::size_t{0}), n);
      const auto [lo, hi] = std::minmax_element(c.begin(), c.end());
      EXPECT_LE(*hi - *lo, 1u) << "n = " << n << ", parts = " << parts;
      EXPECT_TRUE(std::is_sorted(c.rbegin(), c.rend())) << "larger pieces come first";
      const auto off = kernels::offsets_of(c);
      for (std::size_t k = 1; k < c.size(); ++k) EXPECT_EQ(off[k], off[k - 1] + c[k - 1]);
      EXPECT_EQ(off[0], 0u);
    }
}

TEST(Distribution, GridLabelsRoundTripInBothOrders) {
  for (GridOrder order : {GridOrder::RowMajor, GridOrder::ColMajor})
    for (int pr = 1; pr <= 4; ++pr)
      for (int pc = 1; pc <= 4; ++pc) {
        const Grid g{pr, pc, order};
        std::set<int> ranks;
        for (int i = 0; i < pr; ++i)
          for (int j = 0; j < pc; ++j) {
            const int r = g.rank_of(i, j);
            EXPECT_EQ(g.row_of(r), i);
            EXPECT_EQ(g.col_of(r), j);
            ranks.insert(r);
          }
        EXPECT_EQ(ranks.size(), static_cast<std::size_t>(pr * pc));
        EXPECT_EQ(*ranks.rbegin(), pr * pc - 1);
        // Fig. 4: row-major labels run along rows, column-major along columns.
        if (pr > 1 && pc > 1) {
          EXPECT_EQ(g.rank_of(0, 1), order == GridOrder::RowMajor ? 1 : pr);
          EXPECT_EQ(g.rank_of(1, 0), order == GridOrder::RowMajor ? pc : 1);
        }
      }
}

TEST(Distribution, ReorderingIsIdentityOnlyForTheMatchingOrder) {
  // The position maps are permutations; the one matching the label order is the identity,
  // the other is the transposition of the Pr x Pc array (identity only for a 1-D array).
  for (int pr = 1; pr <= 4; ++pr)
    for (int pc = 1; pc <= 4; ++pc) {
      const Grid row{pr, pc, GridOrder::RowMajor}, col{pr, pc, GridOrder::ColMajor};
      std::set<int> a, b;
      bool col_identity = true, row_identity = true;
      for (int q = 0; q < pr * pc; ++q) {
        EXPECT_EQ(row.row_major_node(q), q);
        EXPECT_EQ(col.col_major_node(q), q);
        a.insert(row.col_major_node(q));
        b.insert(col.row_major_node(q));
        row_identity &= row.col_major_node(q) == q;
        col_identity &= col.row_major_node(q) == q;
        // The transposition: position q = (i, j) row-major sits at column-major label i + j Pr.
        EXPECT_EQ(col.row_major_node(q), (q / pc) + (q % pc) * pr);
      }
      EXPECT_EQ(a.size(), static_cast<std::size_t>(pr * pc));
      EXPECT_EQ(b.size(), static_cast<std::size_t>(pr * pc));
      EXPECT_EQ(row_identity, pr == 1 || pc == 1);
      EXPECT_EQ(col_identity, pr == 1 || pc == 1);
    }
}

TEST(Distribution, SquareGridIsTheMostNearlySquareFactorisation) {
  for (int p = 1; p <= 64; ++p) {
    const Grid g = kernels::square_grid(p, GridOrder::ColMajor);
    EXPECT_EQ(g.rows * g.cols, p);
    EXPECT_GE(g.rows, g.cols);
    for (int c = 1; c <= p; ++c)
      if (p % c == 0) {
        EXPECT_LE(g.rows - g.cols, std::abs(p / c - c)) << "p = " << p;
      }
  }
  EXPECT_EQ(kernels::square_grid(12, GridOrder::RowMajor).rows, 4);
  EXPECT_EQ(kernels::square_grid(7, GridOrder::RowMajor).cols, 1);
}

TEST(Distribution, MatrixBlocksTileTheMatrix) {
  for (GridOrder order : {GridOrder::RowMajor, GridOrder::ColMajor})
    for (auto [pr, pc] : {std::pair{1, 1}, {2, 1}, {1, 3}, {2, 2}, {2, 3}, {3, 2}, {4, 2}})
      for (std::size_t m : {1u, 5u, 13u, 40u})
        for (std::size_t n : {1u, 6u, 17u}) {
          const kernels::MatrixDistribution d(m, n, Grid{pr, pc, order});
          std::size_t row = 0, col = 0;
          for (int I = 0; I < pr; ++I) {
            EXPECT_EQ(d.row_begin(I), row);
            const auto pieces = d.row_block_pieces(I);
            ASSERT_EQ(pieces.size(), static_cast<std::size_t>(pc));
            EXPECT_EQ(std::accumulate(pieces.begin(), pieces.end(), std::size_t{0}), d.row_count(I));
            row += d.row_count(I);
          }
          for (int J = 0; J < pc; ++J) {
            EXPECT_EQ(d.col_begin(J), col);
            const auto pieces = d.col_block_pieces(J);
            ASSERT_EQ(pieces.size(), static_cast<std::size_t>(pr));
            EXPECT_EQ(std::accumulate(pieces.begin(), pieces.end(), std::size_t{0}), d.col_count(J));
            col += d.col_count(J);
          }
          EXPECT_EQ(row, m);
          EXPECT_EQ(col, n);
        }
}

// The distributed algorithm of s. 2 run serially: reorder x, "allgather" within node
// columns, local products, "reduce-scatter" within node rows, reorder y. Every node's
// final y segment must equal the corresponding rows of the full product.
TEST(Distribution, SerialEmulationOfTheGridMatvecReproducesTheProduct) {
  for (GridOrder order : {GridOrder::RowMajor, GridOrder::ColMajor})
    for (auto [pr, pc] : {std::pair{1, 4}, {4, 1}, {2, 2}, {2, 3}, {3, 2}}) {
      const std::size_t m = 23, n = 19;
      const Grid g{pr, pc, order};
      const kernels::MatrixDistribution d(m, n, g);
      std::vector<double> a(m * n), x(n), y(m);
      kernels::fill_seeded_block(a.data(), m, n, m, 7, 1, 0, 0);
      for (std::size_t j = 0; j < n; ++j) x[j] = kernels::seeded_value(7, 2, j, 0);
      kernels::gemv(a.data(), m, n, m, x.data(), y.data());
      const int p = g.size();
      // x segment q starts on rank q; the column allgather wants it at col_major_node(q).
      std::vector<std::vector<double>> x_at(static_cast<std::size_t>(p));
      for (int q = 0; q < p; ++q) {
        const auto& cnt = d.n_counts[static_cast<std::size_t>(q)];
        const auto off = d.n_offsets[static_cast<std::size_t>(q)];
        x_at[static_cast<std::size_t>(g.col_major_node(q))].assign(x.begin() + off, x.begin() + off + cnt);
      }
      // Partial products per node, then reduction within node rows.
      std::vector<std::vector<double>> partial(static_cast<std::size_t>(p));
      for (int r = 0; r < p; ++r) {
        const int I = g.row_of(r), J = g.col_of(r);
        std::vector<double> xj;
        for (int i = 0; i < pr; ++i) {
          const auto& piece = x_at[static_cast<std::size_t>(g.rank_of(i, J))];
          xj.insert(xj.end(), piece.begin(), piece.end());
        }
        ASSERT_EQ(xj.size(), d.col_count(J));
        std::vector<double> block(d.row_count(I) * d.col_count(J));
        for (std::size_t c = 0; c < d.col_count(J); ++c)
          for (std::size_t rr = 0; rr < d.row_count(I); ++rr)
            block[rr + c * d.row_count(I)] = a[(d.row_begin(I) + rr) + (d.col_begin(J) + c) * m];
        partial[static_cast<std::size_t>(r)].resize(d.row_count(I));
        kernels::gemv(block.data(), d.row_count(I), d.col_count(J), d.row_count(I), xj.data(),
                      partial[static_cast<std::size_t>(r)].data());
      }
      for (int r = 0; r < p; ++r) {
        const int I = g.row_of(r), J = g.col_of(r);
        // Node (I, J) receives piece J of row block I: row-major position I * pc + J.
        const int q = I * pc + J;
        std::size_t start = 0;
        for (int j = 0; j < J; ++j) start += d.row_block_pieces(I)[static_cast<std::size_t>(j)];
        const std::size_t cnt = d.m_counts[static_cast<std::size_t>(q)];
        for (std::size_t k = 0; k < cnt; ++k) {
          double sum = 0;
          for (int j = 0; j < pc; ++j) sum += partial[static_cast<std::size_t>(g.rank_of(I, j))][start + k];
          // After the reordering this value lives on rank q as entry k of its y segment.
          EXPECT_NEAR(sum, y[d.m_offsets[static_cast<std::size_t>(q)] + k], 1e-12)
              << pr << "x" << pc << (order == GridOrder::RowMajor ? " row-major" : " col-major");
        }
        EXPECT_EQ(d.m_offsets[static_cast<std::size_t>(q)], d.row_begin(I) + start);
      }
    }
}

}  // namespace
