// Direct N-body on P ranks (paper 004, s. 1-2: every particle interacts with every other,
// so every node needs the coordinates and masses of all particles, an all-to-all
// broadcast). Bodies are spread evenly over the ranks in index order (allgatherv counts).
// Two ways to get the remote bodies for one force evaluation:
//   - allgather: one libcomm allgatherv of {x, y, z, m} per body with the chosen
//     algorithm, then the forces from all N bodies (the same kernel call as the serial
//     reference, so the same bits);
//   - systolic: the blocks travel around a ring (a single Hamiltonian cycle, s. 4.1) and
//     each rank computes the forces of the block it holds while the next shift is in
//     flight (non-blocking send/receive, progressed between chunks of the computation).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "libcomm/allgather.hpp"
#include "libcomm/comm.hpp"

namespace nbody {

struct Params {
  std::size_t n = 1000;   // bodies
  int steps = 10;         // leapfrog steps
  double dt = 0.01;       // time step
  double eps = 0.05;      // Plummer softening length
  std::uint64_t seed = 2024;
};

struct Phases {
  double comm = 0;     // allgather, or the exposed (not overlapped) part of the ring shifts
  double compute = 0;  // forces, kicks and drifts
};

class ParallelNBody {
 public:
  ParallelNBody(const libcomm::Comm& comm, const Params& params);
  ~ParallelNBody();
  ParallelNBody(const ParallelNBody&) = delete;
  ParallelNBody& operator=(const ParallelNBody&) = delete;

  // Runs the whole simulation from the seeded initial state: one force evaluation, then
  // `steps` kick-drift-kick steps. `systolic` selects the ring variant, else `algo`.
  // Returns the phases of every step (this rank's times). The first evaluation (not timed)
  // checks the allgather arguments.
  std::vector<Phases> run(bool systolic, libcomm::AllgatherAlgo algo,
                          const libcomm::AllgatherOptions& opts);
  // What the allgather resolved to in the last run ("systolic" for the ring variant).
  const std::string& ran() const { return ran_; }

  // This rank's bodies {x, y, z, m} and velocities after the last run.
  const std::vector<double>& bodies() const { return bodies_; }
  const std::vector<double>& velocities() const { return vel_; }
  const std::vector<std::size_t>& counts() const { return counts_; }
  const std::vector<std::size_t>& offsets() const { return offsets_; }

 private:
  Phases accelerations_allgather(libcomm::AllgatherAlgo algo, libcomm::AllgatherOptions opts);
  Phases accelerations_systolic();

  const libcomm::Comm& comm_;
  Params params_;
  MPI_Comm ring_ = MPI_COMM_NULL;  // private duplicate for the systolic shifts
  std::vector<std::size_t> counts_, offsets_;         // bodies per rank
  std::vector<std::size_t> counts4_;                  // doubles per rank (4 per body)
  std::vector<double> bodies_, vel_, acc_, all_;      // local state, gathered bodies
  std::vector<double> travel_[2];                     // systolic buffers
  std::string ran_;
};

}  // namespace nbody
