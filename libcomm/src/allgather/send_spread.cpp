// Send-and-spread (paper 004, s. 5, alternative 3): all nodes send their block to a
// dedicated node (rank 0) concurrently (all-to-one personalized communication, the CM-200
// "send"), which then broadcasts the whole vector (the "spread", here a binomial tree,
// ceil(log2 P) levels). It moves the data twice, which is why the cycle algorithms beat it
// (Tables 4-6).
#include "allgather_internal.hpp"

namespace libcomm::detail {

std::uint32_t binomial_broadcast(ProgramBuilder& pb, std::uint32_t stage, ByteRange range) {
  const int np = pb.nprocs(), me = pb.rank();
  // Level k (distance 2^k): ranks below 2^k send to rank + 2^k; rank r >= 1 receives in the
  // level of its highest bit, from r - 2^k.
  for (int dist = 1; dist < np; dist *= 2, ++stage) {
    if (me < dist && me + dist < np) pb.send(stage, me + dist, range, stage);
    else if (me >= dist && me < 2 * dist) pb.recv(stage, me - dist, range, stage);
  }
  return stage;
}

namespace {

StepProgram program(const Blocks& b, int me, const AllgatherOptions&) {
  const int p = static_cast<int>(b.count.size());
  constexpr int kRoot = 0;
  ProgramBuilder pb("send_spread", me, p);
  const auto ume = static_cast<std::size_t>(me);
  pb.set_extents(b.count[ume], b.total);
  if (me == kRoot) {
    pb.copy(0, {Area::Send, 0, b.count[0]}, {Area::Recv, b.displ[0], b.count[0]});
    for (int r = 1; r < p; ++r) pb.recv(0, r, {Area::Recv, b.displ[r], b.count[r]}, 0);
  } else {
    pb.send(0, kRoot, {Area::Send, 0, b.count[ume]}, 0);
  }
  binomial_broadcast(pb, 1, {Area::Recv, 0, b.total});
  return std::move(pb).program();
}

// Every block to rank 0, then a binomial broadcast of the P blocks.
double predicted_time(const AllgatherOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  return cost::linear_gather(l, c, static_cast<double>(s.largest)) +
         cost::binomial_broadcast(l, c, static_cast<double>(s.total));
}

}  // namespace

extern const AllgatherAlgorithm send_spread_allgather{
    .algo = AllgatherAlgo::SendSpread, .name = "send_spread", .summary = "gather to rank 0, then broadcast",
    .paper = "paper 004, s. 5, alternative 3", .cost = predicted_time, .program = blocks_program<program>};

}  // namespace libcomm::detail
