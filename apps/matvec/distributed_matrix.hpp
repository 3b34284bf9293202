// A dense M x N matrix distributed over a Pr x Pc node array, with both vectors spread
// evenly over all P nodes as a 1-D array (paper 004, section 2, Figs. 2-4), and the three
// operations of that section built from all-to-all broadcast (allgather) and all-to-all
// reduction (reduce_scatter):
//
//   matvec  y = A x     [reorder x] -> allgather x within node columns -> local A_IJ x_J
//                       -> reduce-scatter within node rows -> [reorder y]
//   vecmat  w = A^T v   [reorder v] -> allgather v within node rows -> local A_IJ^T v_I
//                       -> reduce-scatter within node columns -> [reorder w]
//   rank1   A += y x^T  [reorder y] -> allgather y within rows, [reorder x] -> allgather x
//                       within columns -> local A_IJ += y_I x_J^T
//
// A reordering is the transposition between row-major and column-major positions on the
// node array (s. 2): with column-major node labels x is already in place and y is
// reordered after the reduction; with row-major labels x is reordered before the
// broadcast and y needs nothing. A 1-D row partition is the grid P x 1 (allgather of x
// over all nodes, no communication for y), a column partition 1 x P (local product, then
// reduce-scatter of y over all nodes); neither needs a reordering.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/distribution.hpp"
#include "libcomm/allgather.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/reduce_scatter.hpp"

namespace matvec {

enum class Layout { Rows, Cols, GridRowMajor, GridColMajor };
enum class Op { MatVec, VecMat, Rank1 };

std::string_view layout_name(Layout l);
Layout layout_from_name(std::string_view name);  // Error lists the valid names
std::string_view op_name(Op o);
Op op_from_name(std::string_view name);
// The node array of a layout on p ranks: rows -> p x 1, cols -> 1 x p, the grid layouts
// -> `grid` (its Pr * Pc must be p) in their label order.
kernels::Grid layout_grid(Layout l, int p, const kernels::Grid& grid);

// One app-level algorithm name selects an allgather and a reduce_scatter algorithm:
// the same name where both operations have it (native, auto, ring, d_cycles), and the
// paper's pairing otherwise (s. 5: the tree alternatives send_spread and butterfly for the
// broadcast go with reduce_spread for the reduction; d_cycles_im moves indices in the
// broadcast and uses d_cycles for the reduction).
struct AlgoPair {
  std::string name;
  libcomm::AllgatherAlgo gather = libcomm::AllgatherAlgo::Native;
  libcomm::ReduceScatterAlgo reduce = libcomm::ReduceScatterAlgo::Native;
};
AlgoPair algo_pair_from_name(std::string_view name);  // Error lists the valid names
std::vector<std::string> all_algo_names();           // what --algo all runs, native first

// Stream ids of the seeded data (kernels::seeded_value): A(i, j) = value(seed, kMatrix, i, j),
// the N-vector x(j) = value(seed, kVectorN, j, 0), the M-vector v(i) = value(seed, kVectorM, i, 0).
inline constexpr std::uint64_t kMatrix = 1, kVectorN = 2, kVectorM = 3;

struct Phases {
  double comm = 0;     // reorderings, allgathers, reduce-scatters (seconds)
  double compute = 0;  // the local Eigen product / update
};

class DistributedMatrix {
 public:
  // Collective over `world` (splits the node rows and columns). grid.size() must be the
  // size of world.
  DistributedMatrix(MPI_Comm world, std::size_t m, std::size_t n, kernels::Grid grid,
                    std::uint64_t seed);
  ~DistributedMatrix();
  DistributedMatrix(const DistributedMatrix&) = delete;
  DistributedMatrix& operator=(const DistributedMatrix&) = delete;

  const kernels::MatrixDistribution& dist() const { return dist_; }
  int rank() const { return rank_; }
  int node_row() const { return row_; }
  int node_col() const { return col_; }
  // This rank's segment of a length-M / length-N vector (position = rank).
  std::size_t m_segment() const { return dist_.m_counts[static_cast<std::size_t>(rank_)]; }
  std::size_t n_segment() const { return dist_.n_counts[static_cast<std::size_t>(rank_)]; }

  // The local block A_IJ (column-major, leading dimension local_rows()).
  const std::vector<double>& block() const { return a_; }
  std::size_t local_rows() const { return dist_.row_count(row_); }
  std::size_t local_cols() const { return dist_.col_count(col_); }
  std::size_t first_row() const { return dist_.row_begin(row_); }
  std::size_t first_col() const { return dist_.col_begin(col_); }
  // Regenerates A_IJ from the seed (after a rank-1 update).
  void reset_block();

