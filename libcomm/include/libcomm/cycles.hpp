// Paper 004's binary-cube geometry (Johnsson et al., "All-to-all broadcast and reduction
// on the Connection Machine CM-200"), shared by the all-to-all broadcast and reduction:
// the order a single Hamiltonian cycle visits the ranks, the Gray code, transition
// sequence, cyclic bit shift sh, the d-cycles exchange formulas of section 4.2.3 and the
// subblock partitioning of Fig. 20, so that schedules can be regenerated and checked
// without MPI (libcomm/src/cycles/cycles.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace libcomm {

// The order in which a single Hamiltonian cycle visits the ranks. Rank r is binary-cube
// node r (on a hypercube platform, rank = node address). Binary: the ring is 0, 1, ...,
// P-1 (neighbours in the ring may be several cube hops apart). Gray: the ring is G(0),
// G(1), ..., G(P-1), a Gray-code path of the cube, so every shift is nearest neighbour
// (s. 4.1, Fig. 7); it needs P a power of two. d_cycles always uses cube addresses.
enum class NodeOrder { Binary, Gray };

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
