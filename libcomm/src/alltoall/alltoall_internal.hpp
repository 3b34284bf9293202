// Internal interface between the all-to-all dispatcher (alltoall.cpp) and the algorithm
// files, one per family.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "../core/driver.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/program.hpp"
#include "libcomm/schedule.hpp"
#include "libcomm/topology.hpp"

namespace libcomm::detail {

struct PlanState;

// The regular all-to-all as an operation of the one driver (core/driver.hpp); its members
// are defined in alltoall.cpp, its cost formulas in costs.cpp.
struct AlltoallOp {
  using Algo = AlltoallAlgo;
  using Options = AlltoallOptions;
  static constexpr std::string_view name = "alltoall";
  static constexpr std::string_view what = "all-to-all";
  static constexpr Setting setting = Setting::Alltoall;
  struct Args {
    const void* send = nullptr;
    void* recv = nullptr;
    std::size_t block = 0;
  };
  struct Shape {
    int p = 1;
    std::size_t block = 0;
    const NodeMap* nodes = nullptr;
    const Topology* topology = nullptr;  // attached switch tree, or null (one switch)
    const Options* opts = nullptr;
  };
  static std::span<const AlgorithmEntry<AlltoallOp>> algorithms();
  static Shape shape(const Args& a, const Comm& comm, const Options& o);
  static std::uint64_t key_bytes(const Shape& s) { return s.block; }
  static std::uint64_t key_options(const Shape& s);
  static std::uint64_t decision_bytes(const Shape& s) { return s.block; }
  static bool has_topology(const Shape& s) { return s.topology != nullptr; }
  static bool one_node_shared(const Shape& s) { return s.p > 1 && s.nodes->num_nodes() == 1; }
  static ArgumentCheck argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo, const Options& o,
                                      bool have_buffers);
  static std::string sizes_differ(const Args& a, std::uint64_t max, std::uint64_t min);
  static std::string modes_differ(Algo algo, const Options& o);
  static void check_agreement(const Args& a, const Comm& comm, const Options& o);
  static PlanKey plan_key(Algo ran, const Shape& s);
  static std::span<const std::size_t> plan_shape(const Shape&) { return {}; }
  static std::shared_ptr<PlanState> state(const Choice<Algo>& c, const Args& a, const Shape& s, const Comm& comm,
                                          Form form);
  static void native(const Args& a, const Shape& s, const Comm& comm);
  static bool empty(const Shape& s) { return s.block == 0; }
};

// Cost formulas (costs.cpp; docs/algorithms.md "Cost formulas"), seconds of one call.
namespace alltoall_cost {
double linear(const AlltoallOp::Shape& s, const CostParams& c);
double one_exchange_per_round(const AlltoallOp::Shape& s, const CostParams& c);
double pairwise(const AlltoallOp::Shape& s, const CostParams& c);
double factor(const AlltoallOp::Shape& s, const CostParams& c);
double bruck(const AlltoallOp::Shape& s, const CostParams& c);
double clustered_factor(const AlltoallOp::Shape& s, const CostParams& c);
double leader(const AlltoallOp::Shape& s, const CostParams& c);
double send_aggregate(const AlltoallOp::Shape& s, const CostParams& c);
double recv_distribute(const AlltoallOp::Shape& s, const CostParams& c);
double tree_scheduled(const AlltoallOp::Shape& s, const CostParams& c);
double native(const AlltoallOp::Shape& s, const CostParams& c);
// The cheapest regular (non-hierarchical) algorithm for P ranks, one per node, of `block`
// bytes, with link figures scaled by `link_share` (ranks sharing each link): the
// inter-node step of the paper 002 schemes.
double inter_node(int p, double block, double link_share, const CostParams& c, AlltoallAlgo inter);
}  // namespace alltoall_cost

// Schedule builders (each in its own file).
Schedule linear_schedule(int nprocs);          // linear.cpp
Schedule ring_schedule(int nprocs);            // ring.cpp
Schedule pairwise_schedule(int nprocs);        // pairwise.cpp
Schedule factor_schedule(int nprocs);          // factor.cpp
Schedule factor_grouped_schedule(int nprocs);  // factor.cpp

bool is_power_of_two(int n);

// Step programs of the algorithms that are not a plain schedule of whole blocks.
StepProgram bruck_program(int nprocs, int rank, std::size_t block_bytes);  // bruck.cpp
// Paper 003, sections 4-5 (tree_scheduled.cpp): on `topology`, or null for one switch.
StepProgram tree_scheduled_program(const Topology* topology, int nprocs, int rank,
                                   std::size_t block_bytes, AlltoallAlgo variant);
// Any program-based algorithm (everything but native and the paper 002 schemes); `nodes`
// for the clustered factor algorithm (null: one rank per node), which runs its steps one
// matching at a time with `one_matching_per_step` (AlltoallOptions).
StepProgram build_alltoall_program(AlltoallAlgo a, int nprocs, int rank, std::size_t block_bytes,
                                   const NodeMap* nodes, const Topology* topology,
                                   bool one_matching_per_step = false);

void native_alltoall(const std::byte* send, std::byte* recv, std::size_t block_bytes,
                     MPI_Comm comm);  // native.cpp
// Paper 002, section 5 (multicore.cpp): the leader, SA and RD schemes as step programs
// on sub-communicators. `inner` resolves the inter-node algorithm for a bundle size
// (native included); `library_collectives` lets the intra-node exchange (and a native
// inter-node one) be the MPI library's all-to-all, for blocking runs only.
using InnerChoice = std::function<AlltoallAlgo(std::size_t bundle_bytes)>;
StepProgram hierarchical_program(AlltoallAlgo scheme, const NodeMap& nodes, int rank, std::size_t block_bytes,
                                 const InnerChoice& inner, bool library_collectives, bool shared_memory);
// Its plan on comm's sub-communicators (made once per Comm).
std::shared_ptr<PlanState> hierarchical_plan(AlltoallAlgo scheme, const Comm& comm, std::size_t block_bytes,
                                             const AlltoallOptions& opts, std::string reason, bool blocking);

}  // namespace libcomm::detail
