// Multi-core aware all-to-all (paper 002, section 5).
//
//   leader           all data of a node is gathered to its leader (local rank 0), the
//                    leaders run an inter-node all-to-all, each leader scatters.
//   send_aggregate   (SA) step 1, intra-node: local rank x receives from every process of
//                    its node everything destined to local rank x of every node; step 2,
//                    inter-node: processes with equal local rank run an all-to-all.
//   recv_distribute  (RD) the inter-node all-to-all among equal local ranks first (each
//                    process sends all it has for a node to its partner there), then an
//                    intra-node distribution.
// The inter-node all-to-all is any regular algorithm (AlltoallOptions::inter_node,
// default auto: the size-based choice of paper 002, section 2.4).
//
// Nodes of unequal size (the paper assumes equal ones). Column z is the set of processes
// with local rank z; the largest node has cmax columns. A node with s < cmax processes is
// represented in column z by its process z mod s, which therefore takes part in several
// columns (in increasing z, so the column collectives cannot deadlock). In a column where
// a node is only represented, its process sends the node's data for that column's real
// members (SA) or receives the data meant for the node (RD), and the other direction
// carries padding. Every node's bundle in a column is padded to cmax blocks (cmax^2 for
// the leaders), so the inter-node exchange stays a regular all-to-all. On equal nodes
// there is no padding and each process is in exactly one column, as in the paper.
//
// Each scheme is a step program (libcomm/program.hpp) on sub-communicators (channels):
// the node, the columns a process plays, the leaders. The inter-node all-to-all is the
// chosen algorithm's own program embedded on the column (or leader) channel.
//
// Intra-node steps through shared memory (paper 002, s. 3 and 5: "all cores of a node copy
// data from the send buffers to a shared buffer"), when the processes of every node share
// memory: an MPI-3 window per node (Area::Shared), one copy into it, a node barrier, one
// copy out of it. The inter-node all-to-all reads (SA, leader) or writes (RD, leader) the
// window itself, and on a blocked node map (node V holds ranks V*s .. V*s+s-1) it reads the
// send buffer (RD) or writes the receive buffer (SA) directly, so each scheme makes one copy
// of each block:
//   SA      copy in (warm: the process's own send buffer), barrier, column all-to-alls
//   RD      column all-to-alls into the window, barrier, copy out (cold: the network wrote it)
//   leader  copy in, barrier, the leaders' all-to-all window to window, barrier, copy out
// Window layouts, b-byte blocks, cmax the largest node size:
//   SA  W[z][V][x]   = m_{(U,x) -> (V,z)}: column z's out-going bundles ([x] padded to cmax)
//   RD  R[z][W][y]   = m_{(W,z) -> (U,y)}: column z's incoming bundles
//   leader G[V][x][y] = m_{(U,x) -> (V,y)}, I[W][x][y] = m_{(W,x) -> (U,y)}
// The window's first member allocates it; run k uses half k mod 2, so a fast process's
// next run never overwrites what a slow one still reads (its barrier orders it after the
// previous run of every member).
//
// Without shared memory (a node map that spans machines) the intra-node steps are messages,
// the fallback: in a blocking run the MPI library's all-to-all on the node (and a native
// inter-node step the library's on the column), a library collective step; a non-blocking or
// persistent plan uses point-to-point there instead (the linear algorithm, which is what the
// library's basic all-to-all does): two requests in flight could post their library
// collectives on a sub-communicator in different orders on different ranks, while
// point-to-point messages carry each request's own tag. The leader's gather and scatter are
// point-to-point messages on the node channel.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "../runtime/mpi_bytes.hpp"
#include "../runtime/comm_cache.hpp"
#include "../runtime/node_channel.hpp"
#include "../runtime/plan_state.hpp"
#include "alltoall_internal.hpp"
#include "libcomm/alltoall.hpp"

