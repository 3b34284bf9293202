// Pairwise synchronisation of tree phases (paper 003, section 5).
//
// When a -> b in phase p and c -> d in phase q > p share a directed edge, c may start
// c -> d only after a has sent a -> b: a sends a synchronisation message to c after its
// message, and c waits for it. The dependence graph has a node per message and an edge per
// such pair; a rank's own sends run in phase order, which adds the (free) edges between
// consecutive sends of one rank. Redundant synchronisations, those implied by a path of
// other dependences, are removed: the transitive reduction of the graph.
//
// The plan has to stay fast at 4096 machines (16.7 M messages), so it leans on the
// structure of the graph:
//   * the messages that use one directed edge are totally ordered by phase (a phase is
//     contention free), so only consecutive users of an edge need a direct dependence;
//     every other pair on the edge follows by transitivity. Walking the messages in phase
//     order and remembering the last user of every edge gives each message its incoming
//     dependences directly (no global sort);
//   * every dependence goes from an earlier phase to a later one, so a dependence between
//     adjacent phases can never be implied by a longer path, and a search for another path
//     to a message of phase q only visits messages of phases up to q;
//   * a rank's messages form a chain in program order: once a search reaches a rank's
//     message of phase r, it reaches all of that rank's later messages. The search for
//     other paths from a message u therefore keeps, per rank, the earliest message reached
//     and expands every rank's chain at most once; one search serves all of u's
//     dependences at once.
#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

#include "libcomm/error.hpp"
#include "libcomm/tree_schedule.hpp"

