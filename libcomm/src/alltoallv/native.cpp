// The MPI library's own MPI_Alltoallv: the reference every test and benchmark compares with.
// Counts and displacements are in elements of one contiguous type of `esize` bytes. When
// some count or displacement on some rank exceeds INT_MAX (decided collectively by the
// caller), the exchange runs as MPI_Alltoallw with, per peer, one datatype that carries the
// 64-bit byte offset and length itself (count 1, displacement 0).
#include <climits>
#include <vector>

#include "../core/mpi_bytes.hpp"
#include "alltoallv_internal.hpp"

namespace libcomm::detail {

bool native_fits_int(std::span<const std::int64_t> sc, std::span<const std::int64_t> sd,
                     std::span<const std::int64_t> rc, std::span<const std::int64_t> rd) {
  for (auto s : {sc, sd, rc, rd})
    for (std::int64_t v : s)
      if (v > INT_MAX) return false;
  return true;
}

namespace {

// One element of this type is `bytes` bytes at byte offset `offset` from the buffer.
MPI_Datatype block_type(std::size_t offset, std::size_t bytes) {
  const MpiBytes body(bytes);
  MPI_Datatype t = MPI_DATATYPE_NULL;
  int len = body.count();
  MPI_Aint disp = static_cast<MPI_Aint>(offset);
  MPI_Datatype ty = body.type();
  check_mpi(MPI_Type_create_struct(1, &len, &disp, &ty, &t), "MPI_Type_create_struct");
  check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
  return t;
}

}  // namespace

void native_alltoallv(const std::byte* send, std::span<const std::int64_t> sc,
                      std::span<const std::int64_t> sd, std::byte* recv,
                      std::span<const std::int64_t> rc, std::span<const std::int64_t> rd,
                      std::size_t esize, MPI_Comm comm, bool large) {
  const std::size_t p = sc.size();
  if (!large) {
    require(native_fits_int(sc, sd, rc, rd),
            "native alltoallv: a count or displacement exceeds INT_MAX elements; call with "
            "check_args on so that every rank takes the large-count path");
    std::vector<int> isc(p), isd(p), irc(p), ird(p);
    for (std::size_t k = 0; k < p; ++k) {
      isc[k] = static_cast<int>(sc[k]);
      isd[k] = static_cast<int>(sd[k]);
      irc[k] = static_cast<int>(rc[k]);
      ird[k] = static_cast<int>(rd[k]);
    }
    MPI_Datatype elem = MPI_BYTE;
    if (esize != 1) {
      check_mpi(MPI_Type_contiguous(static_cast<int>(esize), MPI_BYTE, &elem),
                "MPI_Type_contiguous");
      check_mpi(MPI_Type_commit(&elem), "MPI_Type_commit");
    }
    const int rc_ =
        MPI_Alltoallv(send, isc.data(), isd.data(), elem, recv, irc.data(), ird.data(), elem, comm);
    if (esize != 1) MPI_Type_free(&elem);
    check_mpi(rc_, "MPI_Alltoallv");
    return;
  }
  std::vector<MPI_Datatype> st(p), rt(p);
  std::vector<int> ones(p, 1), zeros(p, 0);
  for (std::size_t k = 0; k < p; ++k) {
    st[k] = block_type(static_cast<std::size_t>(sd[k]) * esize,
                       static_cast<std::size_t>(sc[k]) * esize);
    rt[k] = block_type(static_cast<std::size_t>(rd[k]) * esize,
                       static_cast<std::size_t>(rc[k]) * esize);
  }
  const int rc_ = MPI_Alltoallw(send, ones.data(), zeros.data(), st.data(), recv, ones.data(),
                                zeros.data(), rt.data(), comm);
  for (std::size_t k = 0; k < p; ++k) {
    MPI_Type_free(&st[k]);
    MPI_Type_free(&rt[k]);
  }
  check_mpi(rc_, "MPI_Alltoallw");
}

}  // namespace libcomm::detail