namespace libcomm::detail {

// The sub-communicators of a Comm's node map, made once (collectively) and attached to it.
struct Hierarchy {
  std::shared_ptr<const NodeChannel> node;  // the node and whether its processes share memory
  OwnedComm leaders;                        // only on local rank 0
  std::vector<std::unique_ptr<OwnedComm>> columns;  // the columns this process plays, ascending
  // Comms of the played columns (the inner algorithm's choice asks the first): made for
  // every played column in ascending order, as the splits are, so that no rank waits in a
  // column's duplication for a rank still duplicating another.
  std::vector<Comm> column_comms;
};

namespace {

// Made by the first hierarchical call on comm (collective, like every call) and kept.
std::shared_ptr<const Hierarchy> hierarchy_of(const Comm& comm) {
  CommCache& cache = comm.cache();
  if (cache.hierarchy) return cache.hierarchy;
  auto h = std::make_shared<Hierarchy>();
  const NodeMap& nm = comm.nodes();
  const int node = nm.node_of(comm.rank()), local = nm.local_index(comm.rank()), size = nm.node_size(node);
  const int cmax = Layout::of(nm).ppn;
  const MPI_Comm base = comm.internal();
  h->node = node_channel_of(comm);
  check_mpi(MPI_Comm_split(base, local == 0 ? 0 : MPI_UNDEFINED, node, &h->leaders.comm), "MPI_Comm_split");
  for (int z = 0; z < cmax; ++z) {  // member of column z: node V's process z mod size(V)
    const bool plays = z % size == local;
    auto raw = std::make_unique<OwnedComm>();
    check_mpi(MPI_Comm_split(base, plays ? 0 : MPI_UNDEFINED, node, &raw->comm), "MPI_Comm_split");
    if (plays) {
      h->column_comms.emplace_back(raw->comm, NodeMap::one_rank_per_node(nm.num_nodes()));
      h->columns.push_back(std::move(raw));
    }
  }
  cache.hierarchy = h;
  return h;
}

// Builds one rank's program of a scheme: the layout of paper 002, s. 5 on the node map.
class SchemeBuilder {
 public:
  SchemeBuilder(std::string_view scheme, const NodeMap& nm, int rank, std::size_t b, const InnerChoice& inner,
                bool library, bool shared)
      : nm_(nm), me_(rank), b_(b), inner_(inner), library_(library), shared_(shared),
        pb_(std::string(scheme), rank, nm.num_ranks()) {
    node_ = nm.node_of(rank);
    local_ = nm.local_index(rank);
    s_ = static_cast<std::size_t>(nm.node_size(node_));
    n_ = static_cast<std::size_t>(nm.num_nodes());
    cmax_ = static_cast<std::size_t>(Layout::of(nm).ppn);
    c_ = (cmax_ + s_ - 1) / s_;
    p_ = static_cast<std::size_t>(nm.num_ranks());
    blocked_ = true;  // node V holds ranks V*cmax .. V*cmax + cmax - 1
    for (std::size_t v = 0; v < n_; ++v)
      for (std::size_t y = 0; y < cmax_; ++y)
        blocked_ = blocked_ && y < node_size(v) && static_cast<std::size_t>(rank_of(v, y)) == v * cmax_ + y;
    pb_.set_extents(p_ * b, p_ * b);
    // Channels in the order Hierarchy holds their communicators: node, columns, leaders.
    node_ch_ = add_channel("node " + std::to_string(node_), nm.ranks_of_node(node_));
    for (std::size_t z = static_cast<std::size_t>(local_); z < cmax_; z += s_)
      column_ch_.push_back(add_channel("column " + std::to_string(z), column_members(z)));
    if (local_ == 0) leaders_ch_ = add_channel("leaders", column_members(0));  // the nodes' local ranks 0
  }

