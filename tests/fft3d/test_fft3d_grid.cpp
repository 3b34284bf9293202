// fft3d's grid arithmetic: the block split, the --size / --grid parsers and their error
// messages, the automatic pencil grid and the Box index map.
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <string>

#include "grid.hpp"
#include "libcomm/error.hpp"

namespace fft3d {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const libcomm::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Fft3dGrid, SplitCoversEveryIndexOnceAndIsBalanced) {
  for (std::size_t n : {0, 1, 5, 9, 10, 64}) {
    for (int p : {1, 2, 3, 4, 7, 12}) {
      std::size_t next = 0, lo = n, hi = 0;
      for (int i = 0; i < p; ++i) {
        const Range r = split(n, p, i);
        EXPECT_EQ(r.lo, next) << n << " " << p << " " << i;
        next += r.n;
        lo = std::min(lo, r.n);
        hi = std::max(hi, r.n);
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(hi - lo, 1u);
    }
  }
}

TEST(Fft3dGrid, ParseExtent) {
  const Extent e = parse_extent("12x10x9", "--size");
  EXPECT_EQ(e.nx, 12u);
  EXPECT_EQ(e.ny, 10u);
  EXPECT_EQ(e.nz, 9u);
  EXPECT_EQ(e.str(), "12x10x9");
  EXPECT_EQ(parse_cube(7, "--n").total(), 343u);
  EXPECT_NE(error_of([] { parse_extent("8x0x8", "--size"); }).find("--size: '8x0x8' has a dimension of 0"), std::string::npos);
  EXPECT_NE(error_of([] { parse_extent("8x8", "--size"); }).find("2 dimension(s), not 3"), std::string::npos);
  EXPECT_NE(error_of([] { parse_extent("8x8x", "--size"); }).find("not a list"), std::string::npos);
  EXPECT_NE(error_of([] { parse_extent("-8x8x8", "--size"); }).find("not a list"), std::string::npos);
  EXPECT_NE(error_of([] { parse_extent("", "--size"); }).find("not a list"), std::string::npos);
  EXPECT_NE(error_of([] { parse_cube(0, "--n"); }).find("--n: 0 is not a positive"), std::string::npos);
  EXPECT_NE(error_of([] { parse_cube(-4, "--n"); }).find("--n"), std::string::npos);
}

TEST(Fft3dGrid, ParseProcGrid) {
  const ProcGrid g = parse_proc_grid("2x3", "--grid", 6);
  EXPECT_EQ(g.pr, 2);
  EXPECT_EQ(g.pc, 3);
  EXPECT_NE(error_of([] { parse_proc_grid("3x2", "--grid", 4); })
                .find("process grid 3x2 has 6 processes but the run has 4 ranks"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_proc_grid("0x4", "--grid", 4); }).find("dimension of 0"), std::string::npos);
  EXPECT_NE(error_of([] { parse_proc_grid("4", "--grid", 4); }).find("1 dimension(s), not 2"), std::string::npos);
  EXPECT_NE(error_of([] { parse_proc_grid("2x2x1", "--grid", 4); }).find("3 dimension(s)"), std::string::npos);
}

TEST(Fft3dGrid, ChooseProcGridPrefersEvenThenSquare) {
  // 6 ranks on 12x12x12: 3x2 splits evenly and is the squarest.
  EXPECT_EQ(choose_proc_grid(6, {12, 12, 12}, 12).str(), "3x2");
  EXPECT_EQ(choose_proc_grid(4, {16, 16, 16}, 16).str(), "2x2");
  EXPECT_EQ(choose_proc_grid(7, {14, 14, 14}, 14).str(), "7x1");
  // 4 ranks, NZc = 5 (r2c of 8): 2x2 would split z unevenly, 4x1 does not.
  EXPECT_EQ(choose_proc_grid(4, {8, 8, 8}, 5).str(), "4x1");
  for (int p = 1; p <= 12; ++p) {
    const ProcGrid g = choose_proc_grid(p, {10, 9, 8}, 8);
    EXPECT_EQ(g.pr * g.pc, p);
    EXPECT_GE(g.pr, g.pc);
  }
}

TEST(Fft3dGrid, BoxLocalIndexIsABijection) {
  Box b;
  b.lo = {2, 1, 3};
  b.n = {3, 4, 2};
  for (const auto& order : {std::array<int, 3>{0, 1, 2}, std::array<int, 3>{1, 0, 2},
                            std::array<int, 3>{2, 1, 0}}) {
    b.order = order;
    std::set<std::size_t> seen;
    for (std::size_t x = 2; x < 5; ++x)
      for (std::size_t y = 1; y < 5; ++y)
        for (std::size_t z = 3; z < 5; ++z) {
          const std::size_t i = b.local_index({x, y, z});
          EXPECT_LT(i, b.count());
          seen.insert(i);
        }
    EXPECT_EQ(seen.size(), b.count());
  }
  b.order = {1, 0, 2};  // [y][x][z]: z fastest, then x
  EXPECT_EQ(b.local_index({3, 1, 4}) - b.local_index({3, 1, 3}), 1u);
  EXPECT_EQ(b.local_index({3, 1, 3}) - b.local_index({2, 1, 3}), 2u);
}

}  // namespace
}  // namespace fft3d
