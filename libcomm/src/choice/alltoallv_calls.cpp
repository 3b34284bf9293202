// The public calls of the irregular all-to-all (libcomm/alltoallv.hpp): each is a call of the one
// driver (driver.hpp) on the operation its folder defines.
#include "../alltoallv/alltoallv_internal.hpp"
#include "driver.hpp"

namespace libcomm {

using Driver = detail::Driver<detail::AlltoallvOp>;
using detail::AlltoallvOp;

const std::vector<AlltoallvAlgoInfo>& alltoallv_algorithms() { return detail::algorithm_infos<AlltoallvOp>(); }
std::string_view alltoallv_algo_name(AlltoallvAlgo a) { return detail::name_of<AlltoallvOp>(a); }
AlltoallvAlgo alltoallv_algo_from_name(std::string_view name) { return detail::algorithm_named<AlltoallvOp>(name); }
AlltoallvAlgo alltoallv_algo_from_env(AlltoallvAlgo fallback) {
  return detail::algorithm_from_env<AlltoallvOp>(fallback);
}

namespace {

// A shape for P ranks without a Comm (one rank per node) with given count statistics.
struct FlatShape {
  NodeMap nodes;
  AlltoallvOp::Shape shape;
  FlatShape(int p, const AlltoallvCountStats& stats, const AlltoallvOptions& o)
      : nodes(NodeMap::one_rank_per_node(p)), shape(AlltoallvOp::shape(p, nodes, stats, o)) {}
};

}  // namespace

AlltoallvAlgo choose_alltoallv(AlltoallvAlgo requested, int p) {
  if (requested != AlltoallvAlgo::Auto) return requested;
  const AlltoallvOptions o;
  const FlatShape flat(p, {1, 1.0}, o);
  return Driver::program_choice(flat.shape).algo;
}

// Without counts the model prices start-ups alone (1-byte messages): four_stage where its
// 4 ceil(sqrt P) + 2 start-ups beat the P - 1 of direct (paper 001, Table 3).
AlltoallvChoice choose_alltoallv(AlltoallvAlgo requested, int p, const AlltoallvOptions& opts) {
  require(p > 0, "choose_alltoallv: P must be positive, got " + std::to_string(p));
  const FlatShape flat(p, {1, 1.0}, opts);
  return Driver::choice_without_comm(requested, flat.shape, opts.allow_fallback);
}

AlltoallvChoice choose_alltoallv(AlltoallvAlgo requested, const AlltoallvCountStats& counts, const Comm& comm) {
  static const AlltoallvOptions defaults;
  const AlltoallvOp::Shape s = AlltoallvOp::shape(comm.size(), comm.nodes(), counts, defaults);
  return Driver::choose(requested, s, comm);
}

AlltoallvChoice alltoallv(const void* send, std::span<const std::int64_t> sendcounts,
                          std::span<const std::int64_t> sdispls, void* recv, std::span<const std::int64_t> recvcounts,
                          std::span<const std::int64_t> rdispls, const Comm& comm, AlltoallvAlgo algo,
                          const AlltoallvOptions& opts) {
  return Driver::blocking({send, sendcounts, sdispls, recv, recvcounts, rdispls}, comm, algo, opts);
}

Plan plan_alltoallv(const Comm& comm, std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> sdispls,
                    std::span<const std::int64_t> recvcounts, std::span<const std::int64_t> rdispls,
                    AlltoallvAlgo algo, const AlltoallvOptions& opts) {
  return Driver::persistent({nullptr, sendcounts, sdispls, nullptr, recvcounts, rdispls}, comm, algo, opts);
}

Request ialltoallv(const void* send, std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> sdispls,
                   void* recv, std::span<const std::int64_t> recvcounts, std::span<const std::int64_t> rdispls,
                   const Comm& comm, AlltoallvAlgo algo, const AlltoallvOptions& opts) {
  return Driver::nonblocking({send, sendcounts, sdispls, recv, recvcounts, rdispls}, comm, algo, opts);
}

}  // namespace libcomm