  StepProgram leader() {
    if (cmax_ == 1) return one_process_per_node();
    if (shared_) return leader_shared();
    const std::size_t row = p_ * b_;
    if (local_ != 0) {  // gather to the leader, the scattered row back
      pb_.send(0, 0, {Area::Send, 0, row}, 0, TagKind::Data, node_ch_);
      pb_.recv(0, 0, {Area::Recv, 0, row}, 0, TagKind::Data, node_ch_);
      return std::move(pb_).program();
    }
    const std::size_t gathered = pb_.scratch(s_ * row);  // [x][dst rank]
    pb_.copy(0, {Area::Send, 0, row}, {Area::Scratch, gathered, row});
    for (std::size_t x = 1; x < s_; ++x)
      pb_.recv(0, static_cast<int>(x), {Area::Scratch, gathered + x * row, row}, 0, TagKind::Data, node_ch_);
    // To node V the bundle [x][y] = m_{(me-node, x) -> (V, y)}, padded to cmax x cmax.
    const std::size_t bundle = cmax_ * cmax_ * b_;
    const std::size_t out = pb_.scratch(n_ * bundle), in = pb_.scratch(n_ * bundle);
    for (std::size_t v = 0; v < n_; ++v)
      for (std::size_t x = 0; x < s_; ++x)
        for (std::size_t y = 0; y < node_size(v); ++y)
          pb_.copy(1, {Area::Scratch, gathered + x * row + rank_of(v, y) * b_, b_},
                   {Area::Scratch, out + v * bundle + (x * cmax_ + y) * b_, b_});
    const std::uint32_t t = exchange(1, leaders_ch_, out, in, bundle, n_, true);
    // Scatter: row y holds m_{src -> (me-node, y)} in source rank order; row 0 is this rank's.
    const std::size_t scatter = pb_.scratch(s_ * row);
    for (std::size_t w = 0; w < n_; ++w)
      for (std::size_t x = 0; x < node_size(w); ++x)
        for (std::size_t y = 0; y < s_; ++y) {
          const ByteRange from{Area::Scratch, in + w * bundle + (x * cmax_ + y) * b_, b_};
          const std::size_t at = rank_of(w, x) * b_;
          pb_.copy(t, from, y == 0 ? ByteRange{Area::Recv, at, b_} : ByteRange{Area::Scratch, scatter + y * row + at, b_});
        }
    for (std::size_t y = 1; y < s_; ++y)
      pb_.send(t, static_cast<int>(y), {Area::Scratch, scatter + y * row, row}, t, TagKind::Data, node_ch_);
    return std::move(pb_).program();
  }

  StepProgram send_aggregate() {
    if (cmax_ == 1) return one_process_per_node();
    if (shared_) return send_aggregate_shared();
    // Step 1 (intra-node): to local rank w, for each column c it plays (z = w + c s) and each
    // node V, my block for (V, z). Layout [w][c][V].
    const std::size_t intra = c_ * n_ * b_;
    const std::size_t out1 = pb_.scratch(s_ * intra), in1 = pb_.scratch(s_ * intra);
    copy_intra(0, out1, true);
    std::uint32_t t = exchange(0, node_ch_, out1, in1, intra, s_, false);
    // Step 2 (inter-node), per played column: to node V the bundle [x] of m_{(me-node, x) -> (V, z)}.
    const std::size_t bundle = cmax_ * b_;
    const std::size_t out2 = pb_.scratch(n_ * bundle), in2 = pb_.scratch(n_ * bundle);
    for (std::size_t c = 0; c < column_ch_.size(); ++c) {
      for (std::size_t v = 0; v < n_; ++v)
        for (std::size_t x = 0; x < s_; ++x)
          pb_.copy(t, {Area::Scratch, in1 + x * intra + (c * n_ + v) * b_, b_},
                   {Area::Scratch, out2 + v * bundle + x * b_, b_});
      t = exchange(t, column_ch_[c], out2, in2, bundle, n_, true);
      if (c == 0) unpack_by_node(t, in2, bundle);  // in a column it only represents nothing arrives for it
    }
    return std::move(pb_).program();
  }

  StepProgram recv_distribute() {
    if (cmax_ == 1) return one_process_per_node();
    if (shared_) return recv_distribute_shared();
    // Step 1 (inter-node), per played column: to node V the bundle [y] of my blocks for
    // (V, y) (in the columns this process only represents, the same bundle as padding).
    const std::size_t bundle = cmax_ * b_, intra = c_ * n_ * b_;
    const std::size_t out1 = pb_.scratch(n_ * bundle), in1 = pb_.scratch(n_ * bundle);
    const std::size_t out2 = pb_.scratch(s_ * intra), in2 = pb_.scratch(s_ * intra);
    pack_by_node(Area::Scratch, out1, bundle);
    std::uint32_t t = 0;
    for (std::size_t c = 0; c < column_ch_.size(); ++c) {
      t = exchange(t, column_ch_[c], out1, in1, bundle, n_, true);
      // in1[W][y] = m_{(W, z) -> (my node, y)}; to local rank y, layout [y][c][W].
      for (std::size_t y = 0; y < s_; ++y)
        for (std::size_t w = 0; w < n_; ++w)
          pb_.copy(t, {Area::Scratch, in1 + w * bundle + y * b_, b_},
                   {Area::Scratch, out2 + (y * c_ + c) * n_ * b_ + w * b_, b_});
    }
    // Step 2 (intra-node distribution): in2[w][c][W] = m_{(W, z) -> me}, z = w + c s.
    t = exchange(t, node_ch_, out2, in2, intra, s_, false);
    copy_intra(t, in2, false);
    return std::move(pb_).program();
  }

