// The all-to-all of one transpose of the distributed FFT, within a (sub-)communicator.
//
// When every block of the exchange has the same size on every rank (the split is even)
// it runs libcomm::alltoall with the algorithm asked for. Otherwise the blocks differ and
// it runs alltoallv_bytes below, the one irregular entry point of fft3d.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "libcomm/alltoall.hpp"
#include "libcomm/comm.hpp"

namespace fft3d {

// Irregular all-to-all in bytes: to peer d goes send[sdispl[d], +scount[d]), from peer s
// arrives recv[rdispl[s], +rcount[s]). Today MPI_Alltoallv (counts must fit in int);
// libcomm's alltoallv replaces it here when the irregular family lands.
void alltoallv_bytes(const void* send, const std::vector<std::size_t>& scount,
                     const std::vector<std::size_t>& sdispl, void* recv,
                     const std::vector<std::size_t>& rcount,
                     const std::vector<std::size_t>& rdispl, const libcomm::Comm& comm);
inline constexpr const char* kAlltoallvName = "mpi_alltoallv";

class Exchange {
 public:
  Exchange() = default;
  // Counts per peer in elements of elem_bytes; blocks consecutive in peer order on both
  // sides. Collective over comm (agrees on whether the exchange is even).
  Exchange(const libcomm::Comm* comm, std::vector<std::size_t> send_count,
           std::vector<std::size_t> recv_count, std::size_t elem_bytes);

  // Runs the exchange; returns the name of what ran ("pairwise", "mpi_alltoallv").
  std::string run(const void* send, void* recv, libcomm::AlltoallAlgo algo,
                  const libcomm::AlltoallOptions& opts) const;

  bool even() const { return even_; }
  std::size_t block_bytes() const { return block_bytes_; }
  const std::vector<std::size_t>& send_displ() const { return sdispl_; }
  const std::vector<std::size_t>& recv_displ() const { return rdispl_; }
  int peers() const { return comm_ ? comm_->size() : 0; }

 private:
  const libcomm::Comm* comm_ = nullptr;
  std::vector<std::size_t> scount_, sdispl_, rcount_, rdispl_;  // bytes
  bool even_ = false;
  std::size_t block_bytes_ = 0;
};

}  // namespace fft3d