namespace libcomm {

namespace {

// The messages of a schedule phase by phase; within a phase, senders in rank order. Ids
// are positions in src/dst, so ids grow with (phase, sender rank).
struct PhaseMessages {
  std::vector<std::int64_t> offset;  // phase p holds messages [offset[p], offset[p + 1])
  std::vector<std::int32_t> src, dst;  // ranks
  bool aapc = false;  // every ordered pair of distinct ranks exactly once
};

// Pairs of messages sharing a directed edge, for an all-to-all personalised exchange
// (every ordered pair of machines once), without looking at the messages. Two paths of a
// tree share one contiguous run of L directed edges, so sum_e C(n_e, 2) counts such a pair
// L times and the same sum over consecutive edge pairs ("turns" through a node) L - 1
// times. For AAPC, n_e = |Mu| |Mv| of the link, and a turn through node x from its
// neighbour side i to side j carries m_i m_j messages (m_i: machines on side i).
std::int64_t aapc_contending_pairs(const Topology& t) {
  auto pairs = [](std::int64_t k) { return k * (k - 1) / 2; };
  std::int64_t total = 0;
  for (const auto& l : t.links()) total += 2 * pairs(l.load());
  const std::int64_t M = t.num_machines();
  for (int x = 0; x < t.num_nodes(); ++x) {
    // sum over ordered i != j of C(m_i m_j, 2) = ((S2^2 - S4) - (S1^2 - S2)) / 2
    std::int64_t s1 = 0, s2 = 0, s4 = 0;
    for (int w : t.neighbours(x)) {
      const std::int64_t m = t.parent(w) == x ? t.machines_below(w) : M - t.machines_below(x);
      s1 += m, s2 += m * m, s4 += m * m * m * m;
    }
    total -= ((s2 * s2 - s4) - (s1 * s1 - s2)) / 2;
  }
  return total;
}

// The same count for any schedule, from the paths themselves.
std::int64_t counted_contending_pairs(const PhaseMessages& pm, const Topology& t,
                                      const std::vector<int>& node_of_rank) {
  const std::int64_t E = t.num_edge_ids();
  std::vector<std::int64_t> users(static_cast<std::size_t>(E), 0);
  std::unordered_map<std::int64_t, std::int64_t> turn_users;
  std::int64_t total = 0;
  std::vector<int> path;
  for (std::size_t m = 0; m < pm.src.size(); ++m) {
    path.clear();
    t.path_edge_ids(node_of_rank[pm.src[m]], node_of_rank[pm.dst[m]], path);
    for (std::size_t k = 0; k + 1 < path.size(); ++k) total -= turn_users[path[k] * E + path[k + 1]]++;
    for (int e : path) total += users[e]++;
  }
  return total;
}

SyncPlan plan_from_messages(const PhaseMessages& pm, const Topology& t) {
  using Id = std::int32_t;
  const std::size_t n = pm.src.size();
  require(n < static_cast<std::size_t>(std::numeric_limits<Id>::max()),
          "plan_synchronisation: " + std::to_string(n) + " messages; at most 2^31 - 1 are supported");
  const int R = t.num_machines();
  const std::int64_t phases = static_cast<std::int64_t>(pm.offset.size()) - 1;
  SyncPlan plan;
  std::vector<int> node_of_rank(static_cast<std::size_t>(R));
  for (int r = 0; r < R; ++r) node_of_rank[r] = t.machine_node(t.machine_of_rank()[r]);
  plan.contending_pairs = pm.aapc ? aapc_contending_pairs(t) : counted_contending_pairs(pm, t, node_of_rank);

  std::vector<std::int32_t> phase(n);
  for (std::int64_t p = 0; p < phases; ++p)
    std::fill(phase.begin() + pm.offset[p], phase.begin() + pm.offset[p + 1], static_cast<std::int32_t>(p));

  // Chains: every rank's messages in phase order, chain[chain_start[r] .. chain_start[r + 1]).
  // pos[m] is the index of message m in `chain`.
  std::vector<Id> chain_start(static_cast<std::size_t>(R) + 1, 0), chain(n), pos(n);
  for (std::size_t m = 0; m < n; ++m) ++chain_start[pm.src[m] + 1];
  for (int r = 0; r < R; ++r) chain_start[r + 1] += chain_start[r];
  {
    std::vector<Id> fill(chain_start.begin(), chain_start.end() - 1);
    for (std::size_t m = 0; m < n; ++m) {
      const Id at = fill[pm.src[m]]++;
      if (at > chain_start[pm.src[m]] && phase[chain[at - 1]] == phase[m])
        throw Error("plan_synchronisation: rank " + std::to_string(pm.src[m]) + " sends twice in round " +
                    std::to_string(phase[m]) + " (the schedule must be single-ported)");
      chain[at] = static_cast<Id>(m);
      pos[m] = at;
    }
  }

  // Incoming dependences of every message (CSR, sources ascending): the previous user of
  // each directed edge of its path, deduplicated; same-sender pairs are program order.
  // A dependence u -> v is redundant at once when u and v share an edge on which some
  // other message comes between them (u reaches it along that edge, and it reaches v).
  // The edges two tree paths share form one contiguous run, so it is enough to look at
  // the edges just outside, and between, those on which u is v's predecessor.
  std::vector<int> parent(static_cast<std::size_t>(t.num_nodes())), depth(parent.size());
  std::vector<int> enter(parent.size()), leave(parent.size());  // depth-first times
  {
    int clock = 0;
    std::vector<std::pair<int, std::size_t>> stack = {{0, 0}};
    enter[0] = clock++;
    while (!stack.empty()) {
      auto& [x, next] = stack.back();
      const auto& adj = t.neighbours(x);
      if (next < adj.size()) {
        const int y = adj[next++];
        if (y != t.parent(x)) {
          enter[y] = clock++;
          stack.emplace_back(y, 0);
        }
      } else {
        leave[x] = clock++;
        stack.pop_back();
      }
    }
  }
  for (int v = 0; v < t.num_nodes(); ++v) parent[v] = t.parent(v), depth[v] = t.depth(v);
  auto below = [&](int x, int y) { return enter[x] <= enter[y] && leave[y] <= leave[x]; };  // y under x
  auto on_path = [&](int e, Id m) {  // directed edge e on the path of message m
    const int c = e / 2 + 1, a = node_of_rank[pm.src[m]], b = node_of_rank[pm.dst[m]];
    return e % 2 == 0 ? below(c, a) && !below(c, b) : below(c, b) && !below(c, a);
  };
  std::vector<Id> last_user(static_cast<std::size_t>(t.num_edge_ids()), -1);
  std::vector<std::int64_t> in_start(n + 1, 0);
  std::vector<Id> in_list;
  std::vector<char> redundant;  // by position in in_list
  in_list.reserve(4 * n);
  redundant.reserve(4 * n);
  std::vector<int> route, down;                         // edges of the path, in path order
  std::vector<std::pair<Id, int>> previous;             // (predecessor, index in route)
  for (std::size_t m = 0; m < n; ++m) {
    route.clear();
    down.clear();
    int a = node_of_rank[pm.src[m]], b = node_of_rank[pm.dst[m]];
    while (a != b) {  // climb from the deeper end: up edges 2(a-1), down edges 2(b-1)+1
      if (depth[a] >= depth[b]) {
        route.push_back(2 * (a - 1));
        a = parent[a];
      } else {
        down.push_back(2 * (b - 1) + 1);
        b = parent[b];
      }
    }
    route.insert(route.end(), down.rbegin(), down.rend());
    previous.clear();
    for (int i = 0; i < static_cast<int>(route.size()); ++i) {
      const Id before = last_user[route[i]];
      if (before >= 0) {
        if (phase[before] == phase[m])
          throw Error("plan_synchronisation: round " + std::to_string(phase[m]) + " is not contention free");
        previous.emplace_back(before, i);
      }
      last_user[route[i]] = static_cast<Id>(m);
    }
    std::sort(previous.begin(), previous.end());
    for (std::size_t g = 0; g < previous.size();) {
      std::size_t h = g;
      while (h < previous.size() && previous[h].first == previous[g].first) ++h;
      const Id x = previous[g].first;
      const int first = previous[g].second, last = previous[h - 1].second;
      ++plan.consecutive_pairs;
      if (pm.src[x] == pm.src[m]) {
        ++plan.same_sender_pairs;
      } else {
        const bool implied = static_cast<int>(h - g) < last - first + 1 ||
                             (first > 0 && on_path(route[first - 1], x)) ||
                             (last + 1 < static_cast<int>(route.size()) && on_path(route[last + 1], x));
        in_list.push_back(x);
        redundant.push_back(implied ? 1 : 0);
        plan.redundant += implied ? 1 : 0;
      }
      g = h;
    }
    in_start[m + 1] = static_cast<std::int64_t>(in_list.size());
  }
  require(in_list.size() < static_cast<std::size_t>(std::numeric_limits<Id>::max()),
          "plan_synchronisation: too many dependences (" + std::to_string(in_list.size()) + ")");

  // Transitive reduction. For message v with dependences u_1 .. u_k -> v, u_i -> v is
  // redundant when u_i reaches another predecessor of v. A backward search from v's
  // predecessors finds the messages that reach v by two or more edges. Per rank it keeps
  // the latest chain position expanded (everything before it, down to the earliest u_i,
  // is expanded too) and the latest position that reaches v by two or more edges; u_i is
  // redundant when that position of its sender's chain is at or after u_i.
  struct ChainState {
    std::int64_t search = -1;
    Id expanded = 0;  // positions up to here (down to the window) have been expanded
    Id reached = 0;   // latest position reaching v by two or more edges
    Id target = 0;    // latest position of a u_i that needs the search
  };
  std::vector<ChainState> state(static_cast<std::size_t>(R));
  std::vector<std::pair<Id, Id>> ranges;  // chain positions [first, last] to expand, downwards
  std::int64_t search = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const auto first = in_start[v], last = in_start[v + 1];
    std::int32_t floor = std::numeric_limits<std::int32_t>::max();  // earliest phase of interest
    for (auto j = first; j < last; ++j)
      if (!redundant[j] && phase[v] - phase[in_list[j]] >= 2) floor = std::min(floor, phase[in_list[j]]);
    if (floor == std::numeric_limits<std::int32_t>::max()) continue;  // adjacent phases: never implied
    ++search;
    auto chain_state = [&](int r) -> ChainState& {
      ChainState& c = state[r];
      if (c.search != search) c = {search, chain_start[r] - 1, chain_start[r] - 1, chain_start[r] - 1};
      return c;
    };
    int pending = 0;  // ranks whose latest u_i is not reached yet
    for (auto j = first; j < last; ++j) {
      const Id u = in_list[j];
      if (redundant[j] || phase[v] - phase[u] < 2) continue;
      ChainState& c = chain_state(pm.src[u]);
      if (c.target < chain_start[pm.src[u]]) ++pending;
      c.target = std::max(c.target, pos[u]);
    }
    // A message found to reach v: remember how far its chain reaches v and queue the part
    // of the chain not expanded yet. `direct`: a predecessor of v itself, so only the chain
    // before it reaches v by two or more edges.
    auto visit = [&](Id m, bool direct) {
      if (phase[m] < floor) return;
      ChainState& c = chain_state(pm.src[m]);
      const Id p = pos[m], reach = direct ? p - 1 : p;
      if (reach > c.reached) {
        if (c.target >= chain_start[pm.src[m]] && c.reached < c.target && reach >= c.target) --pending;
        c.reached = reach;
      }
      if (p > c.expanded) {
        ranges.emplace_back(c.expanded + 1, p);
        c.expanded = p;
      }
    };
    ranges.clear();
    for (auto j = first; j < last; ++j) visit(in_list[j], true);
    if (pos[v] > chain_start[pm.src[v]]) visit(chain[pos[v] - 1], true);
    while (!ranges.empty() && pending > 0) {
      const auto [low, high] = ranges.back();
      ranges.pop_back();
      for (Id i = high; i >= low && pending > 0; --i) {
        const Id x = chain[i];
        if (phase[x] < floor) break;
        for (auto j = in_start[x]; j < in_start[x + 1]; ++j) visit(in_list[j], false);
      }
    }
    for (auto j = first; j < last; ++j) {
      const Id u = in_list[j];
      if (!redundant[j] && phase[v] - phase[u] >= 2 && state[pm.src[u]].reached >= pos[u]) {
        redundant[j] = 1;
        ++plan.redundant;
      }
    }
  }

