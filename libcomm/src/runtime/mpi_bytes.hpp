// Internal: contiguous byte ranges of any length as an MPI (count, datatype) pair.
//
// MPI counts are int. A range of up to INT_MAX bytes travels as `n` MPI_BYTEs; a longer one
// as one element of a derived type built from 1 GiB chunks plus the remainder (the way
// large-count support is done in MPI-3 libraries), so blocks beyond 2^31 bytes work.
#pragma once

#include <mpi.h>

#include <cstddef>

namespace libcomm::detail {

class MpiBytes {
 public:
  explicit MpiBytes(std::size_t bytes);
  ~MpiBytes();
  MpiBytes(const MpiBytes&) = delete;
  MpiBytes& operator=(const MpiBytes&) = delete;

  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

 private:
  int count_ = 0;
  MPI_Datatype type_ = MPI_BYTE;
  bool owned_ = false;
};

// Raises libcomm::Error naming the MPI call when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* call);

}  // namespace libcomm::detail
