#include "mpi_bytes.hpp"

#include <climits>
#include <string>

#include "libcomm/error.hpp"

namespace libcomm::detail {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

MpiBytes::MpiBytes(std::size_t bytes) {
  if (bytes <= static_cast<std::size_t>(INT_MAX)) {
    count_ = static_cast<int>(bytes);
    return;
  }
  constexpr std::size_t chunk = std::size_t{1} << 30;
  const std::size_t chunks = bytes / chunk;
  const std::size_t rest = bytes % chunk;
  MPI_Datatype gib = MPI_DATATYPE_NULL, body = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(static_cast<int>(chunk), MPI_BYTE, &gib), "MPI_Type_contiguous");
  check_mpi(MPI_Type_contiguous(static_cast<int>(chunks), gib, &body), "MPI_Type_contiguous");
  if (rest == 0) {
    type_ = body;
  } else {
    int lengths[2] = {1, static_cast<int>(rest)};
    MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(chunks * chunk)};
    MPI_Datatype types[2] = {body, MPI_BYTE};
    check_mpi(MPI_Type_create_struct(2, lengths, displs, types, &type_), "MPI_Type_create_struct");
    MPI_Type_free(&body);
  }
  MPI_Type_free(&gib);
  check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
  count_ = 1;
  owned_ = true;
}

MpiBytes::~MpiBytes() {
  if (owned_) MPI_Type_free(&type_);
}

}  // namespace libcomm::detail