  // The kept dependences, already in (before, to, after, from) order: targets by id, and
  // each target's sources by id.
  plan.syncs.reserve(in_list.size() - static_cast<std::size_t>(plan.redundant));
  for (std::size_t v = 0; v < n; ++v)
    for (auto j = in_start[v]; j < in_start[v + 1]; ++j)
      if (!redundant[j]) plan.syncs.push_back({pm.src[in_list[j]], pm.src[v], phase[in_list[j]], phase[v]});
  // Synchronisations between one pair of ranks must be consumed in the order they are
  // sent (they carry no data to tell them apart); the reduction guarantees it, because two
  // crossing ones would make one of them redundant. Check it: in `before` order, each
  // pair's `after` must increase strictly too.
  std::vector<std::int32_t> last_after(static_cast<std::size_t>(R) * R, -1), last_before(last_after.size(), -1);
  for (const auto& y : plan.syncs) {
    const std::size_t k = static_cast<std::size_t>(y.from) * R + y.to;
    if (y.after <= last_after[k] || y.before <= last_before[k])
      throw Error("plan_synchronisation: internal error: crossing synchronisations " + std::to_string(y.from) +
                  " -> " + std::to_string(y.to));
    last_after[k] = y.after;
    last_before[k] = y.before;
  }
  return plan;
}

}  // namespace

