// Grid sizes, process grids and the block split of a dimension among ranks: the
// arithmetic of the slab and pencil decompositions, no MPI.
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace fft3d {

// Global grid NX x NY x NZ, stored row-major with z fastest.
struct Extent {
  std::size_t nx = 0, ny = 0, nz = 0;
  std::size_t total() const { return nx * ny * nz; }
  std::string str() const;  // "12x10x9"
};

// The range of indices of part i when n indices are split into `parts` consecutive
// blocks as evenly as possible (the first n % parts blocks hold one more).
struct Range {
  std::size_t lo = 0, n = 0;
};
Range split(std::size_t n, int parts, int i);

// "--size 12x10x9" -> {12, 10, 9}; "--n 32" is parse_cube. Throws libcomm::Error naming
// `option` for garbage, a missing dimension or a dimension of 0.
Extent parse_extent(const std::string& text, const std::string& option);
Extent parse_cube(long long n, const std::string& option);

// Process grid of the pencil decomposition: Pr rows x Pc columns, rank = r * Pc + c.
struct ProcGrid {
  int pr = 1, pc = 1;
  std::string str() const;  // "2x3"
};
// "2x3" -> {2, 3}; throws libcomm::Error naming `option` for garbage, 0, or when
// Pr * Pc is not `nranks`.
ProcGrid parse_proc_grid(const std::string& text, const std::string& option, int nranks);
// The pencil grid for nranks: among Pr x Pc = nranks with Pr >= Pc, prefer the one whose
// transposes split evenly (NX, NY over Pr; NY, NZc over Pc), then the squarest.
ProcGrid choose_proc_grid(int nranks, const Extent& grid, std::size_t nz_complex);

// A box of the global (output-indexed) grid held by one rank: per axis (0 = x, 1 = y,
// 2 = z) the first index and count, and the order of the axes in memory from slowest to
// fastest ({0, 1, 2} = [x][y][z]).
struct Box {
  std::array<std::size_t, 3> lo{}, n{};
  std::array<int, 3> order{0, 1, 2};
  std::size_t count() const { return n[0] * n[1] * n[2]; }
  // Local index of the global point c (which must lie inside the box).
  std::size_t local_index(const std::array<std::size_t, 3>& c) const {
    return ((c[order[0]] - lo[order[0]]) * n[order[1]] + (c[order[1]] - lo[order[1]])) *
               n[order[2]] +
           (c[order[2]] - lo[order[2]]);
  }
};

}  // namespace fft3d
