#include "kernels/distribution.hpp"

namespace kernels {

std::vector<std::size_t> even_counts(std::size_t n, int parts) {
  std::vector<std::size_t> c(static_cast<std::size_t>(parts > 0 ? parts : 0));
  if (c.empty()) return c;
  const std::size_t base = n / c.size(), extra = n % c.size();
  for (std::size_t k = 0; k < c.size(); ++k) c[k] = base + (k < extra ? 1 : 0);
  return c;
}

std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> off(counts.size());
  std::size_t sum = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    off[k] = sum;
    sum += counts[k];
  }
  return off;
}

int Grid::rank_of(int i, int j) const { return order == GridOrder::RowMajor ? i * cols + j : i + j * rows; }
int Grid::row_of(int rank) const { return order == GridOrder::RowMajor ? rank / cols : rank % rows; }
int Grid::col_of(int rank) const { return order == GridOrder::RowMajor ? rank % cols : rank / rows; }

Grid square_grid(int p, GridOrder order) {
  int pc = 1;
  for (int c = 1; c * c <= p; ++c)
    if (p % c == 0) pc = c;
  return Grid{p / pc, pc, order};
}

MatrixDistribution::MatrixDistribution(std::size_t m_, std::size_t n_, Grid g)
    : m(m_), n(n_), grid(g),
      m_counts(even_counts(m_, g.size())), m_offsets(offsets_of(m_counts)),
      n_counts(even_counts(n_, g.size())), n_offsets(offsets_of(n_counts)) {}

std::size_t MatrixDistribution::row_begin(int I) const {
  return m_offsets[static_cast<std::size_t>(I * grid.cols)];
}
std::size_t MatrixDistribution::row_count(int I) const {
  std::size_t c = 0;
  for (auto k : row_block_pieces(I)) c += k;
  return c;
}
std::size_t MatrixDistribution::col_begin(int J) const {
  return n_offsets[static_cast<std::size_t>(J * grid.rows)];
}
std::size_t MatrixDistribution::col_count(int J) const {
  std::size_t c = 0;
  for (auto k : col_block_pieces(J)) c += k;
  return c;
}
std::vector<std::size_t> MatrixDistribution::row_block_pieces(int I) const {
  std::vector<std::size_t> v(static_cast<std::size_t>(grid.cols));
  for (int j = 0; j < grid.cols; ++j) v[static_cast<std::size_t>(j)] = m_counts[static_cast<std::size_t>(I * grid.cols + j)];
  return v;
}
std::vector<std::size_t> MatrixDistribution::col_block_pieces(int J) const {
  std::vector<std::size_t> v(static_cast<std::size_t>(grid.rows));
  for (int i = 0; i < grid.rows; ++i) v[static_cast<std::size_t>(i)] = n_counts[static_cast<std::size_t>(J * grid.rows + i)];
  return v;
}

}  // namespace kernels
