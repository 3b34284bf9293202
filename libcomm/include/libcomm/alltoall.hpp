// Regular all-to-all personalised communication: every rank sends a distinct block of
// `block_bytes` bytes to every rank (MPI_Alltoall semantics, send and recv hold P blocks
// in rank order).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/choice.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/error.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"
#include "libcomm/schedule.hpp"

namespace libcomm {

enum class AlltoallAlgo {
  Auto,           // tuning table (tuning.hpp), else the size rule of paper 002 s. 2.4
  Native,         // the MPI library's MPI_Alltoall: the reference
  Linear,         // LAM/MPI: post all, order i -> 0, 1, ..., P-1 (paper 003, section 6)
  Ring,           // MPICH medium: post all, order i -> i+1, i+2, ... (paper 003, section 6)
  RingSendrecv,   // blocking ring: step j send to i+j, receive from i-j (paper 003, s. 6)
  Pairwise,       // XOR exchange i ^ j, P a power of two (paper 002 s. 2.4, paper 003 s. 6)
  Factor,         // 1-factor algorithm, v_i(u) = (i - u) mod P (paper 000, Fig. 1, Lemma 1)
  FactorGrouped,  // factor with all self-loops gathered in one local round (paper 000, s. 2)
  Bruck,          // Bruck's log P algorithm (paper 002, section 2.4)
  // Hierarchical (libcomm/hierarchical.hpp): use the Comm's NodeMap.
  ClusteredFactor,      // ClusteredAllToAll for nodes of different sizes (paper 000, Fig. 2)
  ClusteredFactorFill,  // ... with extra intra-node work in self-paired rounds (paper 000, s. 4)
  Leader,               // gather to a leader per node, leaders' all-to-all, scatter (paper 002)
  SendAggregate,        // SA: intra-node exchange, then all-to-all per local rank (paper 002, s. 5)
  RecvDistribute,       // RD: all-to-all per local rank, then intra-node distribution (paper 002)
  // Switch-tree topology (libcomm/topology.hpp, attach_topology; default: one switch).
  TreeScheduled,         // contention-free phases with pairwise synchronisation (paper 003, s. 4-5)
  TreeScheduledBarrier,  // the same phases separated by a barrier each (paper 003, s. 5)
};

using AlltoallAlgoInfo = AlgoInfo<AlltoallAlgo>;

const std::vector<AlltoallAlgoInfo>& alltoall_algorithms();
std::string_view alltoall_algo_name(AlltoallAlgo a);
// Throws Error naming the bad value and listing the valid names.
AlltoallAlgo alltoall_algo_from_name(std::string_view name);
// LIBCOMM_ALLTOALL from the environment, or `fallback` when unset.
AlltoallAlgo alltoall_algo_from_env(AlltoallAlgo fallback = AlltoallAlgo::Auto);

struct AlltoallOptions {
  // Check arguments collectively (one small MPI_Allreduce): every rank gets the same clear
  // Error when any rank has a bad buffer size or the ranks disagree on block size or
  // algorithm, instead of a hang. Turn off in tight loops once the call is known good.
  bool check_args = true;
  // When the requested algorithm does not apply (pairwise on P not a power of two), run
  // its documented fallback instead of throwing.
  bool allow_fallback = true;
  // The regular algorithm the hierarchical schemes (leader, send_aggregate,
  // recv_distribute) use between nodes. Must not itself be hierarchical.
  AlltoallAlgo inter_node = AlltoallAlgo::Auto;
  // The paper 002 schemes move data inside a node through a shared-memory window when the
  // processes of every node share memory (multicore.cpp); false sends intra-node messages
  // instead, the fallback used where memory is not shared (kept to compare the two).
  bool node_shared_memory = true;
  // clustered_factor and clustered_factor_fill: run the steps as paper 000's single-ported
  // machine executes them, at most one process of a node in an exchange with another node
  // at a time, in step order (ClusteredFactorOptions::one_matching_per_step). Off, a
  // process starts each step as soon as its own partner is there.
  bool one_matching_per_step = false;
};

// True for the algorithms that use the Comm's NodeMap.
bool is_hierarchical(AlltoallAlgo a);

// What will run for a request: resolves Auto and fallbacks. `reason` explains the choice
// ("bruck: 8 B <= 256 B", "pairwise needs a power of two, P = 6: ring_sendrecv").
using AlltoallChoice = Choice<AlltoallAlgo>;
// The built-in rule: the size rule below for Auto, the fallbacks for the others.
AlltoallChoice choose_alltoall(AlltoallAlgo requested, std::size_t block_bytes, int nprocs,
                               const AlltoallOptions& opts = {});
// What alltoall() runs on comm: Auto asks the active tuning table (libcomm/tuning.hpp)
// with P, the ranks per node of comm's node map, the block size and whether a switch tree
// is attached; without a row it uses the built-in rule. The reason names the table line
// or the rule.
AlltoallChoice choose_alltoall(AlltoallAlgo requested, std::size_t block_bytes, const Comm& comm,
                               const AlltoallOptions& opts = {});
// The inter-node algorithm of a paper 002 scheme's plan, on `column` (one rank per node):
// as choose_alltoall on the column, except that the online policy, which cannot measure
// inside a plan being built, leaves it to the model on the column's size alone.
AlltoallChoice choose_alltoall_in_plan(AlltoallAlgo requested, std::size_t block_bytes, const Comm& column,
                                       const AlltoallOptions& opts);

// The schedule of a schedule-based algorithm for P ranks (Linear, Ring, RingSendrecv,
// Pairwise, Factor, FactorGrouped). Throws Error for the others and when the algorithm
// does not apply to P.
Schedule alltoall_schedule(AlltoallAlgo a, int nprocs);

// Rank `rank`'s step program of a program-based algorithm (every one but native and the
// paper 002 schemes), for P ranks on one switch and one rank per node: what the executor
// runs, for verification and printing (libcomm/program.hpp). No MPI.
StepProgram alltoall_program(AlltoallAlgo a, int nprocs, int rank, std::size_t block_bytes);
// The same for the paper 002 schemes (leader, send_aggregate, recv_distribute) on a node
// map: the inter-node algorithm `inter` (Auto: the size rule of choose_alltoall; native:
// the MPI library's all-to-all as a library-collective step with `library_collectives`,
// which the blocking calls use, else linear, as the non-blocking and persistent forms do).
// With `shared_memory` the intra-node steps go through the node's shared window (what runs
// when every node's processes share memory), else through messages (the fallback).
StepProgram hierarchical_alltoall_program(AlltoallAlgo scheme, const NodeMap& nodes, int rank,
                                          std::size_t block_bytes, AlltoallAlgo inter = AlltoallAlgo::Auto,
                                          bool library_collectives = false, bool shared_memory = true);

// Non-blocking form (MPI_Ialltoall): starts the algorithm and returns its request; the
// buffers must stay untouched until test() or wait() reports completion. No collective
// argument check (it would block); collective over comm.
Request ialltoall(const void* send, void* recv, std::size_t block_bytes, const Comm& comm,
                  AlltoallAlgo algo = AlltoallAlgo::Auto, const AlltoallOptions& opts = {});
// Persistent form (MPI_Alltoall_init): resolves the algorithm and builds its step program
// once; start(send, recv) / wait() as often as wanted. Collective over comm (the argument
// check, when on, compares block size and algorithm across ranks here).
Plan plan_alltoall(const Comm& comm, std::size_t block_bytes, AlltoallAlgo algo = AlltoallAlgo::Auto,
                   const AlltoallOptions& opts = {});

// Runs the all-to-all. `send` and `recv` hold at least size() * block_bytes bytes and must
// not overlap. Returns what actually ran and why. Collective over comm.
AlltoallChoice alltoall(const void* send, void* recv, std::size_t block_bytes, const Comm& comm,
                        AlltoallAlgo algo = AlltoallAlgo::Auto, const AlltoallOptions& opts = {});

inline AlltoallChoice alltoall(std::span<const std::byte> send, std::span<std::byte> recv,
                             std::size_t block_bytes, const Comm& comm,
                             AlltoallAlgo algo = AlltoallAlgo::Auto,
                             const AlltoallOptions& opts = {}) {
  const std::size_t need = block_bytes * static_cast<std::size_t>(comm.size());
  require(send.size() >= need && recv.size() >= need,
          "alltoall: rank " + std::to_string(comm.rank()) + ": send/recv spans hold " +
              std::to_string(send.size()) + "/" + std::to_string(recv.size()) +
              " bytes, need " + std::to_string(need));
  return alltoall(send.data(), recv.data(), block_bytes, comm, algo, opts);
}

// Typed form: send and recv hold P equal blocks of T; the block length is size() / P.
template <class T>
AlltoallChoice alltoall(std::span<const T> send, std::span<T> recv, const Comm& comm,
                      AlltoallAlgo algo = AlltoallAlgo::Auto, const AlltoallOptions& opts = {}) {
  const auto p = static_cast<std::size_t>(comm.size());
  require(send.size() % p == 0 && recv.size() == send.size(),
          "alltoall: rank " + std::to_string(comm.rank()) + ": send holds " +
              std::to_string(send.size()) + " elements and recv " + std::to_string(recv.size()) +
              "; both must hold the same multiple of P = " + std::to_string(p));
  return alltoall(send.data(), recv.data(), send.size() / p * sizeof(T), comm, algo, opts);
}

}  // namespace libcomm
