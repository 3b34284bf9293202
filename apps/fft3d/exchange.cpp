#include "exchange.hpp"

#include <algorithm>
#include <climits>
#include <string>

#include "libcomm/error.hpp"

namespace fft3d {

Exchange::Exchange(const libcomm::Comm* comm, std::vector<std::size_t> send_count,
                   std::vector<std::size_t> recv_count, std::size_t elem_bytes)
    : comm_(comm), elem_bytes_(elem_bytes) {
  const auto p = static_cast<std::size_t>(comm->size());
  libcomm::require(send_count.size() == p && recv_count.size() == p,
                   "Exchange: rank " + std::to_string(comm->rank()) + ": need P counts");
  std::size_t so = 0, ro = 0;
  for (std::size_t k = 0; k < p; ++k) {
    scount_.push_back(static_cast<std::int64_t>(send_count[k] * elem_bytes));
    sdispl_.push_back(static_cast<std::int64_t>(so));
    so += send_count[k] * elem_bytes;
    rcount_.push_back(static_cast<std::int64_t>(recv_count[k] * elem_bytes));
    rdispl_.push_back(static_cast<std::int64_t>(ro));
    ro += recv_count[k] * elem_bytes;
  }
  // Even when every block on every rank has the same size: then the regular algorithms
  // apply. {min, -max} in one reduction.
  long long mm[2] = {LLONG_MAX, LLONG_MAX};
  for (std::size_t k = 0; k < p; ++k)
    for (std::int64_t c : {scount_[k], rcount_[k]}) {
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
  libcomm::AlltoallvOptions vopts;
  vopts.check_args = opts.check_args;
  vopts.allow_fallback = opts.allow_fallback;
  vopts.mode = vmode_;
  vopts.element_bytes = elem_bytes_;  // the staged algorithms deal whole values
  const auto ran = libcomm::alltoallv(send, scount_, sdispl_, recv, rcount_, rdispl_, *comm_, valgo_, vopts);
  return "alltoallv:" + std::string(libcomm::alltoallv_algo_name(ran.algo));
}

std::string Exchange::describe_uneven() const {
  return "libcomm::alltoallv " + std::string(libcomm::alltoallv_algo_name(valgo_)) + " (" +
         std::string(libcomm::alltoallv_mode_name(vmode_)) + ")";
}

}  // namespace fft3d
