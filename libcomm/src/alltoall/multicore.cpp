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
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "../core/mpi_bytes.hpp"
#include "alltoall_internal.hpp"
#include "libcomm/buffer.hpp"
#include "libcomm/sim.hpp"
#include "libcomm/alltoall.hpp"

namespace libcomm::detail {

namespace {

// A communicator split off the user's, freed with the hierarchy.
struct OwnedComm {
  MPI_Comm comm = MPI_COMM_NULL;
  OwnedComm() = default;
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
  ~OwnedComm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

struct Hierarchy {
  int node = 0, local = 0, node_size = 1, num_nodes = 1, cmax = 1;
  int max_columns = 1;        // columns the busiest process of this node plays
  std::vector<int> columns;   // the columns this process plays, ascending
  OwnedComm node_raw, leaders_raw;
  std::vector<std::unique_ptr<OwnedComm>> column_raw;
  std::unique_ptr<Comm> node_comm, leaders;  // leaders: only on local rank 0
  std::vector<Comm> column_comm;             // parallel to `columns`; member i = node i
};

std::shared_ptr<const Hierarchy> hierarchy_of(const Comm& comm) {
  if (auto h = comm.attachment("hierarchy")) return std::static_pointer_cast<const Hierarchy>(h);
  auto h = std::make_shared<Hierarchy>();
  const NodeMap& nm = comm.nodes();
  h->node = nm.node_of(comm.rank());
  h->local = nm.local_index(comm.rank());
  h->node_size = nm.node_size(h->node);
  h->num_nodes = nm.num_nodes();
  for (int n = 0; n < nm.num_nodes(); ++n) h->cmax = std::max(h->cmax, nm.node_size(n));
  h->max_columns = (h->cmax + h->node_size - 1) / h->node_size;
  for (int z = h->local; z < h->cmax; z += h->node_size) h->columns.push_back(z);

  const MPI_Comm base = comm.internal();
  check_mpi(MPI_Comm_split(base, h->node, h->local, &h->node_raw.comm), "MPI_Comm_split");
  h->node_comm = std::make_unique<Comm>(h->node_raw.comm, NodeMap(std::vector<int>(h->node_size, 0)));
  check_mpi(MPI_Comm_split(base, h->local == 0 ? 0 : MPI_UNDEFINED, h->node, &h->leaders_raw.comm),
            "MPI_Comm_split");
  if (h->local == 0)
    h->leaders = std::make_unique<Comm>(h->leaders_raw.comm, NodeMap::one_rank_per_node(h->num_nodes));
  for (int z = 0; z < h->cmax; ++z) {
    const bool plays = z % h->node_size == h->local;
    auto raw = std::make_unique<OwnedComm>();
    check_mpi(MPI_Comm_split(base, plays ? 0 : MPI_UNDEFINED, h->node, &raw->comm), "MPI_Comm_split");
    if (plays) {
      h->column_comm.emplace_back(raw->comm, NodeMap::one_rank_per_node(h->num_nodes));
      h->column_raw.push_back(std::move(raw));
    }
  }
  comm.attach("hierarchy", h);
  return h;
}

AlltoallOptions inner_options(const AlltoallOptions& opts) {
  AlltoallOptions o = opts;
  o.check_args = false;
  return o;
}

void copy_block(std::byte* dst, const std::byte* src, std::size_t b) {
  // Simulated payload (libcomm/buffer.hpp): nothing real to copy.
  if (b && !simulated_payload()) std::memcpy(dst, src, b);
  sim::charge_copy(static_cast<double>(b));  // SimGrid copy model, if set
}

}  // namespace

// One process on every node: the intra-node steps of all three schemes are the identity,
// so the scheme is just its inter-node algorithm, run on the user's buffers (no staging
// copies). Returns false when some node has more than one process.
bool run_one_process_per_node(const Hierarchy& h, const std::byte* send, std::byte* recv,
                              std::size_t b, const Comm& comm, const AlltoallOptions& opts) {
  if (h.cmax != 1) return false;
  alltoall(send, recv, b, comm, opts.inter_node, inner_options(opts));
  return true;
}

void send_aggregate_alltoall(const std::byte* send, std::byte* recv, std::size_t b,
                             const Comm& comm, const AlltoallOptions& opts) {
  const auto h = hierarchy_of(comm);
  if (run_one_process_per_node(*h, send, recv, b, comm, opts)) return;
  const NodeMap& nm = comm.nodes();
  const auto N = static_cast<std::size_t>(h->num_nodes), s = static_cast<std::size_t>(h->node_size);
  const auto C = static_cast<std::size_t>(h->max_columns), cmax = static_cast<std::size_t>(h->cmax);

  // Step 1 (intra-node): to local rank w, for each column c it plays (z = w + c*s) and each
  // node V, my block for (V, z). Layout [w][c][V].
  const std::size_t intra_block = C * N * b;
  std::byte* out1 = comm.scratch(3, s * intra_block);
  std::byte* in1 = comm.scratch(4, s * intra_block);
  for (std::size_t w = 0; w < s; ++w)
    for (std::size_t c = 0; c < C; ++c) {
      const std::size_t z = w + c * s;
      if (z >= cmax) break;
      for (std::size_t V = 0; V < N; ++V)
        if (z < static_cast<std::size_t>(nm.node_size(static_cast<int>(V))))
          copy_block(out1 + (w * C + c) * N * b + V * b,
                     send + static_cast<std::size_t>(nm.ranks_of_node(static_cast<int>(V))[z]) * b, b);
    }
  alltoall(out1, in1, intra_block, *h->node_comm, AlltoallAlgo::Native, inner_options(opts));

  // Step 2 (inter-node), per played column: to node V the bundle [x] of m_{(me-node,x) -> (V,z)}.
  const std::size_t bundle = cmax * b;
  std::byte* out2 = comm.scratch(5, N * bundle);
  std::byte* in2 = comm.scratch(6, N * bundle);
  for (std::size_t c = 0; c < h->columns.size(); ++c) {
    for (std::size_t V = 0; V < N; ++V)
      for (std::size_t x = 0; x < s; ++x)
        copy_block(out2 + V * bundle + x * b, in1 + x * intra_block + (c * N + V) * b, b);
    alltoall(out2, in2, bundle, h->column_comm[c], opts.inter_node, inner_options(opts));
    if (c != 0) continue;  // a column this process only represents: nothing arrives for it
    for (std::size_t W = 0; W < N; ++W) {
      const auto& theirs = nm.ranks_of_node(static_cast<int>(W));
      for (std::size_t x = 0; x < theirs.size(); ++x)
        copy_block(recv + static_cast<std::size_t>(theirs[x]) * b, in2 + W * bundle + x * b, b);
    }
  }
}

void recv_distribute_alltoall(const std::byte* send, std::byte* recv, std::size_t b,
                              const Comm& comm, const AlltoallOptions& opts) {
  const auto h = hierarchy_of(comm);
  if (run_one_process_per_node(*h, send, recv, b, comm, opts)) return;
  const NodeMap& nm = comm.nodes();
  const auto N = static_cast<std::size_t>(h->num_nodes), s = static_cast<std::size_t>(h->node_size);
  const auto C = static_cast<std::size_t>(h->max_columns), cmax = static_cast<std::size_t>(h->cmax);

  // Step 1 (inter-node), per played column z: to node V the bundle [y] of my blocks for
  // (V, y) when z is my own local rank (padding in the columns I only represent).
  const std::size_t bundle = cmax * b;
  const std::size_t intra_block = C * N * b;
  std::byte* out1 = comm.scratch(3, N * bundle);
  std::byte* in1 = comm.scratch(4, N * bundle);
  std::byte* out2 = comm.scratch(5, s * intra_block);
  std::byte* in2 = comm.scratch(6, s * intra_block);
  for (std::size_t c = 0; c < h->columns.size(); ++c) {
    if (c == 0)
      for (std::size_t V = 0; V < N; ++V) {
        const auto& theirs = nm.ranks_of_node(static_cast<int>(V));
        for (std::size_t y = 0; y < theirs.size(); ++y)
          copy_block(out1 + V * bundle + y * b, send + static_cast<std::size_t>(theirs[y]) * b, b);
      }
    alltoall(out1, in1, bundle, h->column_comm[c], opts.inter_node, inner_options(opts));
    // in1[W][y] = m_{(W, z) -> (my node, y)}; regroup for the distribution: to local rank y,
    // layout [y][c][W].
    for (std::size_t y = 0; y < s; ++y)
      for (std::size_t W = 0; W < N; ++W)
        copy_block(out2 + (y * C + c) * N * b + W * b, in1 + W * bundle + y * b, b);
  }
  // Step 2 (intra-node distribution).
  alltoall(out2, in2, intra_block, *h->node_comm, AlltoallAlgo::Native, inner_options(opts));
  // in2[w][c][W] = m_{(W, z) -> me} with z = w + c*s, when node W has a process z.
  for (std::size_t w = 0; w < s; ++w)
    for (std::size_t c = 0; c < C; ++c) {
      const std::size_t z = w + c * s;
      if (z >= cmax) break;
      for (std::size_t W = 0; W < N; ++W) {
        const auto& theirs = nm.ranks_of_node(static_cast<int>(W));
        if (z < theirs.size())
          copy_block(recv + static_cast<std::size_t>(theirs[z]) * b, in2 + (w * C + c) * N * b + W * b, b);
      }
    }
}

void leader_alltoall(const std::byte* send, std::byte* recv, std::size_t b, const Comm& comm,
                     const AlltoallOptions& opts) {
  const auto h = hierarchy_of(comm);
  if (run_one_process_per_node(*h, send, recv, b, comm, opts)) return;
  const NodeMap& nm = comm.nodes();
  const auto N = static_cast<std::size_t>(h->num_nodes), s = static_cast<std::size_t>(h->node_size);
  const auto P = static_cast<std::size_t>(comm.size()), cmax = static_cast<std::size_t>(h->cmax);
  const MPI_Comm node = h->node_comm->internal();

  // Gather every process's P blocks at the leader: gathered[x][dst rank].
  const MpiBytes row(P * b);
  std::byte* gathered = comm.scratch(3, h->local == 0 ? s * P * b : 0);
  check_mpi(MPI_Gather(send, row.count(), row.type(), gathered, row.count(), row.type(), 0, node),
            "MPI_Gather");
  std::byte* scatter = comm.scratch(4, h->local == 0 ? s * P * b : 0);
  if (h->local == 0) {
    // To node V the bundle [x][y] = m_{(me-node, x) -> (V, y)}, padded to cmax x cmax.
    const std::size_t bundle = cmax * cmax * b;
    std::byte* out = comm.scratch(5, N * bundle);
    std::byte* in = comm.scratch(6, N * bundle);
    for (std::size_t V = 0; V < N; ++V) {
      const auto& theirs = nm.ranks_of_node(static_cast<int>(V));
      for (std::size_t x = 0; x < s; ++x)
        for (std::size_t y = 0; y < theirs.size(); ++y)
          copy_block(out + V * bundle + (x * cmax + y) * b,
                     gathered + x * P * b + static_cast<std::size_t>(theirs[y]) * b, b);
    }
    alltoall(out, in, bundle, *h->leaders, opts.inter_node, inner_options(opts));
    // scatter[y][src rank] = m_{src -> (me-node, y)}
    for (std::size_t W = 0; W < N; ++W) {
      const auto& theirs = nm.ranks_of_node(static_cast<int>(W));
      for (std::size_t x = 0; x < theirs.size(); ++x)
        for (std::size_t y = 0; y < s; ++y)
          copy_block(scatter + y * P * b + static_cast<std::size_t>(theirs[x]) * b,
                     in + W * bundle + (x * cmax + y) * b, b);
    }
  }
  check_mpi(MPI_Scatter(scatter, row.count(), row.type(), recv, row.count(), row.type(), 0, node),
            "MPI_Scatter");
}

}  // namespace libcomm::detail
