// The staged algorithms without MPI: the same schedules and routers as the MPI engine,
// moving run descriptors (no data) between P simulated ranks in blocking order. Used by
// the schedule-level tests of paper 001's bounds at P up to 200.
#include <algorithm>

#include "alltoallv_internal.hpp"

namespace libcomm {

namespace {

// A1 moves no runs: its figures follow from row me (sent) and column me (received) of
// the count matrix, as the MPI engine computes them.
AlltoallvStats direct_stats(int p, int me, std::span<const std::int64_t> m, std::size_t esize) {
  std::vector<std::int64_t> sent(static_cast<std::size_t>(p)), received(static_cast<std::size_t>(p));
  for (int k = 0; k < p; ++k) {
    sent[static_cast<std::size_t>(k)] = m[static_cast<std::size_t>(me) * p + k] * static_cast<std::int64_t>(esize);
    received[static_cast<std::size_t>(k)] = m[static_cast<std::size_t>(k) * p + me] * static_cast<std::int64_t>(esize);
  }
  AlltoallvStats s;
  s.algo = AlltoallvAlgo::Direct;
  s.stages = {detail::direct_stats(sent, received, me)};
  return s;
}

// Every element arrived exactly once, at the right rank.
void check_delivered(std::vector<std::vector<detail::Run>>& held, std::span<const std::int64_t> m, int p) {
  using detail::Run;
  const auto up = static_cast<std::size_t>(p);
  for (int me = 0; me < p; ++me) {
    auto& runs = held[static_cast<std::size_t>(me)];
    std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
      return a.src != b.src ? a.src < b.src : a.first < b.first;
    });
    std::vector<std::int64_t> covered(up, 0);
    for (const Run& r : runs) {
      if (!(r.dst == me))
        throw Error("simulate_alltoallv: rank " + std::to_string(me) +
                    " ended with elements for rank " + std::to_string(r.dst));
      if (!(r.first == covered[static_cast<std::size_t>(r.src)]))
        throw Error("simulate_alltoallv: elements from rank " + std::to_string(r.src) +
                    " to rank " + std::to_string(me) + " missing or duplicated at element " +
                    std::to_string(r.first));
      covered[static_cast<std::size_t>(r.src)] += r.n;
    }
    for (int src = 0; src < p; ++src)
      if (!(covered[static_cast<std::size_t>(src)] ==
            m[static_cast<std::size_t>(src) * up + static_cast<std::size_t>(me)]))
        throw Error("simulate_alltoallv: rank " + std::to_string(me) + " got " +
                    std::to_string(covered[static_cast<std::size_t>(src)]) +
                    " of the elements from rank " + std::to_string(src));
  }
}

// Routing callbacks that count a stage's buffers and messages into stage_of(rank).
template <class StageOf>
detail::StageRouting counting_routing(StageOf stage_of, std::size_t esize) {
  using detail::Run;
  detail::StageRouting cb;
  cb.on_piece = [=](int r, std::size_t, std::size_t, const Run& piece) {
    stage_of(r).send_buffer_bytes += static_cast<std::uint64_t>(piece.n) * esize;
  };
  cb.on_message = [=](std::size_t, int src, int dst, std::size_t, const std::vector<Run>& runs) {
    auto& rs = stage_of(dst);
    std::uint64_t payload = 0;
    for (const Run& r : runs) payload += static_cast<std::uint64_t>(r.n) * esize;
    ++rs.messages_received;
    rs.received_bytes += payload;
    rs.header_bytes += runs.size() * detail::kRunHeaderBytes;
    rs.longest_message = std::max(rs.longest_message, payload);
    if (src != dst) {
      ++stage_of(src).messages_sent;
      stage_of(src).sent_bytes += payload;
    }
  };
  return cb;
}

}  // namespace

