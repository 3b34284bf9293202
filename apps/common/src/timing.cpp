#include "apps/timing.hpp"

#include <algorithm>

namespace apps {

std::vector<double> slowest(std::vector<double> local, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, local.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, comm);
  return local;
}

double slowest(double local, MPI_Comm comm) { return slowest(std::vector<double>{local}, comm)[0]; }

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace apps
