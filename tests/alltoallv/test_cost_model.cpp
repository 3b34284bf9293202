// The flat model of paper 001: eq. 1-4, Theorem 2, Table 1 presets, predictions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "../unit/error_helpers.hpp"
#include "kernels/traffic.hpp"
#include "libcomm/cost_model.hpp"

namespace {

using libcomm::AlltoallvAlgo;
using libcomm::AlltoallvMode;

TEST(FlatModel, Table1Presets) {
  const auto sp2 = libcomm::flat_platform_from_name("SP2");
  EXPECT_DOUBLE_EQ(sp2.ts_us, 44);
  EXPECT_DOUBLE_EQ(sp2.tc_td_us, 0.035);
  EXPECT_DOUBLE_EQ(libcomm::flat_platform_from_name("T3D").ts_us, 38);
  EXPECT_DOUBLE_EQ(libcomm::flat_platform_from_name("CM5").tc_td_us, 0.12);
  EXPECT_DOUBLE_EQ(libcomm::flat_platform_from_name("T3E").ts_us, 28);
  EXPECT_DOUBLE_EQ(libcomm::flat_platform_from_name("Myrinet").ts_us, 68);
  try {
    libcomm::flat_platform_from_name("Paragon");
    FAIL();
  } catch (const libcomm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("T3D"), std::string::npos);
  }
}

TEST(FlatModel, Equations1To4AndTheorem2) {
  const auto t3d = libcomm::flat_platform_from_name("T3D");
  // eq. 1: P [Ts + m (tc + tm + td)]
  EXPECT_NEAR(libcomm::flat_block_time_us(t3d, 16, 1000), 16 * (38 + 1000 * 0.043), 1e-9);
  // eq. 2 with tm = 0: P max(Ts, m td)
  EXPECT_NEAR(libcomm::flat_nonblock_time_us(t3d, 16, 100), 16 * 38.0, 1e-9);
  EXPECT_NEAR(libcomm::flat_nonblock_time_us(t3d, 16, 10000), 16 * 430.0, 1e-9);
  // eq. 3 and 4 with contention factors
  EXPECT_NEAR(libcomm::flat_irregular_block_us(t3d, 8, 5000, 2), 8 * 38 + 5000 * 0.086, 1e-9);
  EXPECT_NEAR(libcomm::flat_irregular_nonblock_us(t3d, 8, 5000, 1),
              std::max(8 * 38.0, 5000 * 0.043), 1e-9);
  // Theorem 2 at P = 64: 34 Ts + 4 * 9 * 8 Lmax / 64 (tc + td)
  EXPECT_NEAR(libcomm::four_stage_theorem2_us(t3d, 64, 64000), 34 * 38 + 4 * 9 * 8 * 1000 * 0.043,
              1e-6);
}

TEST(FlatModel, PredictionsFollowTheStartUpCountsAndBoundTheorem2) {
  const auto sp2 = libcomm::flat_platform_from_name("SP2");
  for (int p : {16, 25, 61, 64, 100}) {
    // Small messages: start-ups dominate; A4 (4 sqrt P + 2 start-ups) beats A1 (P) for
    // P >= 25 and A2 (2P) always (the paper's blocking-mode conclusion).
    const auto m = kernels::traffic_matrix({kernels::TrafficPattern::Pattern1, 16, 1, 3}, p);
    const double a1 = libcomm::predict_alltoallv_us(AlltoallvAlgo::Direct, AlltoallvMode::Blocking,
                                                    sp2, p, m, 22);
    const double a2 = libcomm::predict_alltoallv_us(AlltoallvAlgo::TwoStage,
                                                    AlltoallvMode::Blocking, sp2, p, m, 22);
    const double a4 = libcomm::predict_alltoallv_us(AlltoallvAlgo::FourStage,
                                                    AlltoallvMode::Blocking, sp2, p, m, 22);
    EXPECT_LT(a4, a2) << p;
    if (p >= 25) {
      EXPECT_LT(a4, a1) << p;
    }
    // Theorem 2 bounds the stage-by-stage prediction (divisible counts).
    auto md = m;
    for (auto& v : md) v *= p;
    std::int64_t lmax = 0;
    for (int i = 0; i < p; ++i) {
      std::int64_t out = 0, in = 0;
      for (int j = 0; j < p; ++j) out += md[i * p + j], in += md[j * p + i];
      lmax = std::max({lmax, out, in});
    }
    const double a4d = libcomm::predict_alltoallv_us(AlltoallvAlgo::FourStage,
                                                     AlltoallvMode::Blocking, sp2, p, md, 22);
    EXPECT_LE(a4d, libcomm::four_stage_theorem2_us(sp2, p, static_cast<double>(lmax) * 22) + 1e-6)
        << p;
  }
}

