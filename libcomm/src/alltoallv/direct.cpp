// A1: the straightforward one-stage algorithm (paper 001, section 3.1.1). In step k,
// 1 <= k <= P, node j sends the message for node (j + k) % P (the message to itself last)
// and receives the one from (j - k) % P. Message sizes are known from the counts, so no
// run headers travel. The data are already grouped by destination in an alltoallv send
// buffer, so messages go out straight from it (no composition copy); the dual-buffer mode
// therefore has nothing to overlap and runs as the single-buffer one.
#include <algorithm>
#include <vector>

#include "alltoallv_internal.hpp"

namespace libcomm::detail {

Schedule shift_schedule(int p, const std::vector<std::vector<int>>& groups,
                        const std::string& name) {
  Schedule s;
  s.name = name;
  s.nprocs = p;
  s.ports = 1;
  std::size_t rounds = 0;
  for (const auto& g : groups) rounds = std::max(rounds, g.size());
  s.rounds.resize(rounds);
  for (const auto& g : groups) {
    const auto n = g.size();
    for (std::size_t k = 1; k <= n; ++k)
      for (std::size_t m = 0; m < n; ++m) {
        const int src = g[m], dst = g[(m + k) % n];
        s.rounds[k - 1].transfers.push_back({src, dst, aapc_block(src, dst, p)});
      }
  }
  return s;
}

StagedSchedule direct_schedule(int p) {
  std::vector<std::vector<int>> all(1);
  for (int r = 0; r < p; ++r) all[0].push_back(r);
  StagedSchedule s;
  s.name = "direct";
  s.nprocs = p;
  s.stage_names = {"1 direct"};
  s.stages = {shift_schedule(p, all, "direct")};
  return s;
}

StepProgram direct_alltoallv_program(std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> sdispls,
                                     std::span<const std::int64_t> recvcounts, std::span<const std::int64_t> rdispls,
                                     int me, AlltoallvMode mode) {
  const int p = static_cast<int>(sendcounts.size());
  ProgramBuilder pb("direct", me, p);
  const auto range = [&](Area area, std::span<const std::int64_t> c, std::span<const std::int64_t> d, int k) {
    const auto u = static_cast<std::size_t>(k);
    return ByteRange{area, static_cast<std::size_t>(d[u]), static_cast<std::size_t>(c[u])};
  };
  std::size_t send_extent = 0, recv_extent = 0;
  for (int k = 0; k < p; ++k) {
    const ByteRange s = range(Area::Send, sendcounts, sdispls, k), r = range(Area::Recv, recvcounts, rdispls, k);
    if (s.bytes) send_extent = std::max(send_extent, s.offset + s.bytes);
    if (r.bytes) recv_extent = std::max(recv_extent, r.offset + r.bytes);
  }
  pb.set_extents(send_extent, recv_extent);
  const ByteRange self_from = range(Area::Send, sendcounts, sdispls, me),
                  self_to = range(Area::Recv, recvcounts, rdispls, me);
  if (mode == AlltoallvMode::Blocking) {
    // Step k in stage k - 1; the message to itself (k = P) is a local copy in the first
    // stage, after its messages are posted (overlapping them in the non-blocking and
    // persistent forms; a blocking run's one-exchange stage is one MPI_Sendrecv, then it).
    for (int k = 1; k < p; ++k) {
      const int to = (me + k) % p, from = (me - k + p) % p;
      pb.exchange(static_cast<std::uint32_t>(k - 1), to, range(Area::Send, sendcounts, sdispls, to), from,
                  range(Area::Recv, recvcounts, rdispls, from));
    }
    pb.copy(0, self_from, self_to, true);
  } else {
    // Every receive and send posted at once; the local copy overlaps them.
    for (int k = 1; k < p; ++k) {
      const int from = (me - k + p) % p;
      pb.recv(0, from, range(Area::Recv, recvcounts, rdispls, from), 0);
    }
    for (int k = 1; k < p; ++k) {
      const int to = (me + k) % p;
      pb.send(0, to, range(Area::Send, sendcounts, sdispls, to), 0);
    }
    pb.copy(0, self_from, self_to, true);
  }
  return std::move(pb).program();
}

AlltoallvStageStats direct_stats(std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> recvcounts,
                                 int me) {
  const int p = static_cast<int>(sendcounts.size());
  const auto sz = [&](std::span<const std::int64_t> c, int k) {
    return static_cast<std::size_t>(c[static_cast<std::size_t>(k)]);
  };
  AlltoallvStageStats st;
  st.name = "1 direct";
  st.steps = p;
  st.messages_received = p;
  st.messages_sent = p - 1;
  for (int k = 0; k < p; ++k) {
    st.longest_message = std::max<std::uint64_t>(st.longest_message, sz(recvcounts, k));
    st.received_bytes += sz(recvcounts, k);
    st.send_buffer_bytes += sz(sendcounts, k);
    if (k != me) st.sent_bytes += sz(sendcounts, k);
  }
  st.recv_buffer_bytes = st.received_bytes;
  st.peak_buffer_bytes = st.send_buffer_bytes + st.recv_buffer_bytes;
  return st;
}

namespace {

// P - 1 steps of one exchange (blocking), whose long messages chain, or every message
// posted at once (n1, n2).
double predicted_time(const AlltoallvOp::Shape& s, const CostParams& c) {
  return s.opts->mode == AlltoallvMode::Blocking ? alltoallv_cost::ring_order_steps(s, c)
                                                 : alltoallv_cost::posted_at_once(s, c);
}

StepProgram program(const AlltoallvOp::Shape& s, int rank) {
  return direct_alltoallv_program(s.sc, s.sd, s.rc, s.rd, rank, s.opts->mode);
}

}  // namespace

extern const AlltoallvAlgorithm direct_alltoallv{
    .algo = AlltoallvAlgo::Direct, .name = "direct",
    .summary = "A1: P steps, step k sends to (me + k) % P (paper 001, s. 3.1.1)", .paper = "paper 001, s. 3.1.1",
    .cost = predicted_time, .program = program};

}  // namespace libcomm::detail
