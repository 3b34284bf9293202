// Timing the variants of an app the same way everywhere: every repetition runs each
// variant once, in turn (so load on a shared machine hits all of them alike), the time of
// a run is the slowest rank's, and tables report medians over the repetitions.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace apps {

// Element-wise maximum over the ranks of comm: the slowest rank's times. Collective.
std::vector<double> slowest(std::vector<double> local, MPI_Comm comm);
double slowest(double local, MPI_Comm comm);

// Calls once(rep, k) for rep in [0, reps) and each variant k in [0, variants) in turn.
template <class Once>
void round_robin(int reps, std::size_t variants, Once&& once) {
  for (int rep = 0; rep < reps; ++rep)
    for (std::size_t k = 0; k < variants; ++k) once(rep, k);
}

double median(std::vector<double> v);

}  // namespace apps
