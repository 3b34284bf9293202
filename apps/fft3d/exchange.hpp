// The all-to-all of one transpose of the distributed FFT, within a (sub-)communicator.
//
// When every block of the exchange has the same size on every rank (the split is even)
// it runs libcomm::alltoall with the algorithm asked for. Otherwise the blocks differ and
// it runs libcomm::alltoallv with the irregular algorithm and mode set on the exchange
// (paper 001's A1-A4, or the MPI library's MPI_Alltoallv as native).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "libcomm/alltoall.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/comm.hpp"

namespace fft3d {

class Exchange {
 public:
  Exchange() = default;
  // Counts per peer in elements of elem_bytes; blocks consecutive in peer order on both
  // sides. Collective over comm (agrees on whether the exchange is even).
  Exchange(const libcomm::Comm* comm, std::vector<std::size_t> send_count,
           std::vector<std::size_t> recv_count, std::size_t elem_bytes);

  // The irregular algorithm of an uneven exchange (default auto, blocking).
  void set_uneven(libcomm::AlltoallvAlgo algo, libcomm::AlltoallvMode mode) {
    valgo_ = algo;
    vmode_ = mode;
  }

  // Runs the exchange; returns the name of what ran ("pairwise", "alltoallv:four_stage").
  std::string run(const void* send, void* recv, libcomm::AlltoallAlgo algo,
                  const libcomm::AlltoallOptions& opts) const;

  bool even() const { return even_; }
  std::size_t block_bytes() const { return block_bytes_; }
  const std::vector<std::int64_t>& send_displ() const { return sdispl_; }
  const std::vector<std::int64_t>& recv_displ() const { return rdispl_; }
  int peers() const { return comm_ ? comm_->size() : 0; }
  std::string describe_uneven() const;  // "alltoallv auto (b)"

 private:
  const libcomm::Comm* comm_ = nullptr;
  std::vector<std::int64_t> scount_, sdispl_, rcount_, rdispl_;  // bytes
  bool even_ = false;
  std::size_t block_bytes_ = 0;
  std::size_t elem_bytes_ = 1;
  libcomm::AlltoallvAlgo valgo_ = libcomm::AlltoallvAlgo::Auto;
  libcomm::AlltoallvMode vmode_ = libcomm::AlltoallvMode::Blocking;
};

}  // namespace fft3d
