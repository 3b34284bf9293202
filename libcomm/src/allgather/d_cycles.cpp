// All-to-all broadcast with d Hamiltonian cycles of a binary d-cube (paper 004, s. 4.2.1
// after Johnsson and Ho): each block is cut into d subblocks (Fig. 20 partitioning:
// beta = ceil(n / d) elements in the first gamma subblocks, beta - 1 in the rest). Subblock
// i follows the Gray-code transition sequence shifted by i: in step u (0 <= u <= 2^d - 2)
// it is exchanged across dimension (t_u + i) mod d, so the d subblocks of a step use d
// different channels at once (posted non-blocking together). After step u, local slot
// (u + 1, i) of node pa holds subblock i of node pa ^ sh^i(G(u + 1)) (s. 4.2.1, 4.2.3).
//   index computation (d_cycles):      that formula places each subblock; Reorder::Direct
//                                      receives it straight into its final place,
//                                      Reorder::Staged into slot order, then reorders;
//   index motion (d_cycles_im):        each subblock travels with its origin index (a
//                                      32-bit integer, as on the CM-200) in fixed-size
//                                      slots; the reordering pass reads every moved index
//                                      and checks it against the computed one (a Check
//                                      step: a step program's addresses are fixed when it
//                                      is built, so the index places nothing by itself,
//                                      but a corrupt one fails the run on that rank).
#include <algorithm>
#include <limits>

#include "allgather_internal.hpp"

namespace libcomm::detail {

namespace {

// Subblock i of a block of n bytes in units of `unit` bytes (whole elements).
cube::Part byte_part(std::size_t n, int d, int i, std::size_t unit) {
  if (unit == 0 || n % unit != 0) unit = 1;
  const cube::Part e = cube::subblock(n / unit, d, i);
  return {e.offset * unit, e.size * unit};
}

StepProgram dcycles_program(const Blocks& b, int rank, Reorder reorder, bool index_motion, std::size_t unit) {
  const int p = static_cast<int>(b.count.size());
  const auto me = static_cast<std::uint32_t>(rank);
  const int d = cube::log2_exact(p);
  require(d >= 0, "allgather d_cycles: rank " + std::to_string(me) +
                      ": needs a power-of-two number of ranks, P = " + std::to_string(p));
  ProgramBuilder pb(index_motion ? "d_cycles_im" : reorder == Reorder::Staged ? "d_cycles (staged)" : "d_cycles",
                    rank, p);
  const std::size_t mine = b.count[me];
  pb.set_extents(mine, b.total);
  if (d == 0) {
    pb.copy(0, {Area::Send, 0, mine}, {Area::Recv, 0, mine});
    return std::move(pb).program();
  }
  const auto part = [&](std::uint32_t origin, int i) { return byte_part(b.count[origin], d, i, unit); };
  const auto partner = [&](int u, int i) { return static_cast<int>(me ^ (1u << cube::dcycles_dim(d, u, i))); };
  const int steps = p - 1;  // step u runs in stage u

  if (!index_motion && reorder == Reorder::Direct) {
    pb.copy(0, {Area::Send, 0, mine}, {Area::Recv, b.displ[me], mine});
    for (int u = 0; u < steps; ++u)
      for (int i = 0; i < d; ++i) {
        const std::uint32_t in = cube::dcycles_broadcast_origin(d, me, u + 1, i);
        const std::uint32_t out = cube::dcycles_broadcast_origin(d, me, u, i);
        const cube::Part pi = part(in, i), po = part(out, i);
        pb.exchange(static_cast<std::uint32_t>(u), partner(u, i), {Area::Recv, b.displ[out] + po.offset, po.size},
                    partner(u, i), {Area::Recv, b.displ[in] + pi.offset, pi.size});
      }
    return std::move(pb).program();
  }

  // Staged: scratch slot (j, i), j = 0 .. 2^d - 1, in arrival order. With index motion every
  // slot starts with the 32-bit origin index and has room for the largest subblock i.
  const std::size_t header = index_motion ? sizeof(std::uint32_t) : 0;
  std::vector<std::size_t> cap(static_cast<std::size_t>(d));
  for (int i = 0; i < d; ++i) cap[i] = header + byte_part(b.max, d, i, unit).size;
  const auto origin = [&](int j, int i) { return cube::dcycles_broadcast_origin(d, me, j, i); };
  std::vector<std::size_t> at(static_cast<std::size_t>(p) * d + 1, 0);
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < d; ++i) {
      const std::size_t k = static_cast<std::size_t>(j) * d + i;
      at[k + 1] = at[k] + (index_motion ? cap[i] : part(origin(j, i), i).size);
    }
  const std::size_t base = pb.scratch(at.back());
  const auto slot = [&](int j, int i, std::size_t n) {
    return ByteRange{Area::Scratch, base + at[static_cast<std::size_t>(j) * d + i], n};
  };
  // The index each slot's header must hold (index motion): program constants, one per rank.
  std::vector<ByteRange> index(static_cast<std::size_t>(p));
  if (index_motion)
    for (std::uint32_t r = 0; r < static_cast<std::uint32_t>(p); ++r) index[r] = pb.constant(&r, sizeof r);
  for (int i = 0; i < d; ++i) {  // slot (0, i): the node's own subblock i
    const cube::Part pi = part(me, i);
    if (index_motion) pb.copy(0, index[me], slot(0, i, header));
    pb.copy(0, {Area::Send, pi.offset, pi.size}, {Area::Scratch, slot(0, i, 0).offset + header, pi.size});
  }
  for (int u = 0; u < steps; ++u)
    for (int i = 0; i < d; ++i) {
      // Header and subblock; with index motion a slot has room for the largest subblock i.
      const auto stage = static_cast<std::uint32_t>(u);
      pb.exchange(stage, partner(u, i), slot(u, i, header + part(origin(u, i), i).size), partner(u, i),
                  slot(u + 1, i, header + part(origin(u + 1, i), i).size));
    }
  // The reordering pass (stage 2^d - 1).
  const auto last = static_cast<std::uint32_t>(steps);
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < d; ++i) {
      const std::uint32_t o = origin(j, i);
      if (index_motion) pb.check(last, index[o], slot(j, i, header));
      const cube::Part po = part(o, i);
      pb.copy(last, {Area::Scratch, slot(j, i, 0).offset + header, po.size},
              {Area::Recv, b.displ[o] + po.offset, po.size});
    }
  return std::move(pb).program();
}

