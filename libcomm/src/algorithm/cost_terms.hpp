// The terms every cost formula is written in (docs/algorithms.md, "Cost formulas"):
// Hockney's alpha + n beta per message, with the node layout. Each node has one link to
// the network and one memory channel between its ranks; ranks of a node that use one of
// them at once share it (k of them: n beta k each). Ranks are laid out in blocks of
// consecutive ranks per node (the node maps here), so a partner at rank distance d is on
// another node for min(d, ppn) of a node's ppn ranks.
#pragma once

#include <bit>

#include "libcomm/cost_params.hpp"

namespace libcomm::detail::cost {

int log2_ceil(int p);  // ceil(log2 p), 0 for p <= 1
inline bool is_power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }
// The largest power of two <= p (1 for p <= 1): where a non-power-of-two P folds into.
inline int power_of_two_at_most(int p) {
  return p <= 1 ? 1 : static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
}

// The nodes that hold the first `ranks` ranks (the senders of a step only part of the
// ranks take, such as the fold of P into a power of two).
double nodes_of_first(const Layout& l, int ranks);
// Seconds for the bytes a node sends to other nodes in one round: `link`, what its own link
// takes (the formula's term), or, when `sending` nodes (0: every node of l) each put
// `node_bytes` (messages of `each` bytes) on the network at once and it carries fewer links'
// worth (CostParams::network_links), all their bytes at the network's pace for such messages
// after one message's size-dependent latency (CostParams::size_latency_at), of which the
// other nodes' bytes hide all but 1 / CostParams::network_share.
double off_node(const Layout& l, const CostParams& c, double link, double node_bytes, double each,
                double sending = 0);
// One round in which every rank exchanges n bytes with the rank at distance d (both
// directions at once, full duplex): the slower of the node's off-node and on-node messages.
// `sending`: how many nodes take part (all, by default).
double exchange_round(const Layout& l, const CostParams& c, double n, int distance, double sending = 0);
// A round where every rank exchanges with rank XOR `distance` (recursive doubling): all
// partners on the node while distance < ppn (nodes hold aligned ranges), else all elsewhere.
double xor_round(const Layout& l, const CostParams& c, double n, int distance, double sending = 0);
// P - 1 such rounds, distances 1 .. P - 1 (ring_sendrecv, the 1-factor).
double one_exchange_per_round(const Layout& l, const CostParams& c, double n);
// P - 1 rounds of exchanges with partner rank ^ j (pairwise): the first ppn - 1 stay on
// the node (nodes of a power-of-two size, aligned), the others leave it from every rank.
double xor_exchange_rounds(const Layout& l, const CostParams& c, double n);
// P blocks of n bytes in ceil(log2 P) rounds, round `bit` moving the blocks k < P with that
// bit set, plus the rotations and packing copies: Bruck's algorithm (paper 002, s. 2.4), and
// the small-message all-to-all of Open MPI and MPICH.
double log_rounds_alltoall(const Layout& l, const CostParams& c, double n);
// Paper 004's motions (allgather, and reversed reduce_scatter): n bytes over the d cube
// dimensions in `messages` messages at once, one step of the d cycles (`sending`: how many
// nodes take part; all by default); every rank's n bytes to one rank at once.
double dcycles_step(const Layout& l, const CostParams& c, double n, double messages, int d, double sending = 0);
double linear_gather(const Layout& l, const CostParams& c, double n);
// A binomial-tree broadcast of n bytes from one rank: floor(log2 P) latencies on the way
// to the farthest rank, the root's ceil(log2 P) messages through its link.
double binomial_broadcast(const Layout& l, const CostParams& c, double n);
// Every rank posts its P - 1 messages of n bytes at once (linear, ring): one latency, the
// per-message overhead of the others, and every byte through the busier of the node's link
// and memory channel.
double all_at_once(const Layout& l, const CostParams& c, double n);
// The same with per-peer sizes summing to `total` bytes leaving each rank over `messages`
// messages (all_at_once's own terms).
double all_at_once_bytes(const Layout& l, const CostParams& c, int messages, double total);
// A barrier among the ranks of a node: ceil(log2 ppn) rounds of empty messages.
double node_barrier(const Layout& l, const CostParams& c);
// A barrier of all P ranks: ProgramBuilder::barrier, ceil(log2 P) rounds of zero-byte messages.
double barrier(const Layout& l, const CostParams& c);
// n bytes copied locally.
inline double copy(const CostParams& c, double n) { return n * c.copy_at(n); }
// n bytes combined by a reduction.
inline double combine(const CostParams& c, double n) { return n * c.gamma; }

// Which MPI library `native` is (its known algorithm choices are part of its formula).
enum class MpiLibrary { Smpi, OpenMpi, Mpich, Other };
MpiLibrary mpi_library();

}  // namespace libcomm::detail::cost
