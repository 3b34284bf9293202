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
    sent[static_cast<std::size_t>(k)] = m[static_cast<std::size_t>(me) * p + k];
    received[static_cast<std::size_t>(k)] = m[static_cast<std::size_t>(k) * p + me];
  }
  AlltoallvStats s;
  s.algo = AlltoallvAlgo::Direct;
  s.stages = {detail::direct_stats(sent, received, esize, me)};
  return s;
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
  std::vector<Routed> routed;
  for (int s = 0; s < stages; ++s) {
    const Schedule& stage = sched.stages[static_cast<std::size_t>(s)];
    // Each rank's partners in this stage (its bucket b goes to partners[me][b]).
    std::vector<std::vector<int>> partners(up);
    for (const Round& rd : stage.rounds)
      for (const Transfer& t : rd.transfers)
        partners[static_cast<std::size_t>(t.src)].push_back(t.dst);
    std::vector<std::vector<std::vector<Run>>> buckets(up);
    std::vector<int> bucket_of(up, -1);
    for (int me = 0; me < p; ++me) {
      const auto& mine = partners[static_cast<std::size_t>(me)];
      for (std::size_t b = 0; b < mine.size(); ++b)
        bucket_of[static_cast<std::size_t>(mine[b])] = static_cast<int>(b);
      buckets[static_cast<std::size_t>(me)].resize(mine.size());
      auto& st = stats[static_cast<std::size_t>(me)].stages[static_cast<std::size_t>(s)];
      st.name = sched.stage_names[static_cast<std::size_t>(s)];
      st.steps = static_cast<int>(stage.rounds.size());
      alg->begin_stage(s, me);
      for (const Run& run : held[static_cast<std::size_t>(me)]) {
        routed.clear();
        alg->route(s, me, run, routed);
        std::int64_t total = 0;
        for (const Routed& r : routed) {
          const int b =
              r.partner >= 0 && r.partner < p ? bucket_of[static_cast<std::size_t>(r.partner)] : -1;
          if (!(b >= 0))
            throw Error("simulate_alltoallv: " + std::string(alltoallv_algo_name(algo)) +
                        " P = " + std::to_string(p) + " stage " + std::to_string(s) + ": rank " +
                        std::to_string(me) + " routes to rank " + std::to_string(r.partner) +
                        ", which its schedule does not pair it with");
          if (!(r.run.src == run.src && r.run.dst == run.dst && r.run.first >= run.first &&
                r.run.first + r.run.n <= run.first + run.n))
            throw Error("simulate_alltoallv: a routed piece is not part of its run");
          total += r.run.n;
          buckets[static_cast<std::size_t>(me)][static_cast<std::size_t>(b)].push_back(r.run);
          st.send_buffer_bytes += static_cast<std::uint64_t>(r.run.n) * esize;
          if (r.partner != me) st.sent_bytes += static_cast<std::uint64_t>(r.run.n) * esize;
        }
        if (!(total == run.n))
          throw Error("simulate_alltoallv: the router lost or duplicated elements");
      }
      held[static_cast<std::size_t>(me)].clear();
      for (int d : mine) bucket_of[static_cast<std::size_t>(d)] = -1;
    }
    // Every scheduled transfer is a message (possibly empty), delivered in step order.
    std::vector<std::size_t> next_bucket(up, 0);
    for (const Round& rd : stage.rounds)
      for (const Transfer& t : rd.transfers) {
        auto& out = buckets[static_cast<std::size_t>(t.src)]
                           [next_bucket[static_cast<std::size_t>(t.src)]++];
        auto& rs = stats[static_cast<std::size_t>(t.dst)].stages[static_cast<std::size_t>(s)];
        std::uint64_t payload = 0;
        for (const Run& r : out) payload += static_cast<std::uint64_t>(r.n) * esize;
        ++rs.messages_received;
        rs.received_bytes += payload;
        rs.header_bytes += out.size() * detail::kRunHeaderBytes;
        rs.longest_message = std::max(rs.longest_message, payload);
        if (t.src != t.dst)
          ++stats[static_cast<std::size_t>(t.src)]
                .stages[static_cast<std::size_t>(s)]
                .messages_sent;
        auto& in = held[static_cast<std::size_t>(t.dst)];
        in.insert(in.end(), out.begin(), out.end());
        out.clear();
      }
    for (int me = 0; me < p; ++me) {
      auto& st = stats[static_cast<std::size_t>(me)].stages[static_cast<std::size_t>(s)];
      for (const auto& left : buckets[static_cast<std::size_t>(me)])
        if (!(left.empty())) throw Error("simulate_alltoallv: a bucket was routed but never sent");
      st.recv_buffer_bytes = st.received_bytes;
      st.peak_buffer_bytes = st.send_buffer_bytes +
                             std::max(prev_rbuf[static_cast<std::size_t>(me)], st.received_bytes);
      prev_rbuf[static_cast<std::size_t>(me)] = st.received_bytes;
    }
  }
  // Exactly once, at the right rank.
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
  return stats;
}

}  // namespace libcomm
