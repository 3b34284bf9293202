// Block distributions of vectors and matrices over a 1-D or 2-D array of nodes (paper 004,
// section 2, Figs. 2-4): pure index arithmetic, no MPI, so it can be unit-tested.
#pragma once

#include <cstddef>
#include <vector>

namespace kernels {

// n items split into `parts` consecutive pieces as evenly as possible: the first n % parts
// pieces hold one item more (allgatherv-style counts; pieces may be empty when n < parts).
std::vector<std::size_t> even_counts(std::size_t n, int parts);
// Exclusive prefix sums of counts (offset of every piece), same length as counts.
std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts);

// How ranks are laid out on a Pr x Pc node array (Fig. 4): row-major labels rank = i * Pc + j,
// column-major labels rank = i + j * Pr, where (i, j) is the node's (row, column).
enum class GridOrder { RowMajor, ColMajor };

struct Grid {
  int rows = 1;  // Pr
  int cols = 1;  // Pc
  GridOrder order = GridOrder::ColMajor;

  int size() const { return rows * cols; }
  int rank_of(int i, int j) const;
  int row_of(int rank) const;
  int col_of(int rank) const;
  // The node that holds position q when the P positions are numbered in row-major
  // (row_major_node) or column-major (col_major_node) order over the node array. One of the
  // two is the identity: the one matching `order`.
  int row_major_node(int q) const { return rank_of(q / cols, q % cols); }
  int col_major_node(int q) const { return rank_of(q % rows, q / rows); }
};

// The most nearly square Pr x Pc = p with Pr >= Pc.
Grid square_grid(int p, GridOrder order);

// An M x N matrix on a Pr x Pc node array, with both vectors distributed evenly over the
// P = Pr * Pc nodes as a 1-D array in rank order (the "one-dimensional nodal array for the
// vectors" of section 2): rank q holds segment q of a length-M vector (even_counts(M, P))
// and segment q of a length-N vector (even_counts(N, P)).
//  - Row block I of the matrix = the M-segments with row-major positions I*Pc .. I*Pc+Pc-1,
//    so that the reduce-scatter within node row I leaves node (I, j) holding M-segment
//    I*Pc + j (row-major position).
//  - Column block J = the N-segments with column-major positions J*Pr .. J*Pr+Pr-1, so that
//    the allgather within node column J combines the N-segments of column-major positions.
// With column-major labels an N-segment already sits where the column allgather wants it
// and an M-segment produced by the row reduction must be moved (the reordering transpose
// of y in s. 2); with row-major labels it is the other way round (x is reordered before
// the broadcast). A 1-D row partition is the grid P x 1, a column partition 1 x P.
struct MatrixDistribution {
  MatrixDistribution(std::size_t m, std::size_t n, Grid grid);

  std::size_t m, n;
  Grid grid;
  std::vector<std::size_t> m_counts, m_offsets;  // M-vector segments, per position q
  std::vector<std::size_t> n_counts, n_offsets;  // N-vector segments, per position q

  std::size_t row_begin(int I) const;  // first global row of row block I
  std::size_t row_count(int I) const;
  std::size_t col_begin(int J) const;
  std::size_t col_count(int J) const;
  // Counts (in elements) of the pieces contributed by the nodes of row block I, in node
  // column order j = 0..Pc-1 (reduce-scatter within node row I / allgather of an
  // M-vector within row I), and of column block J in node row order i = 0..Pr-1.
  std::vector<std::size_t> row_block_pieces(int I) const;
  std::vector<std::size_t> col_block_pieces(int J) const;
};

}  // namespace kernels
