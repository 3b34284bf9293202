#include "distributed_matrix.hpp"

#include "libcomm/sim.hpp"

#include <climits>
#include <cstring>

#include "apps/lists.hpp"
#include "kernels/dense.hpp"
#include "libcomm/error.hpp"

namespace matvec {
namespace {

constexpr apps::Named<Layout> kLayouts[] = {{Layout::Rows, "rows"},
                                           {Layout::Cols, "cols"},
                                           {Layout::GridRowMajor, "grid_rowmajor"},
                                           {Layout::GridColMajor, "grid_colmajor"}};
constexpr apps::Named<Op> kOps[] = {{Op::MatVec, "matvec"}, {Op::VecMat, "vecmat"}, {Op::Rank1, "rank1"}};

void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw libcomm::Error(std::string("matvec: ") + what + " failed");
}

std::string rank_prefix(int rank) { return "matvec: rank " + std::to_string(rank) + ": "; }

}  // namespace

std::string_view layout_name(Layout l) { return apps::name_of(kLayouts, l); }
Layout layout_from_name(std::string_view name) { return apps::from_name(kLayouts, name, "layout", ", all"); }
std::string_view op_name(Op o) { return apps::name_of(kOps, o); }
Op op_from_name(std::string_view name) { return apps::from_name(kOps, name, "operation", ", all"); }

kernels::Grid layout_grid(Layout l, int p, const kernels::Grid& grid) {
  switch (l) {
    case Layout::Rows: return {p, 1, kernels::GridOrder::ColMajor};
    case Layout::Cols: return {1, p, kernels::GridOrder::ColMajor};
    case Layout::GridRowMajor: return {grid.rows, grid.cols, kernels::GridOrder::RowMajor};
    case Layout::GridColMajor: return {grid.rows, grid.cols, kernels::GridOrder::ColMajor};
  }
  return grid;
}

AlgoPair algo_pair_from_name(std::string_view name) {
  using libcomm::AllgatherAlgo;
  using libcomm::ReduceScatterAlgo;
  AlgoPair pair{std::string(name)};
  if (name == "send_spread" || name == "butterfly") {  // tree alternatives of s. 5
    pair.gather = libcomm::allgather_algo_from_name(name);
    pair.reduce = ReduceScatterAlgo::ReduceSpread;
  } else if (name == "d_cycles_im") {
    pair.gather = AllgatherAlgo::DCyclesIndexMotion;
    pair.reduce = ReduceScatterAlgo::DCycles;
  } else if (name == "native" || name == "auto" || name == "ring" || name == "d_cycles") {
    pair.gather = libcomm::allgather_algo_from_name(name);
    pair.reduce = libcomm::reduce_scatter_algo_from_name(name);
  } else {
    std::string valid;
    for (const auto& n : all_algo_names()) valid += n + ", ";
    throw libcomm::Error("unknown algorithm '" + std::string(name) + "' (valid: " + valid +
                         "auto, all)");
  }
  return pair;
}

std::vector<std::string> all_algo_names() {
  return {"native", "ring", "d_cycles", "d_cycles_im", "send_spread", "butterfly"};
}

