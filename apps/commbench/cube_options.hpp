// Command-line options shared by the paper 004 operations of commbench (--op allgather and
// --op reduce_scatter): both run on the single Hamiltonian cycle and on the d-cube, so they
// read the same --order and --block-layout (registered once, by op_allgather.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace commbench {

struct CubeOptions {
  std::string order = "binary";        // --order binary|gray (ring node order, s. 4.1)
  std::string block_layout = "equal";  // --block-layout equal|unequal
};
CubeOptions& cube_options();

// Units (elements or bytes) per rank for a mean of `mean` units: equal, or unequal =
// the CM-200 consecutive allocation of P * mean units (s. 4.2.4: ceil(M / P) on the
// first nodes, the rest on one node, none on the others). Throws libcomm::Error for an
// unknown layout name.
std::vector<std::size_t> layout_counts(const std::string& layout, std::size_t mean, int p);

}  // namespace commbench