std::vector<AlltoallvStats> simulate_alltoallv(AlltoallvAlgo algo, int p,
                                               std::span<const std::int64_t> m, std::size_t esize) {
  using detail::Routed;
  using detail::Run;
  if (!(p > 0)) throw Error("simulate_alltoallv: P must be positive, got " + std::to_string(p));
  const auto up = static_cast<std::size_t>(p);
  if (!(m.size() == up * up))
    throw Error("simulate_alltoallv: counts hold " + std::to_string(m.size()) +
                " entries, need P * P = " + std::to_string(up * up));
  for (std::int64_t v : m)
    if (!(v >= 0)) throw Error("simulate_alltoallv: negative count");
  algo = choose_alltoallv(algo, p);
  if (!(algo != AlltoallvAlgo::Native)) throw Error("simulate_alltoallv: native has no schedule");
  std::vector<AlltoallvStats> stats(up);
  if (algo == AlltoallvAlgo::Direct) {
    for (int me = 0; me < p; ++me)
      stats[static_cast<std::size_t>(me)] = direct_stats(p, me, m, esize);
    return stats;
  }
  auto alg = detail::make_staged(algo, p);
  const StagedSchedule& sched = alg->schedule();
  const int stages = static_cast<int>(sched.stages.size());

  std::vector<std::vector<Run>> held(up), inbox(up);
  std::vector<std::uint64_t> prev_rbuf(up, 0);
  for (int i = 0; i < p; ++i) {
    for (int j = 0; j < p; ++j) {
      const auto n = m[static_cast<std::size_t>(i) * up + static_cast<std::size_t>(j)];
      if (n > 0) held[static_cast<std::size_t>(i)].push_back({i, j, 0, n});
      prev_rbuf[static_cast<std::size_t>(i)] += static_cast<std::uint64_t>(n) * esize;
    }
    stats[static_cast<std::size_t>(i)].algo = algo;
    stats[static_cast<std::size_t>(i)].stages.resize(static_cast<std::size_t>(stages));
  }
  const std::string who =
      "simulate_alltoallv: " + std::string(alltoallv_algo_name(algo)) + " P = " + std::to_string(p);
  for (int s = 0; s < stages; ++s) {
    const auto us = static_cast<std::size_t>(s);
    const auto stage_of = [&](int r) -> AlltoallvStageStats& {
      return stats[static_cast<std::size_t>(r)].stages[us];
    };
    for (int me = 0; me < p; ++me) {
      stage_of(me).name = sched.stage_names[us];
      stage_of(me).steps = static_cast<int>(sched.stages[us].rounds.size());
    }
    const detail::StageRouting cb = counting_routing(stage_of, esize);
    detail::route_stage(*alg, s, held, cb, who);
    for (int me = 0; me < p; ++me) {
      auto& st = stage_of(me);
      st.recv_buffer_bytes = st.received_bytes;
      st.peak_buffer_bytes = st.send_buffer_bytes +
                             std::max(prev_rbuf[static_cast<std::size_t>(me)], st.received_bytes);
      prev_rbuf[static_cast<std::size_t>(me)] = st.received_bytes;
    }
  }
  check_delivered(held, m, p);
  return stats;
}

namespace detail {

void routing_error(const std::string& who, int s, int r, const Routed* unpaired, const char* what) {
  if (unpaired != nullptr)
    throw Error(who + " stage " + std::to_string(s) + ": rank " + std::to_string(r) + " routes to rank " +
                std::to_string(unpaired->partner) + ", which its schedule does not pair it with");
  throw Error(who + ": " + what);
}

void route_stage(StagedAlgorithm& alg, int s, std::vector<std::vector<Run>>& held, const StageRouting& cb,
                 const std::string& who) {
  const int p = static_cast<int>(held.size());
  const auto up = held.size();
  const Schedule& stage = alg.schedule().stages[static_cast<std::size_t>(s)];
  // Each rank's partners in this stage (its bucket b goes to partners[r][b]).
  std::vector<std::vector<int>> partners(up);
  for (const Round& rd : stage.rounds)
    for (const Transfer& t : rd.transfers) partners[static_cast<std::size_t>(t.src)].push_back(t.dst);
  std::vector<std::vector<std::vector<Run>>> buckets(up);
  std::vector<int> bucket_of(up, -1);
  std::vector<Routed> routed;
  for (int r = 0; r < p; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    const auto& mine = partners[ur];
    for (std::size_t b = 0; b < mine.size(); ++b) bucket_of[static_cast<std::size_t>(mine[b])] = static_cast<int>(b);
    buckets[ur].resize(mine.size());
    alg.begin_stage(s, r);
    for (std::size_t k = 0; k < held[ur].size(); ++k)
      route_run(alg, s, r, held[ur][k], bucket_of, routed, who, [&](std::size_t b, const Run& piece) {
        buckets[ur][b].push_back(piece);
        if (cb.on_piece) cb.on_piece(r, k, b, piece);
      });
    held[ur].clear();
    for (int d : mine) bucket_of[static_cast<std::size_t>(d)] = -1;
    if (cb.on_routed) cb.on_routed(r, mine.size());
  }
  // Every scheduled transfer is a message (possibly empty), delivered in step order.
  std::vector<std::size_t> next_bucket(up, 0);
  for (std::size_t round = 0; round < stage.rounds.size(); ++round)
    for (const Transfer& t : stage.rounds[round].transfers) {
      const std::size_t b = next_bucket[static_cast<std::size_t>(t.src)]++;
      auto& out = buckets[static_cast<std::size_t>(t.src)][b];
      if (cb.on_message) cb.on_message(round, t.src, t.dst, b, out);
      auto& in = held[static_cast<std::size_t>(t.dst)];
      in.insert(in.end(), out.begin(), out.end());
      out.clear();
    }
  for (const auto& rank_buckets : buckets)
    for (const auto& left : rank_buckets)
      if (!(left.empty())) throw Error(who + ": a bucket was routed but never sent");
}

}  // namespace detail
}  // namespace libcomm
