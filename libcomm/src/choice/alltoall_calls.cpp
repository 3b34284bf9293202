// The public calls of the regular all-to-all (libcomm/alltoall.hpp): each is a call of the one
// driver (driver.hpp) on the operation its folder defines.
#include "../alltoall/alltoall_internal.hpp"
#include "driver.hpp"
#include "libcomm/auto_policy.hpp"

namespace libcomm {

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
  // Without a Comm: the model on one rank per node (what the paper 002 schemes' inter-node
  // step asks for its column of one rank per node).
  return Driver::choice_without_comm(requested, s, opts.allow_fallback);
}

AlltoallChoice choose_alltoall(AlltoallAlgo requested, std::size_t block_bytes, const Comm& comm,
                               const AlltoallOptions& opts) {
  return Driver::choose(requested, AlltoallOp::shape({nullptr, nullptr, block_bytes}, comm, opts), comm);
}

AlltoallChoice choose_alltoall_in_plan(AlltoallAlgo requested, std::size_t block_bytes, const Comm& column,
                                       const AlltoallOptions& opts) {
  if (auto_policy() == AutoPolicy::Online) return choose_alltoall(requested, block_bytes, column.size(), opts);
  return choose_alltoall(requested, block_bytes, column, opts);
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
