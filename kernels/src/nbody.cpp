#include "kernels/nbody.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/dense.hpp"

namespace kernels {

void accumulate_accelerations(const double* targets, std::size_t ntgt, const double* sources,
                              std::size_t nsrc, double eps2, double* acc) {
  for (std::size_t t = 0; t < ntgt; ++t) {
    const double xt = targets[4 * t], yt = targets[4 * t + 1], zt = targets[4 * t + 2];
    double ax = 0, ay = 0, az = 0;
    for (std::size_t s = 0; s < nsrc; ++s) {
      const double dx = sources[4 * s] - xt, dy = sources[4 * s + 1] - yt,
                   dz = sources[4 * s + 2] - zt;
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      const double inv = 1.0 / std::sqrt(r2);
      const double f = sources[4 * s + 3] * inv * inv * inv;
      ax += f * dx;
      ay += f * dy;
      az += f * dz;
    }
    acc[3 * t] += ax;
    acc[3 * t + 1] += ay;
    acc[3 * t + 2] += az;
  }
}

double pair_potential_sum(const double* targets, std::size_t ntgt, std::size_t tgt_first,
                          const double* sources, std::size_t nsrc, std::size_t src_first,
                          double eps2) {
  double sum = 0;
  for (std::size_t t = 0; t < ntgt; ++t)
    for (std::size_t s = 0; s < nsrc; ++s) {
      if (tgt_first + t == src_first + s) continue;
      const double dx = sources[4 * s] - targets[4 * t], dy = sources[4 * s + 1] - targets[4 * t + 1],
                   dz = sources[4 * s + 2] - targets[4 * t + 2];
      sum -= targets[4 * t + 3] * sources[4 * s + 3] / std::sqrt(dx * dx + dy * dy + dz * dz + eps2);
    }
  return sum;
}

double kinetic_energy(const double* bodies, const double* vel, std::size_t n) {
  double e = 0;
  for (std::size_t k = 0; k < n; ++k)
    e += 0.5 * bodies[4 * k + 3] *
         (vel[3 * k] * vel[3 * k] + vel[3 * k + 1] * vel[3 * k + 1] + vel[3 * k + 2] * vel[3 * k + 2]);
  return e;
}

void kick(double* vel, const double* acc, std::size_t n, double h) {
  for (std::size_t k = 0; k < 3 * n; ++k) vel[k] += h * acc[k];
}

void drift(double* bodies, const double* vel, std::size_t n, double dt) {
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t c = 0; c < 3; ++c) bodies[4 * k + c] += dt * vel[3 * k + c];
}

void initial_bodies(std::uint64_t seed, std::size_t n, std::size_t first, std::size_t count,
                    double* bodies, double* vel) {
  constexpr std::uint64_t kPosition = 11, kVelocity = 12;
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint64_t g = first + k;
    // Rejection sampling in the unit ball: attempt a uses the values (g, 3a .. 3a+2).
    double x = 0, y = 0, z = 0;
    for (std::uint64_t a = 0;; ++a) {
      x = seeded_value(seed, kPosition, g, 3 * a);
      y = seeded_value(seed, kPosition, g, 3 * a + 1);
      z = seeded_value(seed, kPosition, g, 3 * a + 2);
      if (x * x + y * y + z * z <= 1.0) break;
    }
    bodies[4 * k] = x;
    bodies[4 * k + 1] = y;
    bodies[4 * k + 2] = z;
    bodies[4 * k + 3] = 1.0 / static_cast<double>(n);
    for (std::size_t c = 0; c < 3; ++c) vel[3 * k + c] = 0.3 * seeded_value(seed, kVelocity, g, c);
  }
}

void serial_leapfrog(double* bodies, double* vel, std::size_t n, int steps, double dt, double eps2) {
  std::vector<double> acc(3 * n, 0.0);
  accumulate_accelerations(bodies, n, bodies, n, eps2, acc.data());
  for (int s = 0; s < steps; ++s) {
    kick(vel, acc.data(), n, 0.5 * dt);
    drift(bodies, vel, n, dt);
    std::fill(acc.begin(), acc.end(), 0.0);
    accumulate_accelerations(bodies, n, bodies, n, eps2, acc.data());
    kick(vel, acc.data(), n, 0.5 * dt);
  }
}

double total_energy(const double* bodies, const double* vel, std::size_t n, double eps2) {
  return kinetic_energy(bodies, vel, n) + 0.5 * pair_potential_sum(bodies, n, 0, bodies, n, 0, eps2);
}

}  // namespace kernels