 private:
  // ---- Through the node's shared window ----

  // SA: every process copies each of its blocks into W[z][V][x] (z, V: the block's
  // destination); after the node barrier, column z's all-to-all sends W[z] (bundles of
  // cmax blocks) and receives [W][x'] = m_{(W,x') -> me}, into the receive buffer itself
  // when the node map is blocked. In a column this process only represents nothing arrives
  // for it (padding).
  StepProgram send_aggregate_shared() {
    const std::size_t bundle = cmax_ * b_, column = n_ * bundle;
    pb_.set_shared(node_ch_, cmax_ * column);
    for (std::size_t v = 0; v < n_; ++v)
      for (std::size_t z = 0; z < node_size(v); ++z)
        pb_.copy(0, {Area::Send, rank_of(v, z) * b_, b_},
                 {Area::Shared, z * column + v * bundle + static_cast<std::size_t>(local_) * b_, b_});
    std::uint32_t t = pb_.barrier(1, node_ch_);
    const bool direct = blocked_;
    const std::size_t in = direct ? 0 : pb_.scratch(column);
    std::size_t pad = 0;
    for (std::size_t c = 0; c < column_ch_.size(); ++c) {
      const std::size_t z = static_cast<std::size_t>(local_) + c * s_;
      const ByteRange from{Area::Shared, z * column, column};
      if (c != 0 && pad == 0) pad = pb_.scratch(column);
      const ByteRange to = c != 0 ? ByteRange{Area::Scratch, pad, column}
                           : direct ? ByteRange{Area::Recv, 0, column}
                                    : ByteRange{Area::Scratch, in, column};
      t = exchange_areas(t, column_ch_[c], from, to, bundle, n_, true);
    }
    if (!direct) unpack_by_node(t, in, bundle);
    return std::move(pb_).program();
  }

  // RD: column z's all-to-all sends to node V the bundle [y] of this process's blocks for
  // (V, y) (the send buffer itself when the node map is blocked; in a column it only
  // represents, the same bytes as padding) and receives into R[z]; after the node barrier
  // every process copies out what its node received for it.
  StepProgram recv_distribute_shared() {
    const std::size_t bundle = cmax_ * b_, column = n_ * bundle;
    pb_.set_shared(node_ch_, cmax_ * column);
    ByteRange out{Area::Send, 0, column};
    if (!blocked_) {
      out = {Area::Scratch, pb_.scratch(column), column};
      pack_by_node(Area::Scratch, out.offset, bundle);
    }
    std::uint32_t t = 0;
    for (std::size_t c = 0; c < column_ch_.size(); ++c) {
      const std::size_t z = static_cast<std::size_t>(local_) + c * s_;
      t = exchange_areas(t, column_ch_[c], out, {Area::Shared, z * column, column}, bundle, n_, true);
    }
    t = pb_.barrier(t, node_ch_);
    for (std::size_t z = 0; z < cmax_; ++z)
      for (std::size_t w = 0; w < n_; ++w)
        if (z < node_size(w))
          pb_.copy_cold(t, {Area::Shared, z * column + w * bundle + static_cast<std::size_t>(local_) * b_, b_},
                        {Area::Recv, rank_of(w, z) * b_, b_});
    return std::move(pb_).program();
  }

