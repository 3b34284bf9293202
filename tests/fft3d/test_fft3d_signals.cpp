// The references of fft3d's checks, without MPI: the analytic spectrum of the plane-wave
// signal must equal a serial FFTW transform of that signal (c2c and r2c, odd and even
// grids, modes that wrap), and the random signal must not be trivially structured.
#include <gtest/gtest.h>

#include <cmath>

#include "validation.hpp"

namespace fft3d {
namespace {

Box whole(const Extent& g) {
  Box b;
  b.n = {g.nx, g.ny, g.nz};
  return b;
}

TEST(Fft3dSignals, PlaneWaveSpectrumMatchesSerialFftw) {
  for (const Extent g : {Extent{12, 10, 9}, Extent{8, 8, 8}, Extent{5, 3, 7}, Extent{16, 4, 2},
                         Extent{1, 1, 1}}) {
    for (bool r2c : {false, true}) {
      std::vector<cplx> got;
      if (r2c) {
        std::vector<double> in(g.total());
        fill_input(Signal::PlaneWaves, g, whole(g), in.data());
        got = serial_forward(in, g);
      } else {
        std::vector<cplx> in(g.total());
        fill_input(Signal::PlaneWaves, g, whole(g), in.data());
        got = serial_forward(in, g);
      }
      const Spectrum s = plane_wave_spectrum(g, r2c);
      const std::size_t nzc = r2c ? g.nz / 2 + 1 : g.nz;
      std::vector<cplx> want(g.nx * g.ny * nzc);
      for (const auto& [k, v] : s.spikes) want[(k[0] * g.ny + k[1]) * nzc + k[2]] = v;
      ASSERT_GT(s.peak, 0) << g.str();
      EXPECT_LT(relative_max_error(got, want), 1e-12) << g.str() << (r2c ? " r2c" : " c2c");
      EXPECT_LE(s.spikes.size(), r2c ? 6u : 3u);
    }
  }
}

TEST(Fft3dSignals, RandomSignalSpreadsOverTheSpectrum) {
  const Extent g{8, 6, 5};
  std::vector<cplx> in(g.total());
  fill_input(Signal::Random, g, whole(g), in.data());
  const auto out = serial_forward(in, g);
  std::size_t nonzero = 0;
  for (const auto& v : out) nonzero += std::abs(v) > 1e-6;
  EXPECT_GT(nonzero, out.size() * 9 / 10);
  // A box with another memory order gets the same values at the same points.
  Box yxz = whole(g);
  yxz.order = {1, 0, 2};
  std::vector<cplx> in2(g.total());
  fill_input(Signal::Random, g, yxz, in2.data());
  EXPECT_EQ(in2[yxz.local_index({3, 2, 1})], in[whole(g).local_index({3, 2, 1})]);
  EXPECT_NE(in[0], in[1]);
}

}  // namespace
}  // namespace fft3d
