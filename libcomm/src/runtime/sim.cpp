#include "libcomm/sim.hpp"

#include <time.h>

#include "libcomm/error.hpp"

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
double g_copy_rate = 0.0;  // bytes per second of the copy model; 0 = off
double g_cold_rate = 0.0;  // of a cold copy; 0 = g_copy_rate
double g_flop_rate = 0.0;  // flops per second of the flop model; 0 = off
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

bool smpi_charges_computation() {
#ifdef LIBCOMM_SIMGRID
  static const bool benchmarks = sg_cfg_get_boolean("smpi/simulate-computation") != 0;
  return benchmarks;
#else
  return false;
#endif
}

void charge_seconds(double seconds) {
#ifdef LIBCOMM_SIMGRID
  if (seconds <= 0.0) return;
  g_charged += seconds;
  smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
#else
  (void)seconds;
#endif
}

void set_copy_rate(double bytes_per_second) { g_copy_rate = bytes_per_second; }

void set_cold_copy_rate(double bytes_per_second) { g_cold_rate = bytes_per_second; }

void set_flop_rate(double flops_per_second) { g_flop_rate = flops_per_second; }
double flop_rate() { return g_flop_rate; }
void charge_flops(double flops) {
  if (g_flop_rate > 0.0) charge_seconds(flops / g_flop_rate);
}

bool cold_copies_differ() { return g_copy_rate > 0.0 && g_cold_rate > 0.0 && g_cold_rate != g_copy_rate; }

void charge_copy(double bytes, bool cold) {
  if (g_copy_rate <= 0.0) return;
  charge_seconds(bytes / (cold && g_cold_rate > 0.0 ? g_cold_rate : g_copy_rate));
}

void require_cost_model_applies(const std::string& option) {
#ifndef LIBCOMM_SIMGRID
  throw Error(option + ": a cost model of the local work only applies to a SimGrid build "
                       "(run the program through scripts/simulate.sh)");
#else
  require(!smpi_charges_computation(),
          option + ": SMPI already charges the measured computation "
                   "(smpi/simulate-computation:yes, i.e. --host-speed); use one or the other");
#endif
}

void charge_since(double start) {
  if (smpi_charges_computation()) return;
  charge_seconds(thread_cpu_seconds() - start);
}

double charged_seconds() { return g_charged; }

}  // namespace libcomm::sim