StepProgram index_computation(const Blocks& b, int rank, const AllgatherOptions& o) {
  return dcycles_program(b, rank, o.reorder, false, o.element_bytes);
}
StepProgram index_motion(const Blocks& b, int rank, const AllgatherOptions& o) {
  return dcycles_program(b, rank, Reorder::Staged, true, o.element_bytes);
}

// s. 4.2: P - 1 steps, in each the d subblocks (n / d bytes) of d cycles at once.
double index_computation_cost(const AllgatherOp::Shape& s, const CostParams& c) {
  const int d = cube::log2_exact(s.p);
  if (d < 0) return std::numeric_limits<double>::infinity();
  if (d == 0) return 0;  // one rank: nothing moves
  const double n = static_cast<double>(s.largest);
  const double reorder = s.opts->reorder == Reorder::Staged ? cost::copy(c, s.p * n) : 0.0;
  return (s.p - 1) * cost::dcycles_step(layout_of(s), c, n, std::min<double>(d, n / s.opts->element_bytes), d) + reorder;
}

// s. 6.1: the same steps, each subblock with its 4-byte index, then the reordering pass
// (which also checks every moved index).
double index_motion_cost(const AllgatherOp::Shape& s, const CostParams& c) {
  const int d = cube::log2_exact(s.p);
  if (d < 0) return std::numeric_limits<double>::infinity();
  if (d == 0) return 0;
  const double n = static_cast<double>(s.largest);
  return (s.p - 1) * cost::dcycles_step(layout_of(s), c, n + 4.0 * d, d, d) + 2 * cost::copy(c, s.p * n);
}

}  // namespace

constexpr std::string_view kCubeFallbackWhy =
    "d Hamiltonian cycles of a binary d-cube (paper 004, s. 4.2); the single cycle exists for any P";

extern const AllgatherAlgorithm d_cycles_allgather{
    .algo = AllgatherAlgo::DCycles, .name = "d_cycles",
    .summary = "d Hamiltonian cycles of a binary d-cube, d channels per step, index computation; P = 2^d",
    .paper = "paper 004, s. 4.2", .unfit = needs_cube<AllgatherOp::Shape>, .applies = "P a power of two",
    .fallback = AllgatherAlgo::Ring, .fallback_why = kCubeFallbackWhy, .cost = index_computation_cost,
    .program = blocks_program<index_computation>};

extern const AllgatherAlgorithm d_cycles_im_allgather{
    .algo = AllgatherAlgo::DCyclesIndexMotion, .name = "d_cycles_im",
    .summary = "d_cycles with the indices moved along with the data, then reordering", .paper = "paper 004, s. 6.1",
    .unfit = needs_cube<AllgatherOp::Shape>, .applies = "P a power of two", .fallback = AllgatherAlgo::Ring,
    .fallback_why = kCubeFallbackWhy, .cost = index_motion_cost, .program = blocks_program<index_motion>};

}  // namespace libcomm::detail
