// Distributed 3-D FFT of an NX x NY x NZ grid on a Pr x Pc process grid (rank = r * Pc + c).
//
//   input    rank (r, c) holds x in split(NX, Pr, r), y in split(NY, Pc, c), all z  [x][y][z]
//   Pc = 1 (slab):    2-D FFTs over (y, z) on the local x planes; one transpose x <-> y
//                     among all ranks; 1-D FFTs over x.
//   Pc > 1 (pencil):  1-D FFTs over z; transpose y <-> z within the row (same r, Pc ranks);
//                     1-D FFTs over y; transpose x <-> y within the column (same c, Pr
//                     ranks); 1-D FFTs over x.
//   output   rank (r, c) holds all x, y in split(NY, Pr, r), z in split(NZc, Pc, c)  [x][y][z]
//
// With --r2c the input is real and the z transform is real-to-complex: NZc = NZ/2 + 1
// complex values per z line; otherwise NZc = NZ. The received blocks of the x <-> y
// transpose arrive in rank order, which is x order, so that side needs no unpack; the
// other sides go through kernels::pack_row_pieces / unpack_row_pieces. Plans are made
// once, on the engine's own buffers, and reused by every call and every algorithm.
//
// Cutoff sphere (`sphere` > 0, slab c2c only): CPMD's transform (paper 002, s. 2.3 and
// 6.2). A plane-wave code keeps only the Fourier coefficients inside a cutoff sphere, so
// its transpose carries only the x lines ("sticks") whose (ky, kz) lies inside the sphere's
// disk: (ky / (NY/2))^2 + (kz / (NZ/2))^2 <= sphere^2, signed frequencies. The sticks are
// dealt round-robin over the ranks (as CPMD balances them), every block is padded to the
// largest rank's count, so the transpose is one regular all-to-all of blocks a fraction of
// the full slab's. Output: this rank's sticks, [stick][x] (sphere_sticks() says which);
// backward zero-fills the columns outside the disk.
#pragma once

#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "exchange.hpp"
#include "grid.hpp"
#include "kernels/fft_pack.hpp"
#include "kernels/fft_plan.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/topology.hpp"

namespace fft3d {

using cplx = std::complex<double>;

// Seconds spent by this rank in each kind of work during one call (added to).
struct StageTimes {
  double fft = 0, pack = 0, comm = 0;
};

// A cost model of the local work, for SimGrid runs whose simulated clock must not depend
// on this machine or its load (docs/results/fft3d_sim.md). When set, each FFT stage is
// charged its nominal flops (FftPlan::nominal_flops) at fft_flops_per_second, and each
// pack/unpack its bytes at copy_bytes_per_second, to the simulated host; 0 = not charged.
struct LocalWorkModel {
  double fft_flops_per_second = 0;
  double copy_bytes_per_second = 0;
  bool enabled() const { return fft_flops_per_second > 0 || copy_bytes_per_second > 0; }
};

class DistributedFft {
 public:
  // Collective over world. plan_flags: FFTW_ESTIMATE, FFTW_MEASURE, ...
  // overlap_chunks >= 2 also prepares forward_overlapped() (x <-> y transpose in that many
  // pipelined chunks).
  DistributedFft(const libcomm::Comm& world, Extent grid, ProcGrid procs, bool r2c,
                 unsigned plan_flags, int overlap_chunks = 0, double sphere = 0);
  ~DistributedFft();
  DistributedFft(const DistributedFft&) = delete;
  DistributedFft& operator=(const DistributedFft&) = delete;

  const Extent& grid() const { return grid_; }
  const ProcGrid& procs() const { return procs_; }
  bool r2c() const { return r2c_; }
  bool is_slab() const { return procs_.pc == 1; }
  std::size_t nz_complex() const { return nzc_; }

  // The part of the input this rank holds (z over NZ, real or complex values) and of the
  // spectrum (z over NZc).
  Box input_box() const;
  Box output_box() const;
  cplx* complex_input() { return a_.data(); }  // c2c: the input goes here
  double* real_input() { return real_.data(); }  // r2c: the input goes here
  // Where the last forward transform left the spectrum.
  cplx* output() {
    return sphere_ > 0 ? sphere_out_.data() : out_ ? out_ : procs_.pc == 1 ? a_.data() : b_.data();
  }
  // Cutoff sphere: the (y, z) of this rank's sticks, in output order; all sticks; the
  // largest count of a rank (each block carries that many per x plane).
  double sphere() const { return sphere_; }
  const std::vector<std::pair<std::size_t, std::size_t>>& sphere_sticks() const { return my_sticks_; }
  std::size_t sphere_total_sticks() const { return total_sticks_; }
  std::size_t sphere_max_sticks() const { return max_sticks_; }

