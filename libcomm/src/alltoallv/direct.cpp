// A1: the straightforward one-stage algorithm (paper 001, section 3.1.1). In step k,
// 1 <= k <= P, node j sends the message for node (j + k) % P (the message to itself last)
// and receives the one from (j - k) % P. Message sizes are known from the counts, so no
// run headers travel. The data are already grouped by destination in an alltoallv send
// buffer, so messages go out straight from it (no composition copy); the dual-buffer mode
// therefore has nothing to overlap and runs as the single-buffer one.
#include <algorithm>
#include <cstring>
#include <vector>

#include "../core/mpi_bytes.hpp"
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

void direct_alltoallv(const std::byte* send, std::span<const std::int64_t> sendcounts,
                      std::span<const std::int64_t> sdispls, std::byte* recv,
                      std::span<const std::int64_t> recvcounts,
                      std::span<const std::int64_t> rdispls, std::size_t esize, const Comm& comm,
                      AlltoallvMode mode, AlltoallvStats* stats) {
  constexpr int kTag = 7399;
  const int p = comm.size(), me = comm.rank();
  const MPI_Comm mc = comm.internal();
  auto sz = [&](std::span<const std::int64_t> c, int k) {
    return static_cast<std::size_t>(c[static_cast<std::size_t>(k)]) * esize;
  };
  auto sat = [&](int k) {
    return send + static_cast<std::size_t>(sdispls[static_cast<std::size_t>(k)]) * esize;
  };
  auto rat = [&](int k) {
    return recv + static_cast<std::size_t>(rdispls[static_cast<std::size_t>(k)]) * esize;
  };

  if (mode == AlltoallvMode::Blocking) {
    for (int k = 1; k <= p; ++k) {
      const int to = (me + k) % p, from = (me - k % p + p) % p;
      if (to == me) {
        if (sz(sendcounts, me) > 0) std::memcpy(rat(me), sat(me), sz(sendcounts, me));
        continue;
      }
      const MpiBytes out(sz(sendcounts, to)), in(sz(recvcounts, from));
      check_mpi(MPI_Sendrecv(sat(to), out.count(), out.type(), to, kTag, rat(from), in.count(),
                             in.type(), from, kTag, mc, MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
    }
  } else {
    std::vector<MPI_Request> reqs;
    reqs.reserve(2 * static_cast<std::size_t>(p));
    for (int k = 1; k < p; ++k) {
      const int from = (me - k + p) % p;
      const MpiBytes in(sz(recvcounts, from));
      reqs.emplace_back();
      check_mpi(MPI_Irecv(rat(from), in.count(), in.type(), from, kTag, mc, &reqs.back()),
                "MPI_Irecv");
    }
    for (int k = 1; k < p; ++k) {
      const int to = (me + k) % p;
      const MpiBytes out(sz(sendcounts, to));
      reqs.emplace_back();
      check_mpi(MPI_Isend(sat(to), out.count(), out.type(), to, kTag, mc, &reqs.back()),
                "MPI_Isend");
    }
    if (sz(sendcounts, me) > 0) std::memcpy(rat(me), sat(me), sz(sendcounts, me));
    wait_all(static_cast<int>(reqs.size()), reqs.data());
  }

  if (stats != nullptr) {
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
    stats->stages = {st};
  }
}

}  // namespace libcomm::detail
