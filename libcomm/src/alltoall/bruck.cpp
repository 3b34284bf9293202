// Bruck's all-to-all (paper 002, section 2.4: "completes in minimum number of steps,
// log P"), for any P, as a step program:
//   1. rotate: slot k holds the block for rank (me + k) mod P (two copies into recv, which
//      holds the slots);
//   2. for bit = 1, 2, 4, ... < P, one stage each: pack every slot k with (k & bit) != 0
//      into scratch, exchange one packed message with ranks me + bit (to) and me - bit
//      (from), and unpack at the start of the next stage;
//   3. slot k now holds the block rank (me - k) mod P sent to me: un-rotate into place.
//      The map k -> (me - k) mod P is its own inverse, so swapping pairs through a one-block
//      scratch slot puts every block home.
// ceil(log2 P) rounds, each moving about half the data: few start-ups, more volume, so it
// suits small blocks.
#include "alltoall_internal.hpp"
#include "libcomm/program.hpp"

namespace libcomm::detail {

namespace {

StepProgram program(const AlltoallOp::Shape& s, int me) {
  const int p = s.p;
  const std::size_t b = s.block;
  ProgramBuilder out("bruck", me, p);
  const auto n = static_cast<std::size_t>(p), ume = static_cast<std::size_t>(me);
  out.set_extents(n * b, n * b);
  const auto slot = [&](std::size_t k, std::size_t count = 1) {
    return ByteRange{Area::Recv, k * b, count * b};
  };
  std::size_t most = 0;  // slots sent in the busiest round
  for (std::size_t bit = 1; bit < n; bit <<= 1) {
    std::size_t c = 0;
    for (std::size_t k = 0; k < n; ++k) c += (k & bit) != 0;
    most = std::max(most, c);
  }
  const std::size_t packed_out = out.scratch(most * b), packed_in = out.scratch(most * b);
  const std::size_t tmp = out.scratch(b);
  if (b == 0) return std::move(out).program();
  // 1. slot k = send block (me + k) mod P.
  out.copy(0, {Area::Send, ume * b, (n - ume) * b}, slot(0, n - ume));
  out.copy(0, {Area::Send, 0, ume * b}, slot(n - ume, ume));
  // 2. one stage per bit.
  std::uint32_t stage = 0;
  for (std::size_t bit = 1; bit < n; bit <<= 1, ++stage) {
    std::size_t k_packed = 0;
    for (std::size_t k = 0; k < n; ++k)
      if (k & bit) out.copy(stage, slot(k), {Area::Scratch, packed_out + (k_packed++) * b, b});
    const int to = static_cast<int>((ume + bit) % n), from = static_cast<int>((ume + n - bit) % n);
    out.exchange(stage, to, {Area::Scratch, packed_out, k_packed * b}, from,
                 {Area::Scratch, packed_in, k_packed * b});
    k_packed = 0;
    for (std::size_t k = 0; k < n; ++k)
      if (k & bit) out.copy(stage + 1, {Area::Scratch, packed_in + (k_packed++) * b, b}, slot(k));
  }
  // 3. un-rotate by swaps (after the last unpack, in the same final stage).
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t home = (ume + n - k) % n;
    if (k >= home) continue;
    out.copy(stage, slot(k), {Area::Scratch, tmp, b});
    out.copy(stage, slot(home), slot(k));
    out.copy(stage, {Area::Scratch, tmp, b}, slot(home));
  }
  return std::move(out).program();
}

double predicted_time(const AlltoallOp::Shape& s, const CostParams& c) {
  return cost::log_rounds_alltoall(layout_of(s), c, static_cast<double>(s.block));
}

}  // namespace

extern const AlltoallAlgorithm bruck_alltoall{.algo = AlltoallAlgo::Bruck, .name = "bruck",
                                              .summary = "Bruck's algorithm, ceil(log2 P) rounds, any P",
                                              .paper = "paper 002, s. 2.4", .cost = predicted_time, .program = program};

}  // namespace libcomm::detail