// The calibration's fit: exact data give the line back with zero residual; a point off
// the line by 10 % shows up in the residual; weights 1/y^2 keep the small-size intercept
// accurate beside a point a million times larger.
TEST(FlatModel, RelativeLeastSquaresFit) {
  const std::vector<double> x = {0, 1024, 65536, 1048576};
  std::vector<double> y;
  for (double m : x) y.push_back(2e-6 + m * 3e-10);
  auto fit = libcomm::fit_line_relative(x, y);
  EXPECT_NEAR(fit.intercept, 2e-6, 1e-12);
  EXPECT_NEAR(fit.slope, 3e-10, 1e-16);
  EXPECT_NEAR(fit.rms_relative, 0, 1e-9);
  y[1] *= 1.1;
  fit = libcomm::fit_line_relative(x, y);
  EXPECT_GT(fit.rms_relative, 0.01);
  EXPECT_LT(fit.rms_relative, 0.1);
  EXPECT_NEAR(fit.intercept, 2e-6, 0.2e-6);
  EXPECT_THROW(libcomm::fit_line_relative(std::vector<double>{5, 5}, std::vector<double>{1, 2}),
               libcomm::Error);
}

// A calibrated platform survives the file round trip and is found by --predict's
// "file:PATH"; bad files are refused naming the file, line and key.
TEST(FlatModel, PlatformFileRoundTripAndErrors) {
  const std::string path = ::testing::TempDir() + "libcomm_flat_platform.txt";
  libcomm::FlatPlatform f{"calibrated", 1.25, 0.000375, 0.0001};
  libcomm::save_flat_platform(f, path, "test platform\nsecond comment line");
  const auto g = libcomm::flat_platform_from_name("file:" + path);
  EXPECT_EQ(g.name, "calibrated");
  EXPECT_DOUBLE_EQ(g.ts_us, 1.25);
  EXPECT_DOUBLE_EQ(g.tc_td_us, 0.000375);
  EXPECT_DOUBLE_EQ(g.tm_us, 0.0001);
  using libcomm::testing::contains;
  auto load_error = [&](const std::string& text) {
    std::ofstream(path) << text;
    return libcomm::testing::error_of([&] { libcomm::load_flat_platform(path); });
  };
  EXPECT_TRUE(contains(load_error("ts_us = 1\ntc_td_us = -2\n"), ":2: tc_td_us"));
  EXPECT_TRUE(contains(load_error("ts_us = 1\ntc_td_us = nan\n"), "tc_td_us"));
  EXPECT_TRUE(contains(load_error("ts_us = 1\nbandwidth = 3\n"), "unknown key 'bandwidth'"));
  EXPECT_TRUE(contains(load_error("ts_us = 1\n"), "required"));
  EXPECT_TRUE(contains(load_error("ts_us 1\n"), "key = value"));
  std::remove(path.c_str());
  EXPECT_THROW(libcomm::flat_platform_from_name("file:/nonexistent/platform.txt"), libcomm::Error);
}

}  // namespace
