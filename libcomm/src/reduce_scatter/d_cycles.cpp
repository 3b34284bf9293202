// All-to-all reduction with d Hamiltonian cycles of a binary d-cube (paper 004, s. 4.2.2
// and 4.2.3, Figs. 12-19): the broadcast's data motion reversed. Block j (destined for
// rank j) is cut into d subblocks (Fig. 20 partitioning); the partial of subblock (j, i)
// starts at node j ^ sh^i(G(2^d - 1)) and in step u travels from
//   j ^ sh^i(G(2^d - 1 - u))   to   j ^ sh^i(G(2^d - 2 - u)),
// across dimension (t_u + i) mod d; each node on the way combines its own contribution, and
// after step 2^d - 2 it arrives complete at node j. Block j's path is block 0's path
// translated by exclusive-or with j, so node pa handles in step u, for each location i,
// exactly one block to send (pa ^ sh^i(G(2^d - 1 - u))) and one to receive
// (pa ^ sh^i(G(2^d - 2 - u))): d exchanges on d different channels per step, posted
// together. The departure lounge is the send buffer (step 0) or the partial combined in
// the previous step; the arrival lounge (two per location, alternating) is combined with
// the node's own data; the last step arrives in the receive buffer.
#include <algorithm>
#include <limits>

#include "reduce_scatter_internal.hpp"

namespace libcomm::detail {

namespace {

StepProgram program(const ReduceBlocks& b, int rank, const ReduceScatterOptions&) {
  const int p = static_cast<int>(b.count.size());
  const auto me = static_cast<std::uint32_t>(rank);
  const int d = cube::log2_exact(p);
  require(d >= 0, "reduce_scatter d_cycles: rank " + std::to_string(me) +
                      ": needs a power-of-two number of ranks, P = " + std::to_string(p));
  ProgramBuilder pb("d_cycles", rank, p);
  pb.set_reduction(b.type, b.op, b.es);
  pb.set_extents(b.bytes(b.total), b.bytes(b.count[me]));
  // This node's contribution to subblock (j, i).
  const auto own = [&](std::uint32_t j, int i) {
    const cube::Part pt = cube::subblock(b.count[j], d, i);
    return ByteRange{Area::Send, b.bytes(b.displ[j] + pt.offset), b.bytes(pt.size)};
  };
  if (d == 0) {
    pb.copy(0, own(0, 0), {Area::Recv, 0, b.bytes(b.count[0])});
    return std::move(pb).program();
  }
  // Per location i: two lounges of the largest subblock i.
  std::vector<std::size_t> lounge[2];
  for (auto& l : lounge)
    for (int i = 0; i < d; ++i) l.push_back(pb.scratch(b.bytes(cube::subblock(b.max, d, i).size)));
  std::vector<ByteRange> out(static_cast<std::size_t>(d));
  const int last = p - 2;
  for (int u = 0; u <= last; ++u) {
    const auto stage = static_cast<std::uint32_t>(u);
    for (int i = 0; i < d; ++i) {
      const int partner = static_cast<int>(me ^ (1u << cube::dcycles_dim(d, u, i)));
      const std::uint32_t js = cube::dcycles_reduce_send_block(d, me, i, u);
      const std::uint32_t jr = cube::dcycles_reduce_recv_block(d, me, i, u);
      const ByteRange mine = own(jr, i);
      // u == last: jr == me, subblock i of this node's result.
      const ByteRange in = u == last ? ByteRange{Area::Recv, b.bytes(cube::subblock(b.count[me], d, i).offset), mine.bytes}
                                     : ByteRange{Area::Scratch, lounge[u % 2][i], mine.bytes};
      pb.exchange(stage, partner, u == 0 ? own(js, i) : out[i], partner, in);
      pb.reduce(stage + 1, mine, in);
      out[i] = in;
    }
  }
  return std::move(pb).program();
}

// s. 4.2.2: P - 1 steps, d subblocks at once, each combined.
double predicted_time(const ReduceScatterOp::Shape& s, const CostParams& c) {
  const int d = cube::log2_exact(s.p);
  if (d < 0) return std::numeric_limits<double>::infinity();
  if (d == 0) return 0;  // one rank: nothing moves
  const double n = static_cast<double>(s.largest);
  const double elements = n / static_cast<double>(elem_size(s.type));
  return (s.p - 1) * (cost::dcycles_step(layout_of(s), c, n, std::min<double>(d, elements), d) + cost::combine(c, n));
}

}  // namespace

extern const ReduceScatterAlgorithm d_cycles_reduce_scatter{
    .algo = ReduceScatterAlgo::DCycles, .name = "d_cycles",
    .summary = "d Hamiltonian cycles, reversed broadcast motion, xor translation per block; P = 2^d",
    .paper = "paper 004, s. 4.2.2, Figs. 12-19", .unfit = needs_cube<ReduceScatterOp::Shape>,
    .applies = "P a power of two", .fallback = ReduceScatterAlgo::Ring,
    .fallback_why = "the d cycles of the broadcast, reversed (paper 004, s. 4.2.2); the single cycle exists for any P",
    .cost = predicted_time, .program = blocks_program<program>};

}  // namespace libcomm::detail