  // Leader: every process copies its blocks into G[V][x][y]; after a node barrier the
  // leader's all-to-all sends G's bundles to the other leaders and receives I[W][x][y];
  // after a second barrier every process copies out its blocks.
  StepProgram leader_shared() {
    const std::size_t bundle = cmax_ * cmax_ * b_, half = n_ * bundle;
    pb_.set_shared(node_ch_, 2 * half);
    const std::size_t x = static_cast<std::size_t>(local_);
    pack_by_node(Area::Shared, x * cmax_ * b_, bundle);
    std::uint32_t t = pb_.barrier(1, node_ch_);
    if (local_ == 0) t = exchange_areas(t, leaders_ch_, {Area::Shared, 0, half}, {Area::Shared, half, half}, bundle, n_, true);
    // (the others wait for it in the barrier; every member's barrier starts at the same
    // stage or later, which the stage numbers need not agree on)
    t = pb_.barrier(t, node_ch_);
    for (std::size_t w = 0; w < n_; ++w)
      for (std::size_t u = 0; u < node_size(w); ++u)
        pb_.copy_cold(t, {Area::Shared, half + w * bundle + (u * cmax_ + x) * b_, b_},
                      {Area::Recv, rank_of(w, u) * b_, b_});
    return std::move(pb_).program();
  }

  std::size_t node_size(std::size_t v) const { return static_cast<std::size_t>(nm_.node_size(static_cast<int>(v))); }
  int rank_of(std::size_t v, std::size_t x) const { return nm_.ranks_of_node(static_cast<int>(v))[x]; }

  // Column z's members: node V's process z mod size(V), in node order.
  std::vector<int> column_members(std::size_t z) const {
    std::vector<int> members;
    for (std::size_t v = 0; v < n_; ++v) members.push_back(rank_of(v, z % node_size(v)));
    return members;
  }

  // The intra-node layout [w][c][V] at scratch `at` (local rank w, its c-th column
  // z = w + c s, node V): filled from the send buffer (into) or emptied into the receive buffer.
  void copy_intra(std::uint32_t stage, std::size_t at, bool into) {
    for (std::size_t w = 0; w < s_; ++w)
      for (std::size_t c = 0; c < c_ && w + c * s_ < cmax_; ++c)
        for (std::size_t v = 0; v < n_; ++v) {
          if (w + c * s_ >= node_size(v)) continue;
          const ByteRange slot{Area::Scratch, at + (w * c_ + c) * n_ * b_ + v * b_, b_};
          const ByteRange own{into ? Area::Send : Area::Recv, rank_of(v, w + c * s_) * b_, b_};
          pb_.copy(stage, into ? own : slot, into ? slot : own);
        }
  }

  // Stage 0: this rank's block for process y of node V to `at` + V * bundle + y * b.
  void pack_by_node(Area area, std::size_t at, std::size_t bundle) {
    for (std::size_t v = 0; v < n_; ++v)
      for (std::size_t y = 0; y < node_size(v); ++y)
        pb_.copy(0, {Area::Send, rank_of(v, y) * b_, b_}, {area, at + v * bundle + y * b_, b_});
  }

  // The block from process x of node W at scratch `at` + W * bundle + x * b to the receive buffer.
  void unpack_by_node(std::uint32_t stage, std::size_t at, std::size_t bundle) {
    for (std::size_t w = 0; w < n_; ++w)
      for (std::size_t x = 0; x < node_size(w); ++x)
        pb_.copy(stage, {Area::Scratch, at + w * bundle + x * b_, b_}, {Area::Recv, rank_of(w, x) * b_, b_});
  }

  // One process on every node: the intra-node steps are the identity, so the scheme is
  // its inter-node algorithm on the whole communicator (no staging copies).
  StepProgram one_process_per_node() {
    exchange_areas(0, 0, {Area::Send, 0, p_ * b_}, {Area::Recv, 0, p_ * b_}, b_, p_, true);
    return std::move(pb_).program();
  }

  // An all-to-all of `members` blocks of `block` bytes from scratch `out` to scratch `in` on
  // `channel` from `stage`; returns the stage in which its result may be read.
  std::uint32_t exchange(std::uint32_t stage, std::uint8_t channel, std::size_t out, std::size_t in,
                         std::size_t block, std::size_t members, bool inter) {
    return exchange_areas(stage, channel, {Area::Scratch, out, members * block}, {Area::Scratch, in, members * block},
                          block, members, inter);
  }

