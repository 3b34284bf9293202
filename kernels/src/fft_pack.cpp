#include "kernels/fft_pack.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace kernels {

std::size_t RowPieces::elements() const {
  std::size_t per_row = 0;
  for (std::size_t n : piece_len) per_row += n;
  return rows * per_row;
}

void RowPieces::check() const {
  if (piece_offset.size() != piece_len.size() || block_offset.size() != piece_len.size())
    throw std::invalid_argument("RowPieces: piece_offset, piece_len and block_offset differ in size");
  for (std::size_t d = 0; d < piece_len.size(); ++d)
    if (piece_offset[d] + piece_len[d] > row_len)
      throw std::invalid_argument("RowPieces: piece " + std::to_string(d) + " [" +
                                  std::to_string(piece_offset[d]) + ", +" +
                                  std::to_string(piece_len[d]) + ") leaves a row of " +
                                  std::to_string(row_len) + " elements");
}

// Rows outer, peers inner: the row side streams through memory once, the block side
// advances P write (read) streams, each by whole contiguous pieces.
void pack_row_pieces(const void* rows_v, void* blocks_v, const RowPieces& l, std::size_t eb) {
  const auto* rows = static_cast<const std::byte*>(rows_v);
  auto* blocks = static_cast<std::byte*>(blocks_v);
  const std::size_t p = l.peers();
  for (std::size_t i = 0; i < l.rows; ++i) {
    const std::byte* row = rows + i * l.row_len * eb;
    for (std::size_t d = 0; d < p; ++d) {
      const std::size_t len = l.piece_len[d] * eb;
      std::memcpy(blocks + l.block_offset[d] * eb + i * len, row + l.piece_offset[d] * eb, len);
    }
  }
}

void unpack_row_pieces(const void* blocks_v, void* rows_v, const RowPieces& l, std::size_t eb) {
  const auto* blocks = static_cast<const std::byte*>(blocks_v);
  auto* rows = static_cast<std::byte*>(rows_v);
  const std::size_t p = l.peers();
  for (std::size_t i = 0; i < l.rows; ++i) {
    std::byte* row = rows + i * l.row_len * eb;
    for (std::size_t d = 0; d < p; ++d) {
      const std::size_t len = l.piece_len[d] * eb;
      std::memcpy(row + l.piece_offset[d] * eb, blocks + l.block_offset[d] * eb + i * len, len);
    }
  }
}

}  // namespace kernels