  // Forward transform of the input into the output (the input is overwritten). Returns
  // what the transposes ran ("pairwise", "alltoallv:direct", "pairwise+alltoallv:direct").
  std::string forward(libcomm::AlltoallAlgo algo, const libcomm::AlltoallOptions& opts,
                      StageTimes& times);
  // The forward transform with the x <-> y transpose pipelined (heFFTe's pipelined
  // point-to-point reshape): the x planes of this rank are cut into chunks; chunk k's FFT
  // stage (slab: the 2-D y-z FFT; pencil: the y FFT) and pack run while the chunks before
  // it travel, each chunk a persistent libcomm plan (direct alltoallv, everything posted at
  // once, blocks landing straight in the x-pencil output). Needs overlap_chunks >= 2 and
  // Pr > 1. Returns what ran.
  std::string forward_overlapped(StageTimes& times);
  int overlap_chunks() const { return static_cast<int>(chunks_.size()); }
  // Backward (unnormalised: input times NX*NY*NZ) from the output into the input.
  std::string backward(libcomm::AlltoallAlgo algo, const libcomm::AlltoallOptions& opts,
                       StageTimes& times);

  // The switch tree of the world's ranks (--topology): each transpose's sub-communicator
  // gets the part of it its ranks see (Topology::restricted), for tree_scheduled. A
  // sub-communicator of fewer than 3 ranks needs no schedule and gets none.
  void attach_topology(const libcomm::Topology& world_tree);
  // The algorithm and mode of the uneven transposes (libcomm::alltoallv; default auto, b).
  void set_uneven_algorithm(libcomm::AlltoallvAlgo algo, libcomm::AlltoallvMode mode);
  // Per transpose: even (regular alltoall) or not (alltoallv), and its block size.
  std::string describe_transposes() const;

  // Charge local work by this model from now on (SimGrid builds; see LocalWorkModel).
  void set_local_work_model(const LocalWorkModel& m) { model_ = m; }

 private:
  Extent grid_;
  ProcGrid procs_;
  bool r2c_ = false;
  std::size_t nzc_ = 0;
  int r_ = 0, c_ = 0;
  Range xin_, yin_, yout_, zout_;

  MPI_Comm row_mpi_ = MPI_COMM_NULL, col_mpi_ = MPI_COMM_NULL;
  std::unique_ptr<libcomm::Comm> row_, col_;  // Pc ranks of row r; Pr ranks of column c
  std::vector<int> row_ranks_, col_ranks_;     // their world ranks, in their rank order

  kernels::FftBuffer<cplx> a_, b_;
  kernels::FftBuffer<double> real_;
  kernels::FftPlan first_fwd_, first_bwd_;  // slab: 2-D (y, z); pencil: 1-D z
  kernels::FftPlan y_fwd_, y_bwd_;          // pencil only
  kernels::FftPlan x_fwd_, x_bwd_;
  kernels::RowPieces t1_rows_, t1_mid_, t2_mid_;
  Exchange t1_fwd_, t1_bwd_, t2_fwd_, t2_bwd_;
  LocalWorkModel model_;

  // forward_overlapped(): per chunk of local x planes, its FFT stage, its pack layout, its
  // offset in the pack buffer (elements) and its persistent all-to-all.
  struct Chunk {
    kernels::FftPlan fft;
    kernels::RowPieces pack;
    std::size_t offset = 0;
    libcomm::Plan exchange;
  };
  std::vector<Chunk> chunks_;
  kernels::FftBuffer<cplx> overlap_out_;  // the overlapped forward's output [x][y_l][z_l]
  kernels::FftPlan x_fwd_c_;
  cplx* out_ = nullptr;
  void prepare_overlap(int chunks, unsigned flags);
  // The constructor's parts: the row and column sub-communicators, the transposes'
  // layouts and exchanges, the FFT plans.
  void make_sub_communicators(const libcomm::Comm& world);
  void prepare_transposes();
  void prepare_plans(unsigned flags);

  // Cutoff sphere: the flat y * NZ + z of each rank's sticks, this rank's (y, z), buffers,
  // the x transforms of this rank's sticks and the transposes.
  double sphere_ = 0;
  std::vector<std::vector<std::size_t>> sticks_of_;
  std::vector<std::pair<std::size_t, std::size_t>> my_sticks_;
  std::size_t total_sticks_ = 0, max_sticks_ = 0;
  kernels::FftBuffer<cplx> sphere_send_, sphere_recv_, sphere_out_;
  kernels::FftPlan sx_fwd_, sx_bwd_;
  Exchange sphere_fwd_, sphere_bwd_;
  void prepare_sphere(unsigned flags);
  std::string forward_sphere(libcomm::AlltoallAlgo algo, const libcomm::AlltoallOptions& opts, StageTimes& t);
  std::string backward_sphere(libcomm::AlltoallAlgo algo, const libcomm::AlltoallOptions& opts, StageTimes& t);

  // One FFT stage / one pack or unpack, timed into t.fft / t.pack and charged by model_.
  void fft_stage(StageTimes& t, const kernels::FftPlan& plan) const;
  void pack(StageTimes& t, const cplx* rows, cplx* blocks, const kernels::RowPieces& layout) const;
  void unpack(StageTimes& t, const cplx* blocks, cplx* rows, const kernels::RowPieces& layout) const;
  double copy_seconds(std::size_t elements) const;  // copying that many values; 0 without a copy model
  double copy_seconds(const kernels::RowPieces& layout) const;
};

}  // namespace fft3d