  std::uint32_t exchange_areas(std::uint32_t stage, std::uint8_t channel, ByteRange from, ByteRange to,
                               std::size_t block, std::size_t members, bool inter) {
    if (block == 0) return stage;
    // Intra-node: the library's all-to-all (blocking runs) or linear. Inter-node: the
    // chosen algorithm's program, or the library's when it is native.
    AlltoallAlgo a = inter ? inner_(block) : AlltoallAlgo::Native;
    if (a == AlltoallAlgo::Native && library_) {
      pb_.alltoall(stage, channel, from, to, stage);
      return stage + 1;
    }
    if (a == AlltoallAlgo::Native) a = AlltoallAlgo::Linear;
    const int index = channel == 0 ? me_ : my_index(channel);
    const NodeMap flat = NodeMap::one_rank_per_node(static_cast<int>(members));
    const AlltoallOptions o;
    const auto column = AlltoallOp::shape(static_cast<int>(members), block, flat, nullptr, o);
    return pb_.embed(entry_of<AlltoallOp>(a).program(column, index), stage, channel, from, to);
  }

  int my_index(std::uint8_t channel) const {
    const auto& m = members_[channel - 1];
    return static_cast<int>(std::find(m.begin(), m.end(), me_) - m.begin());
  }

  std::uint8_t add_channel(std::string name, std::vector<int> members) {
    members_.push_back(members);
    return static_cast<std::uint8_t>(pb_.add_channel(std::move(name), std::move(members)));
  }

