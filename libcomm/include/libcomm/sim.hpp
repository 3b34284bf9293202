// Charging local work to the simulated clock (SimGrid mode, docs/architecture.md).
//
// Under smpirun with smpi/simulate-computation:no (scripts/simulate.sh without
// --host-speed, scripts/reproduce/cycles.sh) computation takes no simulated time and only
// the data motion is modelled. A section run through charge_local_work() is then charged
// explicitly: the CPU time this OS thread spent in it (CLOCK_THREAD_CPUTIME_ID) is
// executed on the simulated host at its speed, so the simulated clock advances by the
// same number of seconds. SMPI runs the simulated processes one at a time, as contexts on
// one OS thread, and switches only inside MPI calls: a section that makes no MPI call is
// measured alone, and while the OS preempts the thread (other programs on a loaded
// machine) no CPU time accrues. With simulate-computation:yes SMPI already charges every
// cycle between MPI calls (with the same clock), so nothing more is added. Outside a
// LIBCOMM_SIMGRID build charge_local_work() only runs the section.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace libcomm::sim {

// CPU time of the calling thread, in seconds; 0 outside a LIBCOMM_SIMGRID build.
double thread_cpu_seconds();
// Charges thread_cpu_seconds() - start to the simulated host, when SMPI does not
// benchmark computation itself; a no-op outside a LIBCOMM_SIMGRID build.
void charge_since(double start);
// Local work charged so far by this (simulated) process, in seconds.
double charged_seconds();
// True when SMPI itself charges computation (smpi/simulate-computation:yes, i.e.
// scripts/simulate.sh --host-speed); false outside a LIBCOMM_SIMGRID build.
bool smpi_charges_computation();
// Charges `seconds` of modelled local work (a cost model rather than a measurement, so
// the simulated clock does not depend on this machine or its load) to the simulated host.
// Only meaningful when SMPI does not charge computation itself; a no-op outside a
// LIBCOMM_SIMGRID build.
void charge_seconds(double seconds);
// The copy model: once a rate is set (bytes per second; 0 turns it off), the local block
// copies inside the all-to-all algorithms (staging in leader / send_aggregate /
// recv_distribute, Bruck's rotations and packing, a schedule's self-copies) charge
// bytes / rate through charge_copy(). Set by fft3d --model-copy. Per simulated process.
void set_copy_rate(double bytes_per_second);
// The rate of a cold copy (Step::cold: its source was written by the network, so it comes
// from memory rather than this core's cache; paper 002, s. 3, Fig. 5). 0 (default): the
// copy rate. Set by --model-copy-cold.
void set_cold_copy_rate(double bytes_per_second);
// True when cold copies are charged at a rate of their own.
bool cold_copies_differ();
void charge_copy(double bytes, bool cold = false);
// The flop model (matvec / nbody --model-flops): once a rate is set (flops per second; 0
// turns it off), charge_flops(n) charges n / rate, and the executor's reduction steps charge
// one flop per element combined instead of their measured CPU time (so the combines of a
// reduce-scatter count in simulated time, deterministically). Per simulated process.
void set_flop_rate(double flops_per_second);
double flop_rate();
void charge_flops(double flops);
// For a program option that charges modelled local work (fft3d --model-fft/--model-copy,
// commbench/tune --model-copy): throws Error naming `option` unless this is a SimGrid
// build whose SMPI does not charge the measured computation itself (--host-speed).
void require_cost_model_applies(const std::string& option);

// Cross traffic for simulations (SimGrid builds): the other jobs of a shared network, so
// that one call does not see the network the next one sees and online's measurements are
// not the timings it is later scored on. `pairs` pairs of hosts that run no rank (chosen
// with a generator seeded with `seed`) exchange messages for ever: each sender waits a time
// uniform in [0, 2 gap_s], then sends a message of a size uniform in [1, 2 mean_bytes] to its
// partner, on the platform's own links, under the simulator's own network model. The run
// repeats exactly for one seed. Every rank calls it (each checks the arguments and the free
// hosts alike); the one with `start` true starts the traffic. Throws Error outside a SimGrid
// build or when the platform has fewer than 2 pairs hosts without a rank.
void start_cross_traffic(std::uint64_t seed, int pairs, double mean_bytes, double gap_s, bool start);

// Runs `section` (which must not call MPI) and charges its CPU time as above.
template <class Section>
void charge_local_work(Section&& section) {
  const double start = thread_cpu_seconds();
  std::forward<Section>(section)();
  charge_since(start);
}

}  // namespace libcomm::sim
