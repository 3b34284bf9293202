#include "distributed_fft.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "libcomm/alltoallv.hpp"
#include "libcomm/error.hpp"
#include "libcomm/sim.hpp"

namespace fft3d {

namespace {

using kernels::FftDim;
using kernels::FftKind;
using kernels::FftPlan;
using kernels::RowPieces;

// MPI_Wtime, not a host clock: under SimGrid it is the simulated clock (the stage then
// costs what the simulation charges for it), and it closes SMPI's compute burst.
// `modelled_seconds` (LocalWorkModel) is charged to the simulated host after the work.
template <class F>
void timed(double& acc, F&& f, double modelled_seconds = 0) {
  const double t0 = MPI_Wtime();
  f();
  if (modelled_seconds > 0) libcomm::sim::charge_seconds(modelled_seconds);
  acc += MPI_Wtime() - t0;
}

std::ptrdiff_t sd(std::size_t v) { return static_cast<std::ptrdiff_t>(v); }

// Row layout of `rows` rows of `row_len` elements cut into pieces piece(d) = (lo, n) * unit,
// blocks consecutive in peer order.
template <class PieceOf>
RowPieces row_pieces(std::size_t rows, std::size_t row_len, int peers, PieceOf piece) {
  RowPieces l;
  l.rows = rows;
  l.row_len = row_len;
  std::size_t off = 0;
  for (int d = 0; d < peers; ++d) {
    const auto [lo, n] = piece(d);
    l.piece_offset.push_back(lo);
    l.piece_len.push_back(n);
    l.block_offset.push_back(off);
    off += rows * n;
  }
  l.check();
  return l;
}

// The node map of the ranks `members` of world, for a sub-communicator's Comm.
libcomm::NodeMap restricted_nodes(const libcomm::Comm& world, const std::vector<int>& members) {
  std::vector<int> node_of;
  for (int m : members) node_of.push_back(world.nodes().node_of(m));
  return libcomm::NodeMap(node_of);
}

}  // namespace

DistributedFft::DistributedFft(const libcomm::Comm& world, Extent grid, ProcGrid procs, bool r2c,
                               unsigned flags, int overlap_chunks, double sphere)
    : grid_(grid), procs_(procs), r2c_(r2c), nzc_(r2c ? grid.nz / 2 + 1 : grid.nz), sphere_(sphere) {
  libcomm::require(sphere >= 0 && sphere <= 1, "fft3d: --sphere " + std::to_string(sphere) + " must lie in (0, 1]");
  libcomm::require(sphere == 0 || (procs.pc == 1 && !r2c && overlap_chunks == 0),
                   "fft3d: --sphere (CPMD's cutoff sphere) applies to the slab decomposition, complex-to-complex, "
                   "without --overlap");
  const int p = world.size();
  libcomm::require(grid.nx > 0 && grid.ny > 0 && grid.nz > 0,
                   "fft3d: grid " + grid.str() + " has a dimension of 0");
  libcomm::require(procs.pr >= 1 && procs.pc >= 1 && procs.pr * procs.pc == p,
                   "fft3d: process grid " + procs.str() + " does not match " +
                       std::to_string(p) + " ranks");
  r_ = world.rank() / procs.pc;
  c_ = world.rank() % procs.pc;
  const int pr = procs.pr, pc = procs.pc;
  xin_ = split(grid.nx, pr, r_);
  yin_ = split(grid.ny, pc, c_);
  yout_ = split(grid.ny, pr, r_);
  zout_ = split(nzc_, pc, c_);

  make_sub_communicators(world);
  const std::size_t s0 = xin_.n * yin_.n * nzc_;  // after the z (or y-z) transform
  const std::size_t s1 = xin_.n * grid.ny * zout_.n;  // y pencils: [x_l][y][z_l]
  const std::size_t s2 = grid.nx * yout_.n * zout_.n;  // x pencils: [x][y_l][z_l]
  const std::size_t words = std::max({s0, s1, s2, std::size_t{1}});
  a_ = kernels::FftBuffer<cplx>(words);
  b_ = kernels::FftBuffer<cplx>(words);
  if (r2c) real_ = kernels::FftBuffer<double>(std::max<std::size_t>(xin_.n * yin_.n * grid.nz, 1));
  prepare_transposes();
  prepare_plans(flags);
  if (overlap_chunks >= 2 && pr > 1) prepare_overlap(overlap_chunks, flags);
  if (sphere_ > 0) prepare_sphere(flags);
}

// Sub-communicators: the row (same r) for y <-> z, the column (same c) for x <-> y, each
// with the part of the node map its ranks cover.
void DistributedFft::make_sub_communicators(const libcomm::Comm& world) {
  const int pr = procs_.pr, pc = procs_.pc;
  for (int c = 0; c < pc; ++c) row_ranks_.push_back(r_ * pc + c);
  for (int r = 0; r < pr; ++r) col_ranks_.push_back(r * pc + c_);
  if (pc > 1) {
    MPI_Comm_split(world.mpi(), r_, c_, &row_mpi_);
    row_ = std::make_unique<libcomm::Comm>(row_mpi_, restricted_nodes(world, row_ranks_));
  }
  if (pr > 1) {
    MPI_Comm_split(world.mpi(), c_, r_, &col_mpi_);
    col_ = std::make_unique<libcomm::Comm>(col_mpi_, restricted_nodes(world, col_ranks_));
  }
}

// Transposes. T1 (row): stage 0 [x_l][y_l][zc] <-> blocks <-> mid [x_l][y][z_l].
// T2 (column): mid [x_l][y][z_l] <-> blocks; the other side is [x][y_l][z_l] directly.
void DistributedFft::prepare_transposes() {
  const int pr = procs_.pr, pc = procs_.pc;
  const std::size_t nx = grid_.nx, ny = grid_.ny, zl = zout_.n, cb = sizeof(cplx);
  const auto y_blocks = [&](int parts) {
    return row_pieces(xin_.n, ny * zl, parts, [&](int d) {
      const Range y = split(ny, parts, d);
      return std::pair{y.lo * zl, y.n * zl};
    });
  };
  if (pc > 1) {
    t1_rows_ = row_pieces(xin_.n * yin_.n, nzc_, pc, [&](int d) {
      const Range z = split(nzc_, pc, d);
      return std::pair{z.lo, z.n};
    });
    t1_mid_ = y_blocks(pc);
    std::vector<std::size_t> send(pc), recv(pc);
    for (int d = 0; d < pc; ++d) {
      send[d] = xin_.n * yin_.n * split(nzc_, pc, d).n;
      recv[d] = xin_.n * split(ny, pc, d).n * zl;
    }
    t1_fwd_ = Exchange(row_.get(), send, recv, cb);
    t1_bwd_ = Exchange(row_.get(), recv, send, cb);
  }
  if (pr > 1) {
    t2_mid_ = y_blocks(pr);
    std::vector<std::size_t> send(pr), recv(pr);
    for (int d = 0; d < pr; ++d) {
      send[d] = xin_.n * split(ny, pr, d).n * zl;
      recv[d] = split(nx, pr, d).n * yout_.n * zl;
    }
    t2_fwd_ = Exchange(col_.get(), send, recv, cb);
    t2_bwd_ = Exchange(col_.get(), recv, send, cb);
  }
}

// The plans of the first stage (slab: 2-D over (y, z) per local x plane; pencil: 1-D z),
// the y lines (pencil) and the x lines, all on the engine's own buffers (FFTW_MEASURE
// scribbles on them: plan first).
void DistributedFft::prepare_plans(unsigned flags) {
  const std::size_t nx = grid_.nx, ny = grid_.ny, nz = grid_.nz, zl = zout_.n;
  cplx *a = a_.data(), *b = b_.data();
  if (procs_.pc == 1 && !r2c_) {
    const std::vector<FftDim> dims{{sd(ny), sd(nz), sd(nz)}, {sd(nz), 1, 1}},
        batch{{sd(xin_.n), sd(ny * nzc_), sd(ny * nzc_)}};
    first_fwd_ = FftPlan::dft(FftKind::Forward, dims, batch, a, a, flags);
    first_bwd_ = FftPlan::dft(FftKind::Backward, dims, batch, a, a, flags);
  } else if (procs_.pc == 1) {
    first_fwd_ = FftPlan::r2c({{sd(ny), sd(nz), sd(nzc_)}, {sd(nz), 1, 1}},
                              {{sd(xin_.n), sd(ny * nz), sd(ny * nzc_)}}, real_.data(), a, flags);
    first_bwd_ = FftPlan::c2r({{sd(ny), sd(nzc_), sd(nz)}, {sd(nz), 1, 1}},
                              {{sd(xin_.n), sd(ny * nzc_), sd(ny * nz)}}, a, real_.data(), flags);
  } else {
    const std::size_t lines = xin_.n * yin_.n;
    if (!r2c_) {
      first_fwd_ = FftPlan::dft(FftKind::Forward, {{sd(nz), 1, 1}}, {{sd(lines), sd(nz), sd(nz)}}, a, a, flags);
      first_bwd_ = FftPlan::dft(FftKind::Backward, {{sd(nz), 1, 1}}, {{sd(lines), sd(nz), sd(nz)}}, a, a, flags);
    } else {
      first_fwd_ = FftPlan::r2c({{sd(nz), 1, 1}}, {{sd(lines), sd(nz), sd(nzc_)}}, real_.data(), a, flags);
      first_bwd_ = FftPlan::c2r({{sd(nz), 1, 1}}, {{sd(lines), sd(nzc_), sd(nz)}}, a, real_.data(), flags);
    }
    // y lines of [x_l][y][z_l]: stride z_l, batch over x_l and z_l.
    const std::vector<FftDim> ydims{{sd(ny), sd(zl), sd(zl)}};
    const std::vector<FftDim> ybatch{{sd(xin_.n), sd(ny * zl), sd(ny * zl)}, {sd(zl), 1, 1}};
    y_fwd_ = FftPlan::dft(FftKind::Forward, ydims, ybatch, b, b, flags);
    y_bwd_ = FftPlan::dft(FftKind::Backward, ydims, ybatch, b, b, flags);
  }
  // x lines of [x][y_l][z_l]: stride y_l * z_l, batch over the y_l * z_l contiguous lines.
  cplx* out = procs_.pc == 1 ? a : b;  // (output() of the full transform)
  const std::size_t plane = yout_.n * zl;
  x_fwd_ = FftPlan::dft(FftKind::Forward, {{sd(nx), sd(plane), sd(plane)}}, {{sd(plane), 1, 1}}, out, out, flags);
  x_bwd_ = FftPlan::dft(FftKind::Backward, {{sd(nx), sd(plane), sd(plane)}}, {{sd(plane), 1, 1}}, out, out, flags);
}

namespace {
// Signed frequency of index k on an n-point axis.
double signed_frequency(std::size_t k, std::size_t n) {
  return k <= n / 2 ? static_cast<double>(k) : static_cast<double>(k) - static_cast<double>(n);
}
}  // namespace

void DistributedFft::prepare_sphere(unsigned flags) {
  const int p = procs_.pr;
  const std::size_t nx = grid_.nx, ny = grid_.ny, nz = grid_.nz;
  const double ry = sphere_ * static_cast<double>(ny) / 2, rz = sphere_ * static_cast<double>(nz) / 2;
  sticks_of_.assign(static_cast<std::size_t>(p), {});
  for (std::size_t y = 0; y < ny; ++y)
    for (std::size_t z = 0; z < nz; ++z) {
      const double fy = signed_frequency(y, ny) / ry, fz = signed_frequency(z, nz) / rz;
      if (fy * fy + fz * fz > 1.0) continue;
      sticks_of_[total_sticks_ % static_cast<std::size_t>(p)].push_back(y * nz + z);
      ++total_sticks_;
    }
  for (const auto& s : sticks_of_) max_sticks_ = std::max(max_sticks_, s.size());
  for (std::size_t yz : sticks_of_[static_cast<std::size_t>(r_)]) my_sticks_.emplace_back(yz / nz, yz % nz);
  const std::size_t mine = my_sticks_.size(), m = max_sticks_;
  sphere_send_ = kernels::FftBuffer<cplx>(std::max<std::size_t>(static_cast<std::size_t>(p) * xin_.n * m, 1));
  sphere_recv_ = kernels::FftBuffer<cplx>(std::max<std::size_t>(nx * m, 1));
  sphere_out_ = kernels::FftBuffer<cplx>(std::max<std::size_t>(mine * nx, 1));
  if (mine > 0) {
    cplx* o = sphere_out_.data();
    sx_fwd_ = FftPlan::dft(FftKind::Forward, {{sd(nx), 1, 1}}, {{sd(mine), sd(nx), sd(nx)}}, o, o, flags);
    sx_bwd_ = FftPlan::dft(FftKind::Backward, {{sd(nx), 1, 1}}, {{sd(mine), sd(nx), sd(nx)}}, o, o, flags);
  }
  if (p > 1) {  // to rank d: [x_l][m] of d's sticks; from rank s: [x of s][m] of mine
    std::vector<std::size_t> send(static_cast<std::size_t>(p)), recv(static_cast<std::size_t>(p));
    for (int d = 0; d < p; ++d) {
      send[static_cast<std::size_t>(d)] = xin_.n * m;
      recv[static_cast<std::size_t>(d)] = split(nx, p, d).n * m;
    }
    sphere_fwd_ = Exchange(col_.get(), send, recv, sizeof(cplx));
    sphere_bwd_ = Exchange(col_.get(), recv, send, sizeof(cplx));
  }
}

std::string DistributedFft::forward_sphere(libcomm::AlltoallAlgo algo, const libcomm::AlltoallOptions& opts,
                                           StageTimes& t) {
  const int p = procs_.pr;
  const std::size_t nx = grid_.nx, plane = grid_.ny * grid_.nz, m = max_sticks_, xl = xin_.n;
  const std::size_t mine = my_sticks_.size();
  const cplx* a = a_.data();
  cplx* send = sphere_send_.data();
  cplx* recv = sphere_recv_.data();
  cplx* out = sphere_out_.data();
  fft_stage(t, first_fwd_);
  // Pack: to rank d, per local x plane, d's sticks (padded to m with zeros).
  timed(t.pack, [&] {
    for (int d = 0; d < p; ++d) {
      const auto& st = sticks_of_[static_cast<std::size_t>(d)];
      for (std::size_t x = 0; x < xl; ++x) {
        cplx* blk = send + (static_cast<std::size_t>(d) * xl + x) * m;
        for (std::size_t k = 0; k < st.size(); ++k) blk[k] = a[x * plane + st[k]];
        std::fill(blk + st.size(), blk + m, cplx{});
      }
    }
  }, copy_seconds(static_cast<std::size_t>(p) * xl * m));
  std::string ran = "local";
  if (p > 1) {
    timed(t.comm, [&] { ran = sphere_fwd_.run(send, recv, algo, opts); });
  } else {
    std::copy(send, send + xl * m, recv);
  }
  // Unpack: blocks arrive in rank order, which is x order: recv is [x][m]; out is [stick][x].
  timed(t.pack, [&] {
    for (std::size_t k = 0; k < mine; ++k)
      for (std::size_t x = 0; x < nx; ++x) out[k * nx + x] = recv[x * m + k];
  }, copy_seconds(mine * nx));
  if (mine > 0) fft_stage(t, sx_fwd_);
  return ran;
}

std::string DistributedFft::backward_sphere(libcomm::AlltoallAlgo algo, const libcomm::AlltoallOptions& opts,
                                            StageTimes& t) {
  const int p = procs_.pr;
  const std::size_t nx = grid_.nx, plane = grid_.ny * grid_.nz, m = max_sticks_, xl = xin_.n;
  const std::size_t mine = my_sticks_.size();
  cplx* a = a_.data();
  cplx* send = sphere_send_.data();
  cplx* recv = sphere_recv_.data();
  cplx* out = sphere_out_.data();
  if (mine > 0) fft_stage(t, sx_bwd_);
  timed(t.pack, [&] {  // [stick][x] -> [x][m] (recv's layout, the blocks of the x ranges in rank order)
    for (std::size_t x = 0; x < nx; ++x) {
      for (std::size_t k = 0; k < mine; ++k) recv[x * m + k] = out[k * nx + x];
      std::fill(recv + x * m + mine, recv + (x + 1) * m, cplx{});
    }
  }, copy_seconds(nx * m));
  std::string ran = "local";
  if (p > 1) {
    timed(t.comm, [&] { ran = sphere_bwd_.run(recv, send, algo, opts); });
  } else {
    std::copy(recv, recv + xl * m, send);
  }
  timed(t.pack, [&] {  // from rank d: [x_l][m] of d's sticks; the other columns are zero
    std::fill(a, a + xl * plane, cplx{});
    for (int d = 0; d < p; ++d) {
      const auto& st = sticks_of_[static_cast<std::size_t>(d)];
      for (std::size_t x = 0; x < xl; ++x) {
        const cplx* blk = send + (static_cast<std::size_t>(d) * xl + x) * m;
        for (std::size_t k = 0; k < st.size(); ++k) a[x * plane + st[k]] = blk[k];
      }
    }
  }, copy_seconds(static_cast<std::size_t>(p) * xl * m));
  fft_stage(t, first_bwd_);
  return ran;
}

void DistributedFft::prepare_overlap(int k_chunks, unsigned flags) {
  const int pr = procs_.pr;
  const std::size_t nx = grid_.nx, ny = grid_.ny, nz = grid_.nz, zl = zout_.n;
  const std::size_t plane = ny * zl;  // one local x plane before the x <-> y transpose
  overlap_out_ = kernels::FftBuffer<cplx>(std::max<std::size_t>(nx * yout_.n * zl, 1));
  const std::size_t out_plane = yout_.n * zl;
  x_fwd_c_ = FftPlan::dft(FftKind::Forward, {{sd(nx), sd(out_plane), sd(out_plane)}}, {{sd(out_plane), 1, 1}},
                          overlap_out_.data(), overlap_out_.data(), flags);
  cplx* a = a_.data();
  cplx* b = b_.data();
  libcomm::AlltoallvOptions post_all;
  post_all.mode = libcomm::AlltoallvMode::NonblockingSingle;
  for (int k = 0; k < k_chunks; ++k) {
    const Range xr = split(xin_.n, k_chunks, k);  // this chunk's local x planes
    Chunk ch;
    if (procs_.pc == 1) {  // the 2-D (y, z) FFT of the chunk's planes, on a
      const std::vector<FftDim> batch{{sd(xr.n), sd(ny * nzc_), sd(ny * nzc_)}};
      if (!r2c_)
        ch.fft = FftPlan::dft(FftKind::Forward, {{sd(ny), sd(nz), sd(nz)}, {sd(nz), 1, 1}}, batch,
                              a + xr.lo * plane, a + xr.lo * plane, flags);
      else
        ch.fft = FftPlan::r2c({{sd(ny), sd(nz), sd(nzc_)}, {sd(nz), 1, 1}}, {{sd(xr.n), sd(ny * nz), sd(ny * nzc_)}},
                              real_.data() + xr.lo * ny * nz, a + xr.lo * plane, flags);
    } else {  // the y FFT of the chunk's planes of [x_l][y][z_l], on b
      ch.fft = FftPlan::dft(FftKind::Forward, {{sd(ny), sd(zl), sd(zl)}}, {{sd(xr.n), sd(plane), sd(plane)}, {sd(zl), 1, 1}},
                            b + xr.lo * plane, b + xr.lo * plane, flags);
    }
    ch.pack = row_pieces(xr.n, plane, pr, [&](int d) {
      const Range y = split(ny, pr, d);
      return std::pair{y.lo * zl, y.n * zl};
    });
    ch.offset = xr.lo * plane;
    // To rank d of the column: the chunk's planes, y in d's range. From rank s: chunk k of
    // s's planes, which land at their x in the [x][y_l][z_l] output.
    std::vector<std::int64_t> sc(pr), sdis(pr), rc(pr), rdis(pr);
    for (int d = 0; d < pr; ++d) {
      constexpr std::size_t bytes = sizeof(cplx);  // libcomm counts bytes
      sc[d] = static_cast<std::int64_t>(ch.pack.piece_len[d] * xr.n * bytes);
      sdis[d] = static_cast<std::int64_t>((ch.offset + ch.pack.block_offset[d]) * bytes);
      const Range xs = split(nx, pr, d), part = split(xs.n, k_chunks, k);
      rc[d] = static_cast<std::int64_t>(part.n * out_plane * bytes);
      rdis[d] = static_cast<std::int64_t>((xs.lo + part.lo) * out_plane * bytes);
    }
    ch.exchange = libcomm::plan_alltoallv(*col_, sc, sdis, rc, rdis, libcomm::AlltoallvAlgo::Direct, post_all);
    chunks_.push_back(std::move(ch));
  }
}

DistributedFft::~DistributedFft() {
  row_.reset();
  col_.reset();
  if (row_mpi_ != MPI_COMM_NULL) MPI_Comm_free(&row_mpi_);
  if (col_mpi_ != MPI_COMM_NULL) MPI_Comm_free(&col_mpi_);
}

Box DistributedFft::input_box() const {
  Box b;
  b.lo = {xin_.lo, yin_.lo, 0};
  b.n = {xin_.n, yin_.n, grid_.nz};
  return b;
}

Box DistributedFft::output_box() const {
  Box b;
  b.lo = {0, yout_.lo, zout_.lo};
  b.n = {grid_.nx, yout_.n, zout_.n};
  return b;
}

namespace {
std::string join_ran(const std::string& t1, const std::string& t2) {
  if (t1.empty() && t2.empty()) return "local";
  if (t1.empty()) return t2;
  if (t2.empty() || t1 == t2) return t1;
  return t1 + "+" + t2;
}
}  // namespace

void DistributedFft::fft_stage(StageTimes& t, const kernels::FftPlan& plan) const {
  const double rate = model_.fft_flops_per_second;
  timed(t.fft, [&] { plan.execute(); }, rate > 0 ? plan.nominal_flops() / rate : 0.0);
}

double DistributedFft::copy_seconds(std::size_t elements) const {
  const double rate = model_.copy_bytes_per_second;
  return rate > 0 ? static_cast<double>(elements * sizeof(cplx)) / rate : 0.0;
}

double DistributedFft::copy_seconds(const kernels::RowPieces& layout) const {
  return copy_seconds(layout.elements());
}

void DistributedFft::pack(StageTimes& t, const cplx* rows, cplx* blocks,
                          const kernels::RowPieces& layout) const {
  timed(t.pack, [&] { kernels::pack_row_pieces(rows, blocks, layout); }, copy_seconds(layout));
}

void DistributedFft::unpack(StageTimes& t, const cplx* blocks, cplx* rows,
                            const kernels::RowPieces& layout) const {
  timed(t.pack, [&] { kernels::unpack_row_pieces(blocks, rows, layout); }, copy_seconds(layout));
}

std::string DistributedFft::forward(libcomm::AlltoallAlgo algo,
                                    const libcomm::AlltoallOptions& opts, StageTimes& t) {
  if (sphere_ > 0) return forward_sphere(algo, opts, t);
  cplx* a = a_.data();
  cplx* b = b_.data();
  out_ = nullptr;
  std::string ran1, ran2;
  fft_stage(t, first_fwd_);
  if (procs_.pc > 1) {
    pack(t, a, b, t1_rows_);
    timed(t.comm, [&] { ran1 = t1_fwd_.run(b, a, algo, opts); });
    unpack(t, a, b, t1_mid_);
    fft_stage(t, y_fwd_);
    if (procs_.pr > 1) {
      pack(t, b, a, t2_mid_);
      timed(t.comm, [&] { ran2 = t2_fwd_.run(a, b, algo, opts); });
    }
  } else if (procs_.pr > 1) {
    pack(t, a, b, t2_mid_);
    timed(t.comm, [&] { ran2 = t2_fwd_.run(b, a, algo, opts); });
  }
  fft_stage(t, x_fwd_);
  return join_ran(ran1, ran2);
}

std::string DistributedFft::forward_overlapped(StageTimes& t) {
  libcomm::require(!chunks_.empty(), "fft3d: forward_overlapped needs --overlap >= 2 and more than one process row");
  cplx* a = a_.data();
  cplx* b = b_.data();
  out_ = nullptr;
  std::string ran1;
  // src: the planes before the x <-> y transpose; dst: where they are packed.
  cplx* src = a;
  cplx* dst = b;
  if (procs_.pc > 1) {  // the z FFT and the y <-> z transpose as in forward()
    fft_stage(t, first_fwd_);
    pack(t, a, b, t1_rows_);
    timed(t.comm, [&] { ran1 = t1_fwd_.run(b, a, libcomm::AlltoallAlgo::Auto, {}); });
    unpack(t, a, b, t1_mid_);
    src = b;
    dst = a;
  }
  cplx* c = overlap_out_.data();
  for (std::size_t k = 0; k < chunks_.size(); ++k) {
    Chunk& ch = chunks_[k];
    fft_stage(t, ch.fft);
    pack(t, src + ch.offset, dst + ch.offset, ch.pack);
    timed(t.comm, [&] {
      ch.exchange.start(dst, c);
      for (std::size_t j = 0; j < k; ++j) chunks_[j].exchange.test();  // progress the ones in flight
    });
  }
  timed(t.comm, [&] {
    for (auto& ch : chunks_) ch.exchange.wait();
  });
  fft_stage(t, x_fwd_c_);
  out_ = c;
  return join_ran(ran1, "direct x " + std::to_string(chunks_.size()) + " chunks");
}

std::string DistributedFft::backward(libcomm::AlltoallAlgo algo,
                                     const libcomm::AlltoallOptions& opts, StageTimes& t) {
  if (sphere_ > 0) return backward_sphere(algo, opts, t);
  cplx* a = a_.data();
  cplx* b = b_.data();
  if (out_ != nullptr) {  // after forward_overlapped: the spectrum back where backward reads it
    cplx* standard = procs_.pc == 1 ? a : b;
    timed(t.pack, [&] { std::copy(out_, out_ + grid_.nx * yout_.n * zout_.n, standard); });
    out_ = nullptr;
  }
  std::string ran1, ran2;
  fft_stage(t, x_bwd_);
  if (procs_.pc > 1) {
    if (procs_.pr > 1) {
      timed(t.comm, [&] { ran2 = t2_bwd_.run(b, a, algo, opts); });
      unpack(t, a, b, t2_mid_);
    }
    fft_stage(t, y_bwd_);
    pack(t, b, a, t1_mid_);
    timed(t.comm, [&] { ran1 = t1_bwd_.run(a, b, algo, opts); });
    unpack(t, b, a, t1_rows_);
  } else if (procs_.pr > 1) {
    timed(t.comm, [&] { ran2 = t2_bwd_.run(a, b, algo, opts); });
    unpack(t, b, a, t2_mid_);
  }
  fft_stage(t, first_bwd_);
  return join_ran(ran1, ran2);
}

void DistributedFft::attach_topology(const libcomm::Topology& world_tree) {
  if (row_ && row_ranks_.size() >= 3) libcomm::attach_topology(*row_, world_tree.restricted(row_ranks_));
  if (col_ && col_ranks_.size() >= 3) libcomm::attach_topology(*col_, world_tree.restricted(col_ranks_));
}

void DistributedFft::set_uneven_algorithm(libcomm::AlltoallvAlgo algo, libcomm::AlltoallvMode mode) {
  for (Exchange* e : {&t1_fwd_, &t1_bwd_, &t2_fwd_, &t2_bwd_, &sphere_fwd_, &sphere_bwd_}) e->set_uneven(algo, mode);
}

std::string DistributedFft::describe_transposes() const {
  auto one = [](const std::string& name, const Exchange& e, int peers, const libcomm::Comm* comm) {
    if (peers <= 1) return std::string();
    const auto tree = comm ? libcomm::attached_topology(*comm) : nullptr;
    return name + (e.even() ? " even (" + std::to_string(e.block_bytes()) +
                                               " B blocks, libcomm::alltoall)"
                                         : " uneven (" + e.describe_uneven() + ")") +
           (tree ? " on a switch tree of " + std::to_string(tree->num_nodes() - tree->num_machines()) + " switch(es)"
                 : std::string());
  };
  if (sphere_ > 0)
    return "cutoff sphere " + std::to_string(sphere_) + ": " + std::to_string(total_sticks_) + " of " +
           std::to_string(grid_.ny * grid_.nz) + " x-lines, at most " + std::to_string(max_sticks_) +
           " per rank; " + one("x<->y over " + std::to_string(procs_.pr), sphere_fwd_, procs_.pr, col_.get());
  std::string s = one("y<->z over rows of " + std::to_string(procs_.pc), t1_fwd_, procs_.pc, row_.get());
  const std::string s2 = one("x<->y over columns of " + std::to_string(procs_.pr), t2_fwd_,
                             procs_.pr, col_.get());
  if (!s2.empty()) s += (s.empty() ? "" : "; ") + s2;
  return s.empty() ? "no transpose (1 rank)" : s;
}

}  // namespace fft3d
