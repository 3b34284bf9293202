#include "datatype_layout.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "libcomm/error.hpp"

namespace libcomm_mpi {

namespace {

// Elements per MPI_Pack / MPI_Unpack call, so that counts and byte sizes fit MPI's int.
int chunk_elements(const Layout& l, std::int64_t left) {
  const std::int64_t limit = l.size == 0 ? INT_MAX : std::max<std::int64_t>(1, INT_MAX / static_cast<std::int64_t>(l.size));
  return static_cast<int>(std::min(left, limit));
}

// The exchange carries raw bytes, so one rank's packed bytes can be another rank's
// contiguous elements only if MPI's packed form is the raw data (true for homogeneous
// Open MPI and MPICH). Checked on every pack so a heterogeneous run errors instead of
// delivering wrong data.
void require_raw_packing(int count, MPI_Datatype type, const Layout& l) {
  int packed = 0;
  PMPI_Pack_size(count, type, MPI_COMM_SELF, &packed);
  libcomm::require(static_cast<std::size_t>(packed) == static_cast<std::size_t>(count) * l.size,
                   "MPI packs " + std::to_string(count) + " elements of a " + std::to_string(l.size) +
                       "-byte datatype into " + std::to_string(packed) +
                       " bytes, not their raw bytes (heterogeneous MPI?); unset LD_PRELOAD");
}

const std::byte* element(const void* buf, const Layout& l, std::int64_t index) {
  return reinterpret_cast<const std::byte*>(reinterpret_cast<std::uintptr_t>(buf) +
                                            static_cast<std::uintptr_t>(index * l.extent));
}

}  // namespace

namespace {

std::optional<Layout> ask_mpi(MPI_Datatype type) {
  MPI_Count size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0 ||
      PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
    return std::nullopt;
  Layout l;
  l.size = static_cast<std::size_t>(size);
  l.extent = extent;
  l.true_lb = true_lb;
  l.dense = size == 0 || (extent == static_cast<MPI_Aint>(size) && true_extent == extent);
  return l;
}

// The predefined types applications exchange, asked once: their handles never change, where
// a derived type's handle can be freed and given to another type (those are asked on every
// call; three PMPI calls per type cost a fifth of an 8-byte call's overhead).
struct Predefined {
  MPI_Datatype type;
  Layout layout;
};

const std::vector<Predefined>& predefined() {
  static const std::vector<Predefined> all = [] {
    std::vector<Predefined> v;
    for (MPI_Datatype t : {MPI_BYTE, MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_SHORT, MPI_UNSIGNED_SHORT,
                           MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
                           MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T,
                           MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_FLOAT_COMPLEX,
                           MPI_C_DOUBLE_COMPLEX, MPI_CXX_DOUBLE_COMPLEX, MPI_PACKED})
      if (const auto l = ask_mpi(t)) v.push_back({t, *l});
    return v;
  }();
  return all;
}

}  // namespace

std::optional<Layout> layout_of(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return std::nullopt;
  for (const auto& p : predefined())
    if (p.type == type) return p.layout;
  return ask_mpi(type);
}

HeldType::HeldType(MPI_Datatype type, bool hold) : type_(type) {
  if (!hold || type == MPI_DATATYPE_NULL) return;
  int integers = 0, addresses = 0, types = 0, combiner = MPI_COMBINER_NAMED;
  PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return;
  MPI_Datatype copy = MPI_DATATYPE_NULL;
  if (PMPI_Type_dup(type, &copy) != MPI_SUCCESS)
    throw libcomm::Error("MPI_Type_dup failed on a derived datatype the request must keep");
  owned_ = std::shared_ptr<const MPI_Datatype>(new MPI_Datatype(copy), [](const MPI_Datatype* t) {
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (!finalized) PMPI_Type_free(const_cast<MPI_Datatype*>(t));
    delete t;
  });
  type_ = copy;
}

std::byte* dense_at(const void* buf, const Layout& l, std::int64_t index) {
  return const_cast<std::byte*>(element(buf, l, index)) + l.true_lb;
}

void gather_elements(const void* buf, std::int64_t index, std::int64_t count, MPI_Datatype type,
                     const Layout& l, std::byte* out) {
  if (count <= 0 || l.size == 0) return;
  if (l.dense) {
    std::memcpy(out, dense_at(buf, l, index), static_cast<std::size_t>(count) * l.size);
    return;
  }
  while (count > 0) {
    const int n = chunk_elements(l, count);
    require_raw_packing(n, type, l);
    int position = 0;
    PMPI_Pack(element(buf, l, index), n, type, out, static_cast<int>(n * l.size), &position,
              MPI_COMM_SELF);
    out += static_cast<std::size_t>(n) * l.size;
    index += n;
    count -= n;
  }
}

void scatter_elements(const std::byte* in, void* buf, std::int64_t index, std::int64_t count,
                      MPI_Datatype type, const Layout& l) {
  if (count <= 0 || l.size == 0) return;
  if (l.dense) {
    std::memcpy(dense_at(buf, l, index), in, static_cast<std::size_t>(count) * l.size);
    return;
  }
  while (count > 0) {
    const int n = chunk_elements(l, count);
    require_raw_packing(n, type, l);
    int position = 0;
    PMPI_Unpack(in, static_cast<int>(n * l.size), &position,
                const_cast<std::byte*>(element(buf, l, index)), n, type, MPI_COMM_SELF);
    in += static_cast<std::size_t>(n) * l.size;
    index += n;
    count -= n;
  }
}

std::byte* staging(int slot, std::size_t bytes) {
  struct Slot {
    std::unique_ptr<std::byte[]> data;
    std::size_t size = 0;
  };
  thread_local Slot slots[2];
  Slot& s = slots[slot];
  if (s.size < bytes) {
    s.data.reset(new std::byte[bytes]);
    s.size = bytes;
  }
  return s.data.get();
}

}  // namespace libcomm_mpi