  // Sizes of the sub-communicators each operation calls a collective on (1 = none called).
  int column_size() const { return dist_.grid.rows; }
  int row_size() const { return dist_.grid.cols; }

  // y_seg (m_segment()) = segment of A x; x_seg is this rank's segment of x (n_segment()).
  Phases matvec(const AlgoPair& algo, const double* x_seg, double* y_seg, bool checked,
                const libcomm::AllgatherOptions& gopt, const libcomm::ReduceScatterOptions& ropt);
  // w_seg (n_segment()) = segment of A^T v; v_seg holds m_segment() values.
  Phases vecmat(const AlgoPair& algo, const double* v_seg, double* w_seg, bool checked,
                const libcomm::AllgatherOptions& gopt, const libcomm::ReduceScatterOptions& ropt);
  // A += y x^T with y_seg (m_segment()) and x_seg (n_segment()).
  Phases rank1(const AlgoPair& algo, const double* y_seg, const double* x_seg, bool checked,
               const libcomm::AllgatherOptions& gopt);

  // What ran in the last call for each collective ("-" when the sub-communicator had one
  // rank and no collective was called).
  const std::string& gather_ran() const { return gather_ran_; }
  const std::string& reduce_ran() const { return reduce_ran_; }

 private:
  // Charges one pass over the local block, a multiply and an add per entry (the product,
  // the transposed product, the rank-1 update) to the simulated clock under --model-flops.
  void charge_block_pass() const;
  // Sends this rank's segment (`out`, out_count) to rank `to` and receives `in_count`
  // values from rank `from` (the transposition between row- and column-major positions).
  void permute(const double* out, std::size_t out_count, int to, double* in, std::size_t in_count,
               int from);
  // An allgatherv (`gathering`) or a reduce-scatter over one node row or column, pieces in
  // sub-communicator rank order; returns what ran ("-": a sub-communicator of one, a copy).
  std::string exchange(const libcomm::Comm* sub, const AlgoPair& algo, bool gathering, const double* in,
                       const std::vector<std::size_t>& pieces, double* out, bool checked,
                       libcomm::AllgatherOptions gopt, libcomm::ReduceScatterOptions ropt);
  // The node column (N-segments, x) or row (M-segments, y) of this rank: the collectives'
  // sub-communicator and pieces, this rank's position in that axis' order and the rank at
  // this rank's position, the segment counts, and the buffers of the reordered segment
  // and of the gathered block.
  struct Axis {
    const libcomm::Comm* comm;
    std::vector<std::size_t> pieces;
    int position, node;
    const std::vector<std::size_t>* counts;
    std::vector<double>*piece, *block;
  };
  Axis column_axis();
  Axis row_axis();
  // The block of the axis from this rank's segment: reorder to the axis' position, then
  // allgather within it. reduce_block: the reduction of partial_ within the axis, then the
  // reordering back to this rank's segment.
  void gather_block(const Axis& a, const AlgoPair& algo, const double* seg, bool checked,
                    const libcomm::AllgatherOptions& gopt);
  void reduce_block(const Axis& a, const AlgoPair& algo, double* seg, bool checked,
                    const libcomm::ReduceScatterOptions& ropt);
  // matvec (transposed = false) and vecmat.
  Phases product(bool transposed, const AlgoPair& algo, const double* in_seg, double* out_seg, bool checked,
                 const libcomm::AllgatherOptions& gopt, const libcomm::ReduceScatterOptions& ropt);

  kernels::MatrixDistribution dist_;
  std::uint64_t seed_;
  MPI_Comm world_ = MPI_COMM_NULL;     // private duplicate, for the reorderings
  MPI_Comm row_mpi_ = MPI_COMM_NULL;   // the nodes of this node row, ordered by column
  MPI_Comm col_mpi_ = MPI_COMM_NULL;   // the nodes of this node column, ordered by row
  std::unique_ptr<libcomm::Comm> row_comm_, col_comm_;
  int rank_ = 0, row_ = 0, col_ = 0;
  std::vector<double> a_;
  std::vector<double> m_piece_, n_piece_;  // reordered segments
  std::vector<double> m_block_, n_block_;  // gathered row / column block vectors
  std::vector<double> partial_;            // local product before the reduction
  std::string gather_ran_, reduce_ran_;
};

}  // namespace matvec
