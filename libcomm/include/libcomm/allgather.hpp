// All-to-all broadcast (MPI_Allgather / MPI_Allgatherv semantics): every rank contributes
// one block and every rank ends with all blocks in rank order. Paper 004 (Johnsson et al.,
// "All-to-all broadcast and reduction on the Connection Machine CM-200"), sections 4 and 5.
// The binary-cube helpers of that paper are in libcomm/cycles.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/choice.hpp"
#include "libcomm/cycles.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/error.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"

namespace libcomm {

enum class AllgatherAlgo {
  Auto,         // the Auto policy (libcomm/auto_policy.hpp): online, model or table
  Native,       // MPI_Allgather / MPI_Allgatherv: the reference
  Ring,         // single Hamiltonian cycle (paper 004, s. 4.1, Fig. 5 / Fig. 7)
  DCycles,      // d Hamiltonian cycles in a binary d-cube, index computation (s. 4.2.1, 4.2.3)
  DCyclesIndexMotion,  // d_cycles with the origin index moved along with each subblock (s. 6.1)
  SendSpread,   // gather to rank 0, then broadcast (alternative 3 of s. 5)
  Butterfly,    // rotated binomial trees / recursive doubling (alternative 4 of s. 5), any P
  SharedWindow, // every rank on one node: each copies its block into the node's shared window,
                // a node barrier, each copies all blocks out (no messages but the barrier's)
};


// How received data reaches its place (s. 4.1 "local memory reordering", s. 4.2.3).
enum class Reorder {
  Direct,  // receive every piece straight into its final place (index computed up front)
  Staged,  // receive in arrival order into a lounge, then a separate local reordering pass
};

using AllgatherAlgoInfo = AlgoInfo<AllgatherAlgo>;
const std::vector<AllgatherAlgoInfo>& allgather_algorithms();
std::string_view allgather_algo_name(AllgatherAlgo a);
AllgatherAlgo allgather_algo_from_name(std::string_view name);  // Error lists valid names
AllgatherAlgo allgather_algo_from_env(AllgatherAlgo fallback = AllgatherAlgo::Auto);  // LIBCOMM_ALLGATHER
std::string_view node_order_name(NodeOrder o);
NodeOrder node_order_from_name(std::string_view name);  // "binary" | "gray"

struct AllgatherOptions {
  bool check_args = true;      // one MPI_Allreduce so bad input on any rank never hangs
  // d_cycles on P not a power of two: true (default, as for every operation) = run ring
  // instead and say why (the choice's reason); false = Error on every rank. Auto never
  // picks d_cycles there.
  bool allow_fallback = true;
  NodeOrder order = NodeOrder::Binary;
  Reorder reorder = Reorder::Direct;  // ring and d_cycles (index motion is always staged)
  // Granularity of the subblock partitioning (Fig. 20) in bytes: subblocks never split an
  // element. The typed forms set sizeof(T).
  std::size_t element_bytes = 1;
};

using AllgatherChoice = Choice<AllgatherAlgo>;
// Resolves Auto and fallbacks; throws Error when the algorithm cannot run on P ranks and
// fallback is off (d_cycles needs a power of two, order gray needs a power of two).
AllgatherChoice choose_allgather(AllgatherAlgo requested, int nprocs, const AllgatherOptions& opts = {});
// What allgatherv() runs on comm: Auto asks the active tuning table (libcomm/tuning.hpp)
// with P, ranks per node and the largest block in bytes; without a row, or when the row's
// algorithm cannot run here (d_cycles on P not a power of two), the rule above.
AllgatherChoice choose_allgather(AllgatherAlgo requested, std::size_t block_bytes, const Comm& comm,
                                 const AllgatherOptions& opts = {});

// Allgatherv: rank r contributes counts[r] bytes (send_bytes must equal counts[rank]);
// recv receives all blocks packed in rank order (displacement of block r = sum of
// counts[0..r-1]). counts must be the same on every rank. Returns what ran and why.
AllgatherChoice allgatherv(const void* send, std::size_t send_bytes, void* recv,
                         std::span<const std::size_t> counts, const Comm& comm,
                         AllgatherAlgo algo = AllgatherAlgo::Auto, const AllgatherOptions& opts = {});

// Regular form: every rank contributes block_bytes; recv holds P * block_bytes.
AllgatherChoice allgather(const void* send, void* recv, std::size_t block_bytes, const Comm& comm,
                          AllgatherAlgo algo = AllgatherAlgo::Auto, const AllgatherOptions& opts = {});

// Non-blocking forms (libcomm/plan.hpp): the request progresses on test() / wait(); the
// buffers must stay untouched until it completes. No collective argument check (MPI's
// non-blocking collectives do not check either): check mode still compares the counts.
Request iallgatherv(const void* send, std::size_t send_bytes, void* recv, std::span<const std::size_t> counts,
                    const Comm& comm, AllgatherAlgo algo = AllgatherAlgo::Auto, const AllgatherOptions& opts = {});
Request iallgather(const void* send, void* recv, std::size_t block_bytes, const Comm& comm,
                   AllgatherAlgo algo = AllgatherAlgo::Auto, const AllgatherOptions& opts = {});
// Persistent plans (MPI_Allgather(v)_init): built once, collective, the argument check runs
// here; then plan.start(send, recv) and plan.wait() as often as needed.
Plan plan_allgatherv(const Comm& comm, std::span<const std::size_t> counts,
                     AllgatherAlgo algo = AllgatherAlgo::Auto, const AllgatherOptions& opts = {});
Plan plan_allgather(const Comm& comm, std::size_t block_bytes, AllgatherAlgo algo = AllgatherAlgo::Auto,
                    const AllgatherOptions& opts = {});
// Rank `rank`'s step program for counts.size() ranks (no MPI; Auto and fallbacks resolved
// as choose_allgather(requested, P) does; not for native).
StepProgram allgather_program(AllgatherAlgo algo, std::span<const std::size_t> counts, int rank,
                              const AllgatherOptions& opts = {});

template <class T>
AllgatherChoice allgather(std::span<const T> send, std::span<T> recv, const Comm& comm,
                        AllgatherAlgo algo = AllgatherAlgo::Auto, AllgatherOptions opts = {}) {
  require(recv.size() == send.size() * static_cast<std::size_t>(comm.size()),
          "allgather: rank " + std::to_string(comm.rank()) + ": recv holds " +
              std::to_string(recv.size()) + " elements, need P * send = " +
              std::to_string(send.size() * static_cast<std::size_t>(comm.size())));
  opts.element_bytes = sizeof(T);
  return allgather(send.data(), recv.data(), send.size() * sizeof(T), comm, algo, opts);
}

// Typed allgatherv: counts in elements of T.
template <class T>
AllgatherChoice allgatherv(std::span<const T> send, std::span<T> recv,
                         std::span<const std::size_t> counts, const Comm& comm,
                         AllgatherAlgo algo = AllgatherAlgo::Auto, AllgatherOptions opts = {}) {
  std::vector<std::size_t> bytes(counts.size());
  std::size_t total = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    bytes[k] = counts[k] * sizeof(T);
    total += counts[k];
  }
  require(recv.size() >= total, "allgatherv: rank " + std::to_string(comm.rank()) +
                                    ": recv holds " + std::to_string(recv.size()) +
                                    " elements, counts add up to " + std::to_string(total));
  opts.element_bytes = sizeof(T);
  return allgatherv(send.data(), send.size() * sizeof(T), recv.data(), bytes, comm, algo, opts);
}

}  // namespace libcomm
