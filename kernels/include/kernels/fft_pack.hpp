// Pack and unpack kernels of the distributed 3-D FFT transposes: local work, no MPI.
//
// Every transpose of a slab or pencil decomposition moves data between a "row" layout
// (rows of `row_len` elements, one after the other) and the all-to-all layout (one block
// per peer, consecutive in peer order). Row i is cut into consecutive pieces, piece d
// going to peer d; block d holds piece d of row 0, then of row 1, ... So with the local
// array [a][b][c] and the peers owning ranges of b, rows = a and piece d = (b range of d) x c;
// with peers owning ranges of c, rows = a*b and piece d = the c range of d.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

namespace kernels {

struct RowPieces {
  std::size_t rows = 0;     // number of rows
  std::size_t row_len = 0;  // elements per row
  // Per peer d: where its piece starts within a row, its length, and where its block
  // starts in the all-to-all buffer (elements). Pieces must lie inside a row; blocks
  // must not overlap (block d holds rows * piece_len[d] elements).
  std::vector<std::size_t> piece_offset, piece_len, block_offset;

  // Throws std::invalid_argument when a piece leaves the row or the vectors differ in size.
  void check() const;
  std::size_t peers() const { return piece_len.size(); }
  // Elements one pack or unpack moves (rows x the pieces' total length).
  std::size_t elements() const;
};

// rows -> blocks: blocks[block_offset[d] + i * piece_len[d] + j] = rows[i * row_len +
// piece_offset[d] + j]. Elements are elem_bytes wide; src and dst must not overlap.
void pack_row_pieces(const void* rows, void* blocks, const RowPieces& layout,
                     std::size_t elem_bytes);
// blocks -> rows: the inverse of pack_row_pieces (elements of rows outside every piece
// are left untouched).
void unpack_row_pieces(const void* blocks, void* rows, const RowPieces& layout,
                       std::size_t elem_bytes);

inline void pack_row_pieces(const std::complex<double>* rows, std::complex<double>* blocks,
                            const RowPieces& layout) {
  pack_row_pieces(static_cast<const void*>(rows), static_cast<void*>(blocks), layout,
                  sizeof(std::complex<double>));
}
inline void unpack_row_pieces(const std::complex<double>* blocks, std::complex<double>* rows,
                              const RowPieces& layout) {
  unpack_row_pieces(static_cast<const void*>(blocks), static_cast<void*>(rows), layout,
                    sizeof(std::complex<double>));
}

}  // namespace kernels
