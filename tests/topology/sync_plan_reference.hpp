// The first implementation of the section 5 synchronisation plan (paper 003), kept as the
// reference the fast plan_synchronisation must match exactly (test_sync_plan.cpp). It
// follows the definition directly: consecutive users of every directed edge give the
// dependences (deduplicated by a global sort), and each dependence is tested for
// redundancy by a depth-first search for another path, bounded by the later phase.
// Quadratic-ish in practice: fine for the trees of the tests, about a minute at 4096
// machines.
#pragma once

#include <algorithm>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "libcomm/error.hpp"
#include "libcomm/tree_schedule.hpp"

namespace libcomm {

inline SyncPlan reference_plan_synchronisation(const Schedule& s, const Topology& t) {
  require(s.nprocs == t.num_machines(),
          "plan_synchronisation: the schedule has " + std::to_string(s.nprocs) +
              " ranks, the topology " + std::to_string(t.num_machines()) + " machines");
  SyncPlan plan;
  struct Msg {
    std::int32_t round;
    int src;
  };
  std::vector<Msg> msgs;
  std::vector<int> next_of_sender;  // program order: the sender's next message
  std::vector<int> last_of_rank(static_cast<std::size_t>(s.nprocs), -1);
  std::vector<int> last_user(static_cast<std::size_t>(t.num_edge_ids()), -1);
  std::vector<std::int64_t> users(static_cast<std::size_t>(t.num_edge_ids()), 0);
  std::unordered_map<std::int64_t, std::int64_t> turn_users;
  std::vector<std::pair<int, int>> deps;  // (earlier, later), consecutive users of an edge
  std::vector<int> path;
  for (std::size_t r = 0; r < s.rounds.size(); ++r) {
    for (const auto& tr : s.rounds[r].transfers) {
      if (tr.src == tr.dst) continue;
      const int id = static_cast<int>(msgs.size());
      require(last_of_rank[tr.src] < 0 || msgs[last_of_rank[tr.src]].round < static_cast<std::int32_t>(r),
              "plan_synchronisation: rank " + std::to_string(tr.src) + " sends twice in round " +
                  std::to_string(r) + " (the schedule must be single-ported)");
      msgs.push_back({static_cast<std::int32_t>(r), tr.src});
      next_of_sender.push_back(-1);
      if (last_of_rank[tr.src] >= 0) next_of_sender[last_of_rank[tr.src]] = id;
      last_of_rank[tr.src] = id;
      path.clear();
      t.path_edge_ids(t.machine_node(t.machine_of_rank()[tr.src]),
                      t.machine_node(t.machine_of_rank()[tr.dst]), path);
      // Distinct contending pairs: two paths of a tree share a contiguous run of L directed
      // edges, so sum_e C(n_e, 2) counts such a pair L times and the sum over consecutive
      // edge pairs (e, e') of a path counts it L - 1 times.
      for (std::size_t k = 0; k + 1 < path.size(); ++k)
        plan.contending_pairs -= turn_users[static_cast<std::int64_t>(path[k]) * t.num_edge_ids() + path[k + 1]]++;
      for (int e : path) {
        plan.contending_pairs += users[e]++;
        if (last_user[e] >= 0) {
          require(msgs[last_user[e]].round < static_cast<std::int32_t>(r),
                  "plan_synchronisation: round " + std::to_string(r) +
                      " is not contention free");
          deps.emplace_back(last_user[e], id);
        }
        last_user[e] = id;
      }
    }
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  plan.consecutive_pairs = static_cast<std::int64_t>(deps.size());
  std::erase_if(deps, [&](const auto& d) { return msgs[d.first].src == msgs[d.second].src; });
  plan.same_sender_pairs = plan.consecutive_pairs - static_cast<std::int64_t>(deps.size());

  // Successors of every message: its dependences (sorted, CSR) and its sender's next send.
  const std::size_t n = msgs.size();
  std::vector<std::size_t> first(n + 1, 0);
  for (const auto& d : deps) ++first[static_cast<std::size_t>(d.first) + 1];
  for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  // deps is sorted by source, so the CSR targets are deps' second members in order.

  std::vector<std::int64_t> seen(n, -1);
  std::vector<int> stack;
  std::int64_t search = 0;
  for (std::size_t k = 0; k < deps.size(); ++k) {
    const auto [from, to] = deps[k];
    const std::int32_t limit = msgs[to].round;
    // Is `to` reachable from `from` without the direct edge?
    ++search;
    stack.clear();
    auto push = [&](int w) {
      if (w < 0 || seen[w] == search || msgs[w].round > limit) return;
      seen[w] = search;
      stack.push_back(w);
    };
    for (std::size_t e = first[from]; e < first[from + 1]; ++e)
      if (deps[e].second != to) push(deps[e].second);
    push(next_of_sender[from]);
    bool redundant = false;
    while (!stack.empty() && !redundant) {
      const int w = stack.back();
      stack.pop_back();
      if (w == to) {
        redundant = true;
        break;
      }
      if (msgs[w].round >= limit) continue;
      for (std::size_t e = first[w]; e < first[w + 1]; ++e) push(deps[e].second);
      push(next_of_sender[w]);
    }
    if (redundant) {
      ++plan.redundant;
      continue;
    }
    plan.syncs.push_back({msgs[from].src, msgs[to].src, msgs[from].round, msgs[to].round});
  }
  std::sort(plan.syncs.begin(), plan.syncs.end(), [](const SyncMessage& a, const SyncMessage& b) {
    return std::tie(a.before, a.to, a.after, a.from) < std::tie(b.before, b.to, b.after, b.from);
  });
  // Synchronisations between one pair of ranks must be consumed in the order they are
  // sent (they carry no data to tell them apart); the reduction guarantees it, because two
  // crossing ones would make one of them redundant. Check it.
  std::vector<std::tuple<int, int, std::int32_t, std::int32_t>> by_pair;
  for (const auto& y : plan.syncs) by_pair.emplace_back(y.from, y.to, y.after, y.before);
  std::sort(by_pair.begin(), by_pair.end());
  for (std::size_t i = 1; i < by_pair.size(); ++i) {
    const auto& [f0, t0, a0, b0] = by_pair[i - 1];
    const auto& [f1, t1, a1, b1] = by_pair[i];
    require(!(f0 == f1 && t0 == t1) || (a0 < a1 && b0 < b1),
            "plan_synchronisation: internal error: crossing synchronisations " +
                std::to_string(f0) + " -> " + std::to_string(t0));
  }
  return plan;
}

}  // namespace libcomm