  const NodeMap& nm_;
  int me_;
  std::size_t b_;
  const InnerChoice& inner_;
  bool library_;
  bool shared_;          // intra-node steps through the node's shared window
  bool blocked_ = false;  // node V holds ranks V*cmax .. V*cmax + cmax - 1
  ProgramBuilder pb_;
  int node_ = 0, local_ = 0;
  std::size_t s_ = 1, n_ = 1, cmax_ = 1, c_ = 1, p_ = 1;
  std::uint8_t node_ch_ = 0, leaders_ch_ = 0;
  std::vector<std::uint8_t> column_ch_;
  std::vector<std::vector<int>> members_;  // of channel c at c - 1
};

// A scheme's program builder (its descriptor's Extra::scheme): `build` of SchemeBuilder.
template <StepProgram (SchemeBuilder::*build)(), Literal name>
StepProgram scheme_program(const NodeMap& nodes, int rank, std::size_t b, const InnerChoice& inner,
                           bool library_collectives, bool shared_memory) {
  SchemeBuilder sb(name.view(), nodes, rank, b, inner, library_collectives, shared_memory);
  return (sb.*build)();
}

// The scheme's plan on comm's sub-communicators (made once per Comm).
template <const AlltoallAlgorithm& e>
std::shared_ptr<PlanState> plan(const PlanCall<AlltoallOp>& call) {
  const Comm& comm = call.comm;
  const AlltoallOptions& opts = *call.shape.opts;
  const bool blocking = call.form == Form::Blocking;
  const auto h = hierarchy_of(comm);
  AlltoallOptions inner_opts = opts;
  inner_opts.check_args = false;
  // The inter-node algorithm: the table's or the model's choice on a column (online cannot
  // measure inside a plan that is being built: the model decides then).
  const InnerChoice inner = [&](std::size_t bytes) {
    return choose_alltoall_in_plan(opts.inter_node, bytes, h->column_comms.front(), inner_opts).algo;
  };
  StepProgram prog = e.extra.scheme(comm.nodes(), comm.rank(), call.shape.block, inner, blocking,
                                    h->node->shared_memory && opts.node_shared_memory);
  std::vector<MPI_Comm> channels = {h->node->node.comm};
  for (const auto& c : h->columns) channels.push_back(c->comm);
  if (h->leaders.comm != MPI_COMM_NULL) channels.push_back(h->leaders.comm);
  return program_plan(comm, std::move(prog), call.choice.reason(), !blocking, std::move(channels), h);
}

std::string needs_regular_inter_node(const AlltoallOp::Shape& s) {
  if (!is_hierarchical(s.opts->inter_node)) return "";
  return "needs a regular inter-node algorithm, not " + std::string(alltoall_algo_name(s.opts->inter_node));
}

constexpr double kNever = std::numeric_limits<double>::infinity();

// The inter-node step: the column's algorithm (the model's pick on the column's own shape
// for auto) among p nodes with `block`-byte bundles, the node's link shared by `link_share`,
// and the copy of the rank's own bundle (a whole bundle here, not one block).
double inter_node(int p, double block, double link_share, const CostParams& c, AlltoallAlgo inter) {
  if (p <= 1) return cost::copy(c, block);
  AlltoallOptions o;
  const NodeMap flat = NodeMap::one_rank_per_node(p);
  const auto column = AlltoallOp::shape(p, static_cast<std::size_t>(block), flat, nullptr, o);
  AlltoallAlgo algo = inter;
  if (algo == AlltoallAlgo::Auto) {
    double best = kNever;
    for (const auto& e : AlltoallOp::algorithms()) {
      if (e.cost == nullptr || (e.unfit != nullptr && !e.unfit(column).empty())) continue;
      const double t = e.cost(column, c);
      if (t < best) best = t, algo = e.algo;
    }
  }
  CostParams shared = c;  // the node's columns share its link
  shared.beta_scale *= c.inter_flows(link_share);
  const auto& e = entry_of<AlltoallOp>(algo);
  return e.cost != nullptr ? e.cost(column, shared) + cost::copy(c, block) : kNever;
}

// The intra-node exchange of a scheme: through the node's shared window (one copy of the
// rank's P blocks, then a node barrier), or, without shared memory, the library's
// all-to-all among the node's ranks of bundles of `nodes` blocks.
double intra_node(const AlltoallOp::Shape& s, const Layout& l, const CostParams& c) {
  if (s.opts->node_shared_memory) return cost::copy(c, static_cast<double>(s.p) * s.block) + cost::node_barrier(l, c);
  const Layout node{l.ppn, 1, l.ppn};
  return cost::all_at_once(node, c, static_cast<double>(l.nodes) * s.block);
}

// Paper 002, s. 5: the leader gathers its node's P blocks per process, runs the all-to-all
// among the N leaders with bundles of ppn^2 blocks alone on the link, and scatters.
double leader_cost(const AlltoallOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  if (l.ppn == 1) return kNever;  // one rank per node: nothing to aggregate
  const double b = static_cast<double>(s.block);
  return 2 * intra_node(s, l, c) + inter_node(l.nodes, b * l.ppn * l.ppn, 1, c, s.opts->inter_node);
}

// SA: the intra-node exchange, then ppn column all-to-alls among the N nodes with bundles
// of ppn blocks, at once on the node's link. RD: the same two steps in the other order (the
// copy out of the window is cold).
double columns_cost(const AlltoallOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  if (l.ppn == 1) return kNever;
  const double b = static_cast<double>(s.block);
  return intra_node(s, l, c) + inter_node(l.nodes, b * l.ppn, l.ppn, c, s.opts->inter_node);
}

}  // namespace

extern const AlltoallAlgorithm leader_alltoall{
    .algo = AlltoallAlgo::Leader, .name = "leader",
    .summary = "gather to one leader per node, all-to-all among leaders, scatter", .paper = "paper 002, s. 5",
    .unfit = needs_regular_inter_node, .applies = "any node map, with a regular inter-node algorithm",
    .cost = leader_cost, .plan = plan<leader_alltoall>, .node_memory = true, .node_map = true,
    .extra = {.scheme = scheme_program<&SchemeBuilder::leader, "leader">}};

extern const AlltoallAlgorithm send_aggregate_alltoall{
    .algo = AlltoallAlgo::SendAggregate, .name = "send_aggregate",
    .summary = "SA: intra-node exchange, then all-to-all among equal local ranks", .paper = "paper 002, s. 5",
    .unfit = needs_regular_inter_node, .applies = "any node map, with a regular inter-node algorithm",
    .cost = columns_cost, .plan = plan<send_aggregate_alltoall>, .node_memory = true, .node_map = true,
    .extra = {.scheme = scheme_program<&SchemeBuilder::send_aggregate, "send_aggregate">}};

extern const AlltoallAlgorithm recv_distribute_alltoall{
    .algo = AlltoallAlgo::RecvDistribute, .name = "recv_distribute",
    .summary = "RD: all-to-all among equal local ranks, then intra-node distribution", .paper = "paper 002, s. 5",
    .unfit = needs_regular_inter_node, .applies = "any node map, with a regular inter-node algorithm",
    .cost = columns_cost, .plan = plan<recv_distribute_alltoall>, .node_memory = true, .node_map = true,
    .extra = {.scheme = scheme_program<&SchemeBuilder::recv_distribute, "recv_distribute">}};

}  // namespace libcomm::detail
