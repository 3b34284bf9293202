#include "exchange.hpp"

#include <algorithm>
#include <climits>

#include "libcomm/error.hpp"

namespace fft3d {

void alltoallv_bytes(const void* send, const std::vector<std::size_t>& scount,
                     const std::vector<std::size_t>& sdispl, void* recv,
                     const std::vector<std::size_t>& rcount,
                     const std::vector<std::size_t>& rdispl, const libcomm::Comm& comm) {
  const auto p = static_cast<std::size_t>(comm.size());
  libcomm::require(scount.size() == p && sdispl.size() == p && rcount.size() == p &&
                       rdispl.size() == p,
                   "alltoallv_bytes: rank " + std::to_string(comm.rank()) +
                       ": count and displacement vectors must hold P = " + std::to_string(p) +
                       " entries");
  std::vector<int> sc(p), sd(p), rc(p), rd(p);
  for (std::size_t k = 0; k < p; ++k) {
    for (std::size_t v : {scount[k], sdispl[k], rcount[k], rdispl[k]})
      libcomm::require(v <= static_cast<std::size_t>(INT_MAX),
                       "alltoallv_bytes: rank " + std::to_string(comm.rank()) +
                           ": a count or displacement exceeds INT_MAX bytes (" +
                           std::to_string(v) + "); MPI_Alltoallv cannot carry it");
    sc[k] = static_cast<int>(scount[k]);
    sd[k] = static_cast<int>(sdispl[k]);
    rc[k] = static_cast<int>(rcount[k]);
    rd[k] = static_cast<int>(rdispl[k]);
  }
  MPI_Alltoallv(send, sc.data(), sd.data(), MPI_BYTE, recv, rc.data(), rd.data(), MPI_BYTE,
                comm.mpi());
}

Exchange::Exchange(const libcomm::Comm* comm, std::vector<std::size_t> send_count,
                   std::vector<std::size_t> recv_count, std::size_t elem_bytes)
    : comm_(comm) {
  const auto p = static_cast<std::size_t>(comm->size());
  libcomm::require(send_count.size() == p && recv_count.size() == p,
                   "Exchange: rank " + std::to_string(comm->rank()) + ": need P counts");
  std::size_t so = 0, ro = 0;
  for (std::size_t k = 0; k < p; ++k) {
    scount_.push_back(send_count[k] * elem_bytes);
    sdispl_.push_back(so);
    so += scount_.back();
    rcount_.push_back(recv_count[k] * elem_bytes);
    rdispl_.push_back(ro);
    ro += rcount_.back();
  }
  // Even when every block on every rank has the same size: then the regular algorithms
  // apply. {min, -max} in one reduction.
  long long mm[2] = {LLONG_MAX, LLONG_MAX};
  for (std::size_t k = 0; k < p; ++k)
    for (std::size_t c : {scount_[k], rcount_[k]}) {
      mm[0] = std::min(mm[0], static_cast<long long>(c));
      mm[1] = std::min(mm[1], -static_cast<long long>(c));
    }
  MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_LONG_LONG, MPI_MIN, comm->mpi());
  even_ = mm[0] == -mm[1];
  block_bytes_ = even_ ? static_cast<std::size_t>(mm[0]) : 0;
}

std::string Exchange::run(const void* send, void* recv, libcomm::AlltoallAlgo algo,
                          const libcomm::AlltoallOptions& opts) const {
  if (even_) {
    const auto ran = libcomm::alltoall(send, recv, block_bytes_, *comm_, algo, opts);
    return std::string(libcomm::alltoall_algo_name(ran));
  }
  alltoallv_bytes(send, scount_, sdispl_, recv, rcount_, rdispl_, *comm_);
  return kAlltoallvName;
}

}  // namespace fft3d
