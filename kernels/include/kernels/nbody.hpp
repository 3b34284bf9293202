// Direct N-body kernels (gravitational, Plummer-softened, G = 1): the local work of the
// nbody app and its serial reference. No MPI.
//
// A body travels as 4 doubles {x, y, z, m}: coordinates and mass are all the all-to-all
// broadcast has to carry (paper 004, s. 2: "the coordinate and mass of each particle
// suffice"). Velocities and accelerations are 3 doubles per body and stay local.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kernels {

inline constexpr std::size_t kBodyDoubles = 4;  // x, y, z, m

// acc[3t..3t+2] += sum over sources s of m_s (r_s - r_t) / (|r_s - r_t|^2 + eps2)^(3/2),
// for the ntgt bodies of `targets` and the nsrc bodies of `sources`. Sources are visited in
// order, each target's contribution from this call summed before it is added to acc, so
// one call over all N sources gives the same bits as the serial reference. A body meeting
// itself contributes zero (r_s - r_t = 0), so targets may be among the sources; that
// needs eps2 > 0 (eps2 = 0 would make the self pair 0 / 0).
void accumulate_accelerations(const double* targets, std::size_t ntgt, const double* sources,
                              std::size_t nsrc, double eps2, double* acc);

// Sum over ordered pairs (t, s) with t != s (global indices tgt_first + t, src_first + s) of
// -m_t m_s / sqrt(|r_s - r_t|^2 + eps2). Half of this summed over all targets is the
// potential energy.
double pair_potential_sum(const double* targets, std::size_t ntgt, std::size_t tgt_first,
                          const double* sources, std::size_t nsrc, std::size_t src_first,
                          double eps2);
// Sum of m |v|^2 / 2.
double kinetic_energy(const double* bodies, const double* vel, std::size_t n);

// Leapfrog (kick-drift-kick) halves: v += h a, and r += dt v.
void kick(double* vel, const double* acc, std::size_t n, double h);
void drift(double* bodies, const double* vel, std::size_t n, double dt);

// Initial state of bodies first .. first+count-1 of an n-body system: positions uniform in
// the unit ball, masses 1/n, velocities uniform in [-v, v]^3 with v = 0.3, all from
// (seed, global index), so any rank can generate any part.
void initial_bodies(std::uint64_t seed, std::size_t n, std::size_t first, std::size_t count,
                    double* bodies, double* vel);

// The serial reference: `steps` leapfrog steps of all n bodies (bodies and vel updated in
// place). One acceleration evaluation before the first step, then one per step.
void serial_leapfrog(double* bodies, double* vel, std::size_t n, int steps, double dt, double eps2);
// Total energy (kinetic + potential) of n bodies.
double total_energy(const double* bodies, const double* vel, std::size_t n, double eps2);

}  // namespace kernels
