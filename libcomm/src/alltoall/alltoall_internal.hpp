// Internal interface between the all-to-all dispatcher (alltoall.cpp) and the algorithm
// files, one per family.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "libcomm/alltoall.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/schedule.hpp"

namespace libcomm::detail {

// Schedule builders (each in its own file).
Schedule linear_schedule(int nprocs);          // linear.cpp
Schedule ring_schedule(int nprocs);            // ring.cpp
Schedule pairwise_schedule(int nprocs);        // pairwise.cpp
Schedule factor_schedule(int nprocs);          // factor.cpp
Schedule factor_grouped_schedule(int nprocs);  // factor.cpp

bool is_power_of_two(int n);

// Algorithms that are not a plain schedule of whole blocks.
void native_alltoall(const std::byte* send, std::byte* recv, std::size_t block_bytes,
                     MPI_Comm comm);  // native.cpp
void bruck_alltoall(const std::byte* send, std::byte* recv, std::size_t block_bytes,
                    const Comm& comm);  // bruck.cpp
// Paper 002, section 5 (multicore.cpp).
void leader_alltoall(const std::byte* send, std::byte* recv, std::size_t b, const Comm& comm,
                     const AlltoallOptions& opts);
void send_aggregate_alltoall(const std::byte* send, std::byte* recv, std::size_t b,
                             const Comm& comm, const AlltoallOptions& opts);
void recv_distribute_alltoall(const std::byte* send, std::byte* recv, std::size_t b,
                              const Comm& comm, const AlltoallOptions& opts);
// Paper 003, sections 4-5 (tree_scheduled.cpp): the Comm's attached topology, else one switch.
void tree_scheduled_alltoall(const std::byte* send, std::byte* recv, std::size_t b,
                             const Comm& comm, AlltoallAlgo variant);
// Rounds Bruck's algorithm takes for P ranks: ceil(log2 P).
int bruck_rounds(int nprocs);

}  // namespace libcomm::detail
