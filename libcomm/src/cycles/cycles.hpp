// Paper 004's Hamiltonian cycles, shared by the all-to-all broadcast (allgather/) and the
// all-to-all reduction (reduce_scatter/): where they apply, and the single cycle's order
// (the binary-cube geometry itself is libcomm/cycles.hpp, in cycles.cpp).
#pragma once

#include <string>

#include "libcomm/cycles.hpp"

namespace libcomm::detail {

// The d Hamiltonian cycles live on a binary d-cube (s. 4.2).
template <class Shape>
std::string needs_cube(const Shape& s) {
  if (cube::log2_exact(s.p) >= 0) return "";
  return "needs a power-of-two number of ranks (a binary d-cube), P = " + std::to_string(s.p);
}
// The Gray-code path of s. 4.1 is a Hamiltonian cycle only on 2^d nodes.
template <class Shape>
std::string gray_needs_cube(const Shape& s) {
  if (s.opts->order != NodeOrder::Gray || cube::log2_exact(s.p) >= 0) return "";
  return "with order gray needs a power-of-two number of ranks (the binary-reflected Gray code is a cycle only on "
         "2^d nodes), P = " + std::to_string(s.p);
}

// Position of rank r in the single Hamiltonian cycle and the rank at position q.
int ring_position(NodeOrder order, int rank);
int ring_node(NodeOrder order, int p, int position);

}  // namespace libcomm::detail
