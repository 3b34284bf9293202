// The regular all-to-all: its registry (the descriptors of the algorithm files, in enum
// order), its shape, options and argument check; the public entry points are calls of the
// driver (driver/driver.hpp).
#include <limits>

#include "../runtime/check.hpp"
#include "../runtime/comm_cache.hpp"
#include "alltoall_internal.hpp"
#include "libcomm/hierarchical.hpp"

namespace libcomm {

namespace detail {

extern const AlltoallAlgorithm auto_alltoall, native_alltoall, linear_alltoall, ring_alltoall,
    ring_sendrecv_alltoall, pairwise_alltoall, factor_alltoall, factor_grouped_alltoall, bruck_alltoall,
    clustered_factor_alltoall, clustered_factor_fill_alltoall, leader_alltoall, send_aggregate_alltoall,
    recv_distribute_alltoall, tree_scheduled_alltoall, tree_scheduled_barrier_alltoall;

const AlltoallAlgorithm auto_alltoall{
    .algo = AlltoallAlgo::Auto, .name = "auto",
    .summary = "the Auto policy (LIBCOMM_AUTO: online, model or table; README 'Tuning: what auto runs')", .paper = ""};

std::span<const AlltoallAlgorithm> AlltoallOp::algorithms() {
  static const auto all = registry<AlltoallOp>(
      {&auto_alltoall, &native_alltoall, &linear_alltoall, &ring_alltoall, &ring_sendrecv_alltoall,
       &pairwise_alltoall, &factor_alltoall, &factor_grouped_alltoall, &bruck_alltoall, &clustered_factor_alltoall,
       &clustered_factor_fill_alltoall, &leader_alltoall, &send_aggregate_alltoall, &recv_distribute_alltoall,
       &tree_scheduled_alltoall, &tree_scheduled_barrier_alltoall});
  return all;
}

AlltoallOp::Shape AlltoallOp::shape(int p, std::size_t block, const NodeMap& nodes, const Topology* tree,
                                    const Options& o) {
  Shape s;
  s.p = p;
  s.nodes = &nodes;
  s.largest = s.block = block;
  s.total = block * static_cast<std::size_t>(p);
  s.key_bytes = s.decision_bytes = block;
  s.topology = tree != nullptr;
  s.tree = tree;
  s.opts = &o;
  return s;
}

AlltoallOp::Shape AlltoallOp::shape(const Args& a, const Comm& comm, const Options& o) {
  return shape(comm.size(), a.block, comm.nodes(), comm.cache().topology.get(), o);
}

std::uint64_t AlltoallOp::options(const Shape& s) {
  return ((static_cast<std::uint64_t>(s.opts->inter_node) * 2 + s.opts->one_matching_per_step) * 2 +
          s.opts->allow_fallback) * 2 + s.opts->node_shared_memory;
}

ArgumentCheck AlltoallOp::argument_check(const Args& a, const Shape& s, const Comm&, Algo algo, const Options& o,
                                         bool have_buffers) {
  ArgumentCheck c;
  const std::size_t b = a.block;
  const auto limit = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
  if (b > limit / static_cast<std::size_t>(s.p)) {
    c.local = "block_bytes " + std::to_string(b) + " x P " + std::to_string(s.p) + " overflows the address space";
  } else if (have_buffers && b > 0 && (a.send == nullptr || a.recv == nullptr)) {
    c.local = std::string(a.send == nullptr ? "send" : "recv") + " buffer is null";
  } else if (have_buffers && b > 0) {
    const auto* sp = static_cast<const std::byte*>(a.send);
    const auto* rp = static_cast<const std::byte*>(a.recv);
    const std::size_t n = b * static_cast<std::size_t>(s.p);
    if (sp < rp + n && rp < sp + n) c.local = "send and recv buffers overlap";
  }
  c.sizes = b;
  c.mode = static_cast<std::uint64_t>(algo) * 2048 + static_cast<std::uint64_t>(o.inter_node) * 2 +
           o.one_matching_per_step;
  return c;
}

std::string AlltoallOp::sizes_differ(const Args& a, std::uint64_t max, std::uint64_t min) {
  return "block_bytes differ across ranks (min " + std::to_string(min) + ", max " + std::to_string(max) +
         "); this rank passed " + std::to_string(a.block);
}

std::string AlltoallOp::modes_differ(Algo algo, const Options& o) {
  return "ranks asked for different algorithms (this rank: " + std::string(alltoall_algo_name(algo)) +
         ", inter-node " + std::string(alltoall_algo_name(o.inter_node)) + ")";
}

void AlltoallOp::check_agreement(const Args& a, const Comm& comm, const Options&) {
  const SameField fields[] = {{"block_bytes", a.block}};
  check_same_on_all_ranks(comm, "alltoall", fields);
}

}  // namespace detail

}  // namespace libcomm
