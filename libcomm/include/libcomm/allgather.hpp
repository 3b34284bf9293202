// All-to-all broadcast (MPI_Allgather / MPI_Allgatherv semantics): every rank contributes
// one block and every rank ends with all blocks in rank order. Paper 004 (Johnsson et al.,
// "All-to-all broadcast and reduction on the Connection Machine CM-200"), sections 4 and 5.
//
// Also the binary-cube helpers of that paper (Gray code, transition sequence, cyclic bit
// shift sh, the d-cycles exchange formulas of section 4.2.3 and the subblock partitioning
// of Fig. 20), so that schedules can be regenerated and checked without MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/choice.hpp"
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

// The order in which a single Hamiltonian cycle visits the ranks. Rank r is binary-cube
// node r (on a hypercube platform, rank = node address). Binary: the ring is 0, 1, ...,
// P-1 (neighbours in the ring may be several cube hops apart). Gray: the ring is G(0),
// G(1), ..., G(P-1), a Gray-code path of the cube, so every shift is nearest neighbour
// (s. 4.1, Fig. 7); it needs P a power of two. d_cycles always uses cube addresses.
enum class NodeOrder { Binary, Gray };

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

// ---- Binary-cube helpers of paper 004 (pure functions, no MPI) -------------------------
namespace cube {

// Binary-reflected Gray code G(x) and its inverse (s. 3, Table 1).
inline std::uint32_t gray(std::uint32_t x) { return x ^ (x >> 1); }
std::uint32_t gray_inverse(std::uint32_t g);
// log2 of P when P is a power of two (P >= 1), else -1.
int log2_exact(int p);
// Transition sequence t_0 .. t_{2^d - 2} of the d-bit Gray code: t_u is the bit in which
// G(u) and G(u + 1) differ (Table 1: 0,1,0,2,0,1,0 for d = 3).
std::vector<int> transition_sequence(int d);
// sh^i(x): left cyclic shift of the d-bit string x by i positions (s. 4.2.1).
std::uint32_t rotate_left(std::uint32_t x, int i, int d);

// d-cycles all-to-all broadcast (s. 4.2.1), addresses are cube node addresses.
// Dimension used by memory location i (within a block of d) in exchange step u.
int dcycles_dim(int d, int u, int i);
// Origin node of the element that memory slot (step j, location i) of node pa holds once
// step j - 1 has completed (j = 0: the node's own element): pa ^ sh^i(G(j)).
std::uint32_t dcycles_broadcast_origin(int d, std::uint32_t pa, int j, int i);

// d-cycles all-to-all reduction (s. 4.2.2, 4.2.3): in step u (0 <= u <= 2^d - 2) the
// partial sum of location i of block j travels from sender to receiver, where
//   sender   = j ^ sh^i(G(2^d - 1 - u)),   receiver = j ^ sh^i(G(2^d - 2 - u)).
// (The paper's text writes G(2^d - u) for the receiver, counting steps from 1; Figs.
// 12-19 fix the indexing used here: step 0, location 0, block 0 goes 4 -> 5 for d = 3.)
std::uint32_t dcycles_reduce_sender(int d, std::uint32_t j, int i, int u);
std::uint32_t dcycles_reduce_receiver(int d, std::uint32_t j, int i, int u);
// The block whose location i node pa sends / receives in step u (the xor translation).
inline std::uint32_t dcycles_reduce_send_block(int d, std::uint32_t pa, int i, int u) {
  return pa ^ dcycles_reduce_sender(d, 0, i, u);
}
inline std::uint32_t dcycles_reduce_recv_block(int d, std::uint32_t pa, int i, int u) {
  return pa ^ dcycles_reduce_receiver(d, 0, i, u);
}

// Single Hamiltonian cycle (s. 4.1): after the P - 1 left shifts, local memory address s of
// the node at cube address pa holds the element of node ...
//   binary order (Fig. 5 + reordering s <- (s - j) mod N):  (pa + s) mod P
//   gray path on binary-addressed nodes (Fig. 7):            G((s + G^-1(pa)) mod P)
std::uint32_t ring_origin(NodeOrder order, int p, std::uint32_t pa, int s);
// Single-cycle all-to-all reduction (s. 4.1, Fig. 6): the partial sums move the other way
// (to ring position q + 1). In shift s (1 <= s <= P - 1) the node at cube address pa sends
// its partial for the block of ring position q - s and receives (and combines) the one for
// position q - s - 1; returns the rank owning the block pa sends in shift s. In shift
// P - 1 a node receives its own block, complete.
std::uint32_t ring_reduce_block(NodeOrder order, int p, std::uint32_t pa, int s);

// Subblock partitioning of Fig. 20 (s. 4.2.4): n elements into `parts` subblocks, the
// first gamma = n - parts * (beta - 1) of beta = ceil(n / parts) elements, the rest of
// beta - 1. Returns the (offset, size) of subblock i, in elements.
struct Part {
  std::size_t offset = 0;
  std::size_t size = 0;
};
Part subblock(std::size_t n, int parts, int i);
// The CM-200 consecutive allocation of M elements over P nodes (s. 4.2.4): ceil(M / P) to
// each of the first alpha = floor(M / ceil(M / P)) nodes, the rest to one node, none to
// the others. Useful as uneven reduce-scatter counts.
std::vector<std::size_t> consecutive_counts(std::size_t m, int p);

}  // namespace cube
}  // namespace libcomm
