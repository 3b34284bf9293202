// Internal interface between the all-to-all dispatcher (alltoall.cpp) and the algorithm
// files, one per family.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "libcomm/alltoall.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/program.hpp"
#include "libcomm/schedule.hpp"
#include "libcomm/topology.hpp"

namespace libcomm::detail {

struct PlanState;

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
// for the clustered factor algorithm (null: one rank per node).
StepProgram build_alltoall_program(AlltoallAlgo a, int nprocs, int rank, std::size_t block_bytes,
                                   const NodeMap* nodes, const Topology* topology);

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
