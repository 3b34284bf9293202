#include "parallel_nbody.hpp"

#include <algorithm>
#include <climits>

#include "kernels/distribution.hpp"
#include "kernels/nbody.hpp"
#include "libcomm/error.hpp"
#include "libcomm/sim.hpp"

namespace nbody {
namespace {

void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw libcomm::Error(std::string("nbody: ") + what + " failed");
}

// Sources per chunk of the systolic force loop: between chunks the shift in flight is
// progressed with MPI_Testall.
constexpr std::size_t kChunk = 128;

// The flop model (--model-flops): the customary count of a softened gravitational
// interaction (3 differences, the squared distance and softening, an inverse square root
// cubed, 3 multiply-adds), and a kick or drift (3 multiply-adds) per body.
constexpr double kFlopsPerInteraction = 20.0, kFlopsPerUpdate = 6.0;

}  // namespace

ParallelNBody::ParallelNBody(const libcomm::Comm& comm, const Params& params)
    : comm_(comm), params_(params) {
  counts_ = kernels::even_counts(params.n, comm.size());
  offsets_ = kernels::offsets_of(counts_);
  counts4_.resize(counts_.size());
  std::size_t most = 0;
  for (std::size_t k = 0; k < counts_.size(); ++k) {
    counts4_[k] = kernels::kBodyDoubles * counts_[k];
    most = std::max(most, counts4_[k]);
  }
  libcomm::require(most <= INT_MAX, "nbody: rank " + std::to_string(comm.rank()) +
                                        ": more than INT_MAX / 4 bodies per rank");
  const std::size_t mine = counts_[static_cast<std::size_t>(comm.rank())];
  bodies_.resize(kernels::kBodyDoubles * mine);
  vel_.resize(3 * mine);
  acc_.resize(3 * mine);
  all_.resize(kernels::kBodyDoubles * params.n);
  travel_[0].resize(most);
  travel_[1].resize(most);
  check_mpi(MPI_Comm_dup(comm.mpi(), &ring_), "MPI_Comm_dup");
}

ParallelNBody::~ParallelNBody() { MPI_Comm_free(&ring_); }

Phases ParallelNBody::accelerations_allgather(libcomm::AllgatherAlgo algo,
                                              libcomm::AllgatherOptions opts) {
  Phases ph;
  const double t0 = MPI_Wtime();
  const auto ran = libcomm::allgatherv<double>(bodies_, all_, counts4_, comm_, algo, opts);
  ran_ = std::string(libcomm::allgather_algo_name(ran));
  const double t1 = MPI_Wtime();
  std::fill(acc_.begin(), acc_.end(), 0.0);
  kernels::accumulate_accelerations(bodies_.data(), bodies_.size() / 4, all_.data(), params_.n,
                                    params_.eps * params_.eps, acc_.data());
  libcomm::sim::charge_flops(kFlopsPerInteraction * static_cast<double>(bodies_.size() / 4 * params_.n));
  ph.comm = t1 - t0;
  ph.compute = MPI_Wtime() - t1;
  return ph;
}

Phases ParallelNBody::accelerations_systolic() {
  Phases ph;
  const int p = comm_.size(), r = comm_.rank();
  const int right = (r + 1) % p, left = (r + p - 1) % p;
  const double eps2 = params_.eps * params_.eps;
  const std::size_t ntgt = bodies_.size() / 4;
  std::fill(acc_.begin(), acc_.end(), 0.0);
  std::copy(bodies_.begin(), bodies_.end(), travel_[0].begin());
  int cur = 0;
  for (int s = 0; s < p; ++s) {
    const auto from = static_cast<std::size_t>((r - s + p) % p);  // origin of the block held
    const bool shift = s + 1 < p;
    double t = MPI_Wtime();
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (shift) {
      // Pass the block on to the right while receiving the next one from the left.
      const auto next = static_cast<std::size_t>((r - s - 1 + 2 * p) % p);
      check_mpi(MPI_Irecv(travel_[1 - cur].data(), static_cast<int>(counts4_[next]), MPI_DOUBLE, left,
                          s, ring_, &reqs[0]),
                "MPI_Irecv");
      check_mpi(MPI_Isend(travel_[cur].data(), static_cast<int>(counts4_[from]), MPI_DOUBLE, right, s,
                          ring_, &reqs[1]),
                "MPI_Isend");
    }
    double t2 = MPI_Wtime();
    ph.comm += t2 - t;
    const std::size_t nsrc = counts_[from];
    for (std::size_t c = 0; c < nsrc; c += kChunk) {
      kernels::accumulate_accelerations(bodies_.data(), ntgt, travel_[cur].data() + 4 * c,
                                        std::min(kChunk, nsrc - c), eps2, acc_.data());
      libcomm::sim::charge_flops(kFlopsPerInteraction * static_cast<double>(ntgt * std::min(kChunk, nsrc - c)));
      if (shift) {
        int done = 0;
        MPI_Testall(2, reqs, &done, MPI_STATUSES_IGNORE);
      }
    }
    t = MPI_Wtime();
    ph.compute += t - t2;
    if (shift) {
      check_mpi(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
      cur = 1 - cur;
    }
    ph.comm += MPI_Wtime() - t;
  }
  ran_ = "systolic";
  return ph;
}

std::vector<Phases> ParallelNBody::run(bool systolic, libcomm::AllgatherAlgo algo,
                                       const libcomm::AllgatherOptions& opts) {
  const auto me = static_cast<std::size_t>(comm_.rank());
  kernels::initial_bodies(params_.seed, params_.n, offsets_[me], counts_[me], bodies_.data(),
                          vel_.data());
  libcomm::AllgatherOptions checked = opts, unchecked = opts;
  checked.check_args = true;
  unchecked.check_args = false;
  auto evaluate = [&](bool first) {
    return systolic ? accelerations_systolic()
                    : accelerations_allgather(algo, first ? checked : unchecked);
  };
  evaluate(true);
  const std::size_t mine = counts_[me];
  std::vector<Phases> steps;
  for (int s = 0; s < params_.steps; ++s) {
    double t0 = MPI_Wtime();
    kernels::kick(vel_.data(), acc_.data(), mine, 0.5 * params_.dt);
    kernels::drift(bodies_.data(), vel_.data(), mine, params_.dt);
    libcomm::sim::charge_flops(2 * kFlopsPerUpdate * static_cast<double>(mine));
    const double local = MPI_Wtime() - t0;
    Phases ph = evaluate(false);
    t0 = MPI_Wtime();
    kernels::kick(vel_.data(), acc_.data(), mine, 0.5 * params_.dt);
    libcomm::sim::charge_flops(kFlopsPerUpdate * static_cast<double>(mine));
    ph.compute += local + (MPI_Wtime() - t0);
    steps.push_back(ph);
  }
  return steps;
}

}  // namespace nbody
