// The N-body kernels: forces and potential against closed forms, conservation laws of the
// serial leapfrog, and the seeded initial state.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/nbody.hpp"

namespace {

TEST(NBodyKernels, TwoBodyAccelerationMatchesClosedForm) {
  const double eps2 = 0.01;
  const std::vector<double> b = {0, 0, 0, 2.0, 3, 4, 0, 0.5};  // r = 5
  std::vector<double> acc(6, 0.0);
  kernels::accumulate_accelerations(b.data(), 2, b.data(), 2, eps2, acc.data());
  const double s = std::pow(25 + eps2, -1.5);
  EXPECT_NEAR(acc[0], 0.5 * 3 * s, 1e-15);
  EXPECT_NEAR(acc[1], 0.5 * 4 * s, 1e-15);
  EXPECT_DOUBLE_EQ(acc[2], 0.0);
  EXPECT_NEAR(acc[3], -2.0 * 3 * s, 1e-15);
  EXPECT_NEAR(acc[4], -2.0 * 4 * s, 1e-15);
  // Momentum: m1 a1 + m2 a2 = 0.
  EXPECT_NEAR(2.0 * acc[0] + 0.5 * acc[3], 0.0, 1e-15);
}

TEST(NBodyKernels, SelfInteractionIsZeroAndCallsAccumulate) {
  const std::vector<double> b = {1, 2, 3, 1.0};
  std::vector<double> acc = {1, 2, 3};
  kernels::accumulate_accelerations(b.data(), 1, b.data(), 1, 1e-4, acc.data());
  EXPECT_EQ(acc, (std::vector<double>{1, 2, 3}));
}

TEST(NBodyKernels, SourcesInBlocksGiveTheSameForcesUpToRounding) {
  const std::size_t n = 50;
  std::vector<double> b(4 * n), v(3 * n);
  kernels::initial_bodies(1, n, 0, n, b.data(), v.data());
  std::vector<double> whole(3 * n, 0.0), blocks(3 * n, 0.0);
  kernels::accumulate_accelerations(b.data(), n, b.data(), n, 0.0025, whole.data());
  // The systolic order: blocks of 13 visited from the last one backwards.
  for (std::size_t start = 39;; start -= 13) {
    kernels::accumulate_accelerations(b.data(), n, b.data() + 4 * start, std::min<std::size_t>(13, n - start),
                                      0.0025, blocks.data());
    if (start == 0) break;
  }
  double scale = 0;
  for (double a : whole) scale = std::max(scale, std::abs(a));
  for (std::size_t k = 0; k < 3 * n; ++k) EXPECT_NEAR(blocks[k], whole[k], 1e-13 * scale);
  // Total momentum change sums to zero.
  for (int c = 0; c < 3; ++c) {
    double p = 0;
    for (std::size_t k = 0; k < n; ++k) p += b[4 * k + 3] * whole[3 * k + c];
    EXPECT_NEAR(p, 0.0, 1e-12 * scale);
  }
}

TEST(NBodyKernels, PairPotentialCountsOrderedPairsAndSkipsSelf) {
  const double eps2 = 0.25;
  const std::vector<double> b = {0, 0, 0, 2.0, 0, 0, 1, 3.0};
  const double want = -2.0 * 3.0 / std::sqrt(1 + eps2);
  EXPECT_NEAR(kernels::pair_potential_sum(b.data(), 2, 0, b.data(), 2, 0, eps2), 2 * want, 1e-14);
  // Target 1 against source 0 only (global indices 1 and 0).
  EXPECT_NEAR(kernels::pair_potential_sum(b.data() + 4, 1, 1, b.data(), 1, 0, eps2), want, 1e-14);
  // A body against itself (same global index) contributes nothing.
  EXPECT_EQ(kernels::pair_potential_sum(b.data(), 1, 5, b.data(), 1, 5, eps2), 0.0);
  const std::vector<double> vel = {1, 0, 0, 0, 2, 0};
  EXPECT_NEAR(kernels::kinetic_energy(b.data(), vel.data(), 2), 0.5 * 2 * 1 + 0.5 * 3 * 4, 1e-15);
}

TEST(NBodyKernels, LeapfrogKeepsACircularOrbitAndItsEnergy) {
  // Two equal masses m = 0.5 at distance 1, circular orbit: v = sqrt(G M_total / d) / 2 each.
  const double eps2 = 1e-12;  // positive: the self pair must be 0 / sqrt(eps2), not 0 / 0
  const double v = 0.5 * std::sqrt(1.0 / 1.0);
  std::vector<double> b = {-0.5, 0, 0, 0.5, 0.5, 0, 0, 0.5};
  std::vector<double> vel = {0, -v, 0, 0, v, 0};
  const double e0 = kernels::total_energy(b.data(), vel.data(), 2, eps2);
  const double period = 2 * M_PI * 0.5 / v;
  const int steps = 2000;
  kernels::serial_leapfrog(b.data(), vel.data(), 2, steps, period / steps, eps2);
  const double e1 = kernels::total_energy(b.data(), vel.data(), 2, eps2);
  EXPECT_LT(std::abs(e1 - e0) / std::abs(e0), 1e-6);
  // Back where it started after one period, centre of mass fixed.
  EXPECT_NEAR(b[0], -0.5, 1e-3);
  EXPECT_NEAR(b[1], 0.0, 1e-2);
  EXPECT_NEAR(b[0] + b[4], 0.0, 1e-12);
  EXPECT_NEAR(b[1] + b[5], 0.0, 1e-12);
  // A quarter period later the bodies are on the y axis: a real motion, not a frozen state.
  kernels::serial_leapfrog(b.data(), vel.data(), 2, steps / 4, period / steps, eps2);
  EXPECT_NEAR(std::abs(b[1]), 0.5, 1e-2);
  EXPECT_NEAR(b[0], 0.0, 1e-2);
}

TEST(NBodyKernels, InitialStateIsInTheUnitBallAndGeneratedPieceByPiece) {
  const std::size_t n = 101;
  std::vector<double> b(4 * n), v(3 * n);
  kernels::initial_bodies(5, n, 0, n, b.data(), v.data());
  double mass = 0;
  for (std::size_t k = 0; k < n; ++k) {
    EXPECT_LE(b[4 * k] * b[4 * k] + b[4 * k + 1] * b[4 * k + 1] + b[4 * k + 2] * b[4 * k + 2], 1.0);
    for (int c = 0; c < 3; ++c) EXPECT_LE(std::abs(v[3 * k + c]), 0.3);
    mass += b[4 * k + 3];
  }
  EXPECT_NEAR(mass, 1.0, 1e-13);
  // A rank generating bodies 40..69 only gets exactly the same bodies.
  std::vector<double> bp(4 * 30), vp(3 * 30);
  kernels::initial_bodies(5, n, 40, 30, bp.data(), vp.data());
  for (std::size_t k = 0; k < 4 * 30; ++k) EXPECT_EQ(bp[k], b[4 * 40 + k]);
  for (std::size_t k = 0; k < 3 * 30; ++k) EXPECT_EQ(vp[k], v[3 * 40 + k]);
}

}  // namespace
