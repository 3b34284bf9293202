// The regular all-to-all: its registry (the descriptors of the algorithm files, in enum
// order), its shape, options and argument check; the public entry points are calls of the
// driver (driver/driver.hpp).
#include <limits>

#include "../core/check.hpp"
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
    .summary = "the Auto policy (LIBCOMM_AUTO: online, model or table; README 'Tuning: what auto runs')"};

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

using Driver = detail::Driver<detail::AlltoallOp>;
using detail::AlltoallOp;
using detail::entry_of;

const std::vector<AlltoallAlgoInfo>& alltoall_algorithms() { return detail::algorithm_infos<AlltoallOp>(); }
std::string_view alltoall_algo_name(AlltoallAlgo a) { return detail::name_of<AlltoallOp>(a); }
AlltoallAlgo alltoall_algo_from_name(std::string_view name) { return detail::algorithm_named<AlltoallOp>(name); }
AlltoallAlgo alltoall_algo_from_env(AlltoallAlgo fallback) { return detail::algorithm_from_env<AlltoallOp>(fallback); }

AlltoallChoice choose_alltoall(AlltoallAlgo requested, std::size_t block_bytes, int p, const AlltoallOptions& opts) {
  require(p > 0, "choose_alltoall: P must be positive, got " + std::to_string(p));
  const NodeMap flat = NodeMap::one_rank_per_node(p);
  const AlltoallOp::Shape s = AlltoallOp::shape(p, block_bytes, flat, nullptr, opts);
  if (requested != AlltoallAlgo::Auto) return Driver::resolve_requested(requested, s, opts.allow_fallback);
  // Without a Comm: the model on one rank per node (what the paper 002 schemes' inter-node
  // step asks for its column of one rank per node).
  const detail::AutoAnswer m = detail::model_answer(Driver::question(s, nullptr));
  return AlltoallChoice(static_cast<AlltoallAlgo>(m.algo), m.reason);
}

AlltoallChoice choose_alltoall(AlltoallAlgo requested, std::size_t block_bytes, const Comm& comm,
                               const AlltoallOptions& opts) {
  return Driver::choose(requested, AlltoallOp::shape({nullptr, nullptr, block_bytes}, comm, opts), comm);
}

bool is_hierarchical(AlltoallAlgo a) { return entry_of<AlltoallOp>(a).node_map; }

Schedule alltoall_schedule(AlltoallAlgo a, int p) {
  require(p > 0, "alltoall_schedule: P must be positive, got " + std::to_string(p));
  const auto& e = entry_of<AlltoallOp>(a);
  require(e.extra.schedule != nullptr,
          "alltoall_schedule: '" + std::string(e.name) + "' is not a schedule of whole blocks");
  return e.extra.schedule(p);
}

StepProgram alltoall_program(AlltoallAlgo a, int nprocs, int rank, std::size_t block_bytes) {
  require(nprocs > 0 && rank >= 0 && rank < nprocs,
          "alltoall_program: rank " + std::to_string(rank) + " of P = " + std::to_string(nprocs) + " does not exist");
  const auto& e = entry_of<AlltoallOp>(a);
  require(e.program != nullptr, "alltoall_program: '" + std::string(e.name) + "' has no step program");
  const NodeMap flat = NodeMap::one_rank_per_node(nprocs);
  const AlltoallOptions o;
  return e.program(AlltoallOp::shape(nprocs, block_bytes, flat, nullptr, o), rank);
}

StepProgram hierarchical_alltoall_program(AlltoallAlgo scheme, const NodeMap& nodes, int rank,
                                          std::size_t block_bytes, AlltoallAlgo inter, bool library_collectives,
                                          bool shared_memory) {
  require(rank >= 0 && rank < nodes.num_ranks(), [&] {
    return "hierarchical_alltoall_program: rank " + std::to_string(rank) + " of P = " +
           std::to_string(nodes.num_ranks()) + " does not exist";
  });
  require(!is_hierarchical(inter), "hierarchical_alltoall_program: the inter-node algorithm must be a regular one");
  const auto& e = entry_of<AlltoallOp>(scheme);
  require(e.extra.scheme != nullptr,
          "hierarchical_program: '" + std::string(e.name) + "' is not a paper 002 scheme");
  const int n = nodes.num_nodes();
  const detail::InnerChoice inner = [&](std::size_t bytes) {
    AlltoallOptions o;
    o.allow_fallback = true;
    return choose_alltoall(inter, bytes, n, o).algo;
  };
  return e.extra.scheme(nodes, rank, block_bytes, inner, library_collectives, shared_memory);
}

AlltoallChoice alltoall(const void* send, void* recv, std::size_t block_bytes, const Comm& comm, AlltoallAlgo algo,
                        const AlltoallOptions& opts) {
  return Driver::blocking({send, recv, block_bytes}, comm, algo, opts);
}

Plan plan_alltoall(const Comm& comm, std::size_t block_bytes, AlltoallAlgo algo, const AlltoallOptions& opts) {
  return Driver::persistent({nullptr, nullptr, block_bytes}, comm, algo, opts);
}

Request ialltoall(const void* send, void* recv, std::size_t block_bytes, const Comm& comm, AlltoallAlgo algo,
                  const AlltoallOptions& opts) {
  return Driver::nonblocking({send, recv, block_bytes}, comm, algo, opts);
}

}  // namespace libcomm