SyncPlan plan_synchronisation(const Schedule& s, const Topology& t) {
  require(s.nprocs == t.num_machines(),
          "plan_synchronisation: the schedule has " + std::to_string(s.nprocs) +
              " ranks, the topology " + std::to_string(t.num_machines()) + " machines");
  const int R = s.nprocs;
  PhaseMessages pm;
  pm.offset.push_back(0);
  std::vector<bool> seen(static_cast<std::size_t>(R) * R, false);
  std::vector<std::pair<std::int32_t, std::int32_t>> round;
  bool duplicate = false;
  for (std::size_t r = 0; r < s.rounds.size(); ++r) {
    round.clear();
    for (const auto& tr : s.rounds[r].transfers) {
      require(tr.src >= 0 && tr.src < R && tr.dst >= 0 && tr.dst < R,
              "plan_synchronisation: round " + std::to_string(r) + " names a rank outside 0.." +
                  std::to_string(R - 1));
      if (tr.src == tr.dst) continue;
      round.emplace_back(tr.src, tr.dst);
      auto bit = seen[static_cast<std::size_t>(tr.src) * R + tr.dst];
      duplicate |= bit;
      bit = true;
    }
    std::sort(round.begin(), round.end());
    for (const auto& [a, b] : round) pm.src.push_back(a), pm.dst.push_back(b);
    pm.offset.push_back(static_cast<std::int64_t>(pm.src.size()));
  }
  pm.aapc = !duplicate && pm.src.size() == static_cast<std::size_t>(R) * (R - 1);
  return plan_from_messages(pm, t);
}

SyncPlan plan_synchronisation(const TreeAapcSchedule& s, const Topology& t) {
  require(s.num_machines == t.num_machines(),
          "plan_synchronisation: the schedule is for " + std::to_string(s.num_machines) +
              " machines, the topology has " + std::to_string(t.num_machines()));
  const std::size_t M = static_cast<std::size_t>(s.num_machines);
  PhaseMessages pm;
  pm.offset.assign(static_cast<std::size_t>(s.num_phases) + 1, 0);
  for (std::int32_t p : s.phase_of)
    if (p >= 0) ++pm.offset[static_cast<std::size_t>(p) + 1];
  for (std::int64_t p = 0; p < s.num_phases; ++p) pm.offset[p + 1] += pm.offset[p];
  pm.src.resize(static_cast<std::size_t>(pm.offset.back()));
  pm.dst.resize(pm.src.size());
  std::vector<std::int64_t> fill(pm.offset.begin(), pm.offset.end() - 1);
  for (std::size_t r = 0; r < M; ++r) {  // senders in rank order
    const std::int32_t* row = s.phase_of.data() + static_cast<std::size_t>(t.machine_of_rank()[r]) * M;
    for (std::size_t b = 0; b < M; ++b)
      if (row[b] >= 0) {
        const auto k = fill[row[b]]++;
        pm.src[k] = static_cast<std::int32_t>(r);
        pm.dst[k] = t.rank_of_machine(static_cast<int>(b));
      }
  }
  pm.aapc = true;  // schedule_tree_aapc places every message exactly once
  return plan_from_messages(pm, t);
}

TreeRankPlan::TreeRankPlan(const Schedule& s, const SyncPlan& sync, int rank)
    : plan(s, rank), wait_from(s.rounds.size()), notify(s.rounds.size()) {
  for (const auto& y : sync.syncs) {
    if (y.to == rank) wait_from.at(static_cast<std::size_t>(y.before)).push_back(y.from);
    if (y.from == rank) notify.at(static_cast<std::size_t>(y.after)).push_back(y.to);
  }
}

}  // namespace libcomm