DistributedMatrix::DistributedMatrix(MPI_Comm world, std::size_t m, std::size_t n,
                                     kernels::Grid grid, std::uint64_t seed)
    : dist_(m, n, grid), seed_(seed) {
  int p = 0;
  MPI_Comm_rank(world, &rank_);
  MPI_Comm_size(world, &p);
  libcomm::require(grid.size() == p, rank_prefix(rank_) + "grid " + std::to_string(grid.rows) +
                                         "x" + std::to_string(grid.cols) + " does not hold " +
                                         std::to_string(p) + " ranks");
  row_ = grid.row_of(rank_);
  col_ = grid.col_of(rank_);
  check_mpi(MPI_Comm_dup(world, &world_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_split(world, row_, col_, &row_mpi_), "MPI_Comm_split (node rows)");
  check_mpi(MPI_Comm_split(world, col_, row_, &col_mpi_), "MPI_Comm_split (node columns)");
  row_comm_ = std::make_unique<libcomm::Comm>(row_mpi_);
  col_comm_ = std::make_unique<libcomm::Comm>(col_mpi_);
  a_.resize(local_rows() * local_cols());
  reset_block();
  m_block_.resize(local_rows());
  n_block_.resize(local_cols());
  partial_.resize(std::max(local_rows(), local_cols()));
  std::size_t m_max = 0, n_max = 0;
  for (auto c : dist_.m_counts) m_max = std::max(m_max, c);
  for (auto c : dist_.n_counts) n_max = std::max(n_max, c);
  m_piece_.resize(m_max);
  n_piece_.resize(n_max);
}

DistributedMatrix::~DistributedMatrix() {
  row_comm_.reset();
  col_comm_.reset();
  MPI_Comm_free(&row_mpi_);
  MPI_Comm_free(&col_mpi_);
  MPI_Comm_free(&world_);
}

void DistributedMatrix::reset_block() {
  kernels::fill_seeded_block(a_.data(), local_rows(), local_cols(), local_rows(), seed_, kMatrix,
                             first_row(), first_col());
}

void DistributedMatrix::permute(const double* out, std::size_t out_count, int to, double* in,
                                std::size_t in_count, int from) {
  if (to == rank_ && from == rank_) {
    if (in_count) std::memcpy(in, out, in_count * sizeof(double));
    return;
  }
  libcomm::require(out_count <= INT_MAX && in_count <= INT_MAX,
                   rank_prefix(rank_) + "a vector segment exceeds INT_MAX elements");
  check_mpi(MPI_Sendrecv(out, static_cast<int>(out_count), MPI_DOUBLE, to, 0, in,
                         static_cast<int>(in_count), MPI_DOUBLE, from, 0, world_, MPI_STATUS_IGNORE),
            "MPI_Sendrecv (reordering)");
}

std::string DistributedMatrix::exchange(const libcomm::Comm* sub, const AlgoPair& algo, bool gathering,
                                        const double* in, const std::vector<std::size_t>& pieces, double* out,
                                        bool checked, libcomm::AllgatherOptions gopt,
                                        libcomm::ReduceScatterOptions ropt) {
  if (sub->size() == 1) {  // a node row or column of one: nothing to exchange
    if (pieces[0]) std::memcpy(out, in, pieces[0] * sizeof(double));
    return "-";
  }
  std::size_t total = 0;
  for (auto c : pieces) total += c;
  const std::size_t mine = pieces[static_cast<std::size_t>(sub->rank())];
  if (gathering) {
    gopt.check_args = checked;
    return std::string(libcomm::allgather_algo_name(libcomm::allgatherv<double>(
        std::span<const double>(in, mine), std::span<double>(out, total), pieces, *sub, algo.gather, gopt)));
  }
  ropt.check_args = checked;
  return std::string(libcomm::reduce_scatter_algo_name(
      libcomm::reduce_scatter<double>(std::span<const double>(in, total), std::span<double>(out, mine), pieces,
                                      libcomm::ReduceOp::Sum, *sub, algo.reduce, ropt)));
}

DistributedMatrix::Axis DistributedMatrix::column_axis() {
  const auto& g = dist_.grid;
  return {col_comm_.get(), dist_.col_block_pieces(col_), col_ * g.rows + row_, g.col_major_node(rank_),
          &dist_.n_counts, &n_piece_, &n_block_};
}

DistributedMatrix::Axis DistributedMatrix::row_axis() {
  const auto& g = dist_.grid;
  return {row_comm_.get(), dist_.row_block_pieces(row_), row_ * g.cols + col_, g.row_major_node(rank_),
          &dist_.m_counts, &m_piece_, &m_block_};
}

void DistributedMatrix::gather_block(const Axis& a, const AlgoPair& algo, const double* seg, bool checked,
                                     const libcomm::AllgatherOptions& gopt) {
  const double* piece = seg;
  if (a.node != rank_ || a.position != rank_) {
    permute(seg, (*a.counts)[static_cast<std::size_t>(rank_)], a.node, a.piece->data(),
            (*a.counts)[static_cast<std::size_t>(a.position)], a.position);
    piece = a.piece->data();
  }
  gather_ran_ = exchange(a.comm, algo, true, piece, a.pieces, a.block->data(), checked, gopt, {});
}

void DistributedMatrix::reduce_block(const Axis& a, const AlgoPair& algo, double* seg, bool checked,
                                     const libcomm::ReduceScatterOptions& ropt) {
  double* piece = a.position == rank_ ? seg : a.piece->data();
  reduce_ran_ = exchange(a.comm, algo, false, partial_.data(), a.pieces, piece, checked, {}, ropt);
  if (a.position != rank_ || a.node != rank_)
    permute(piece, (*a.counts)[static_cast<std::size_t>(a.position)], a.position, seg,
            (*a.counts)[static_cast<std::size_t>(rank_)], a.node);
}

void DistributedMatrix::charge_block_pass() const {
  libcomm::sim::charge_flops(2.0 * static_cast<double>(local_rows() * local_cols()));
}

// y = A x: x is broadcast within node columns (reordered to column-major positions first:
// the column allgather needs N-segment qc here), the partial products are reduced within
// node rows, which leaves M-segment qr (row-major position) here; with column-major
// labels it belongs to rank qr: the reordering transposition of y. w = A^T v: the same
// with rows and columns exchanged.
Phases DistributedMatrix::product(bool transposed, const AlgoPair& algo, const double* in_seg, double* out_seg,
                                  bool checked, const libcomm::AllgatherOptions& gopt,
                                  const libcomm::ReduceScatterOptions& ropt) {
  const Axis in = transposed ? row_axis() : column_axis(), out = transposed ? column_axis() : row_axis();
  const double t0 = MPI_Wtime();
  gather_block(in, algo, in_seg, checked, gopt);
  const double t1 = MPI_Wtime();
  (transposed ? kernels::gemv_transposed : kernels::gemv)(a_.data(), local_rows(), local_cols(), local_rows(),
                                                          in.block->data(), partial_.data());
  charge_block_pass();
  const double t2 = MPI_Wtime();
  reduce_block(out, algo, out_seg, checked, ropt);
  return {(t1 - t0) + (MPI_Wtime() - t2), t2 - t1};
}

Phases DistributedMatrix::matvec(const AlgoPair& algo, const double* x_seg, double* y_seg, bool checked,
                                 const libcomm::AllgatherOptions& gopt, const libcomm::ReduceScatterOptions& ropt) {
  return product(false, algo, x_seg, y_seg, checked, gopt, ropt);
}

Phases DistributedMatrix::vecmat(const AlgoPair& algo, const double* v_seg, double* w_seg, bool checked,
                                 const libcomm::AllgatherOptions& gopt, const libcomm::ReduceScatterOptions& ropt) {
  return product(true, algo, v_seg, w_seg, checked, gopt, ropt);
}

Phases DistributedMatrix::rank1(const AlgoPair& algo, const double* y_seg, const double* x_seg,
                                bool checked, const libcomm::AllgatherOptions& gopt) {
  Phases ph;
  double t0 = MPI_Wtime();
  gather_block(row_axis(), algo, y_seg, checked, gopt);
  const std::string row_ran = gather_ran_;
  gather_block(column_axis(), algo, x_seg, checked, gopt);
  if (gather_ran_ == "-") gather_ran_ = row_ran;
  reduce_ran_ = "-";
  double t1 = MPI_Wtime();
  kernels::rank1_update(a_.data(), local_rows(), local_cols(), local_rows(), m_block_.data(),
                        n_block_.data());
  charge_block_pass();
  double t2 = MPI_Wtime();
  ph.comm = t1 - t0;
  ph.compute = t2 - t1;
  return ph;
}

}  // namespace matvec
