// How the elements of an MPI datatype lie in memory, and moving them to and from the
// plain runs of bytes that libcomm's algorithms exchange.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace libcomm_mpi {

struct Layout {
  std::size_t size = 0;   // data bytes per element (MPI_Type_size)
  MPI_Aint extent = 0;    // distance from one element to the next
  MPI_Aint true_lb = 0;   // first data byte of element 0, relative to the buffer address
  // Consecutive elements are one run of bytes with no gaps (size == extent == true
  // extent): predefined types and contiguous derived types. libcomm then works on the
  // user's buffer directly; other layouts are packed into a staging buffer.
  bool dense = false;
};

// A datatype as a request reads it after its start call has returned (to pack at each
// start of a persistent request, to unpack at completion). MPI lets a program free a
// datatype right after the start call, so a request that packs or unpacks with a derived
// type holds its own duplicate, freed with the request (copies share it). Predefined types,
// and any type when `hold` is false (a blocking call), are used as they are.
class HeldType {
 public:
  HeldType() = default;
  HeldType(MPI_Datatype type, bool hold);
  MPI_Datatype get() const { return type_; }

 private:
  std::shared_ptr<const MPI_Datatype> owned_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// nullopt when MPI cannot describe the type (an invalid handle): the caller falls back
// to the MPI library, which reports the error.
std::optional<Layout> layout_of(MPI_Datatype type);

// Address of the first data byte of element `index` of a dense layout. Works for
// MPI_BOTTOM with absolute addresses.
std::byte* dense_at(const void* buf, const Layout& l, std::int64_t index);

// Copies `count` elements, starting at element `index` of (buf, type), to `out` as the
// count * size bytes that MPI would send: memcpy when dense, MPI_Pack otherwise.
void gather_elements(const void* buf, std::int64_t index, std::int64_t count, MPI_Datatype type,
                     const Layout& l, std::byte* out);
// The reverse: stores count * size bytes from `in` as `count` elements at element `index`
// of (buf, type).
void scatter_elements(const std::byte* in, void* buf, std::int64_t index, std::int64_t count,
                      MPI_Datatype type, const Layout& l);

// Staging memory of the calling thread (slot 0 = send side, 1 = receive side): grows,
// is reused and never freed, as libcomm's Comm::scratch.
std::byte* staging(int slot, std::size_t bytes);

}  // namespace libcomm_mpi
