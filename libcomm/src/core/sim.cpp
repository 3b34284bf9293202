#include "libcomm/sim.hpp"

#include <time.h>

#ifdef LIBCOMM_SIMGRID
#include <simgrid/host.h>
#include <smpi/smpi.h>
#include <xbt/config.h>
// smpi_helpers.h turns clock_gettime into SMPI's simulated clock; here we want the real
// CPU time of the thread.
#undef clock_gettime
#endif

namespace libcomm::sim {
namespace {
// Per process; under SMPI's privatisation, per simulated process.
double g_charged = 0.0;
}  // namespace

double thread_cpu_seconds() {
#ifdef LIBCOMM_SIMGRID
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
#else
  return 0.0;
#endif
}

void charge_since(double start) {
#ifdef LIBCOMM_SIMGRID
  static const bool smpi_benchmarks = sg_cfg_get_boolean("smpi/simulate-computation") != 0;
  if (smpi_benchmarks) return;
  const double seconds = thread_cpu_seconds() - start;
  if (seconds <= 0.0) return;
  g_charged += seconds;
  smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
#else
  (void)start;
#endif
}

double charged_seconds() { return g_charged; }

}  // namespace libcomm::sim
