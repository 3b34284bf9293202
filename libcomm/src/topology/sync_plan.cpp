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
#include <utility>
#include <vector>

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

  // Chain order: the messages rank by rank, each rank's in phase order. The graph below is
  // indexed by chain position, so that a rank's messages (a chain of program order) sit
  // side by side. pos[m] is the chain position of message m.
  std::vector<Id> chain_start(static_cast<std::size_t>(R) + 1, 0), pos(n);
  std::vector<std::int32_t> phase_at(n), rank_at(n);  // by chain position
  for (std::size_t m = 0; m < n; ++m) ++chain_start[pm.src[m] + 1];
  for (int r = 0; r < R; ++r) chain_start[r + 1] += chain_start[r];
  {
    std::vector<Id> fill(chain_start.begin(), chain_start.end() - 1);
    for (std::int64_t p = 0; p < phases; ++p)
      for (auto m = pm.offset[p]; m < pm.offset[p + 1]; ++m) {
        const int r = pm.src[m];
        const Id at = fill[r]++;
        if (at > chain_start[r] && phase_at[at - 1] == p)
          throw Error("plan_synchronisation: rank " + std::to_string(r) + " sends twice in round " +
                      std::to_string(p) + " (the schedule must be single-ported)");
        pos[m] = at;
        phase_at[at] = static_cast<std::int32_t>(p);
        rank_at[at] = r;
      }
  }

  // Depth-first times of the tree, for "is directed edge e on the path of message x".
  std::vector<int> parent(static_cast<std::size_t>(t.num_nodes())), depth(parent.size());
  std::vector<int> enter(parent.size()), leave(parent.size());
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

  // Step 1, one sweep in phase order: the incoming dependences of every message are the
  // previous users of the directed edges of its path (the previous user of the sender's own
  // link is its previous send: program order). Each edge remembers its last user with what
  // the tests below need, so the sweep reads no other per-message data.
  // A dependence u -> v is redundant at once when u and v share an edge on which some other
  // message comes between them (u reaches it along that edge, and it reaches v). The edges
  // two tree paths share form one contiguous run, so it is enough to look at the edges just
  // outside, and between, those on which u is v's predecessor. Those dependences are
  // dropped here: a dependence implied by a path of others can be left out of the graph
  // without changing what reaches what (the transitive reduction of a DAG is unique and lies
  // in every subgraph with the same reachability). Dependences with the same sender are
  // program order and need no message.
  struct LastUse {
    Id id = -1, pos = -1;
    std::int32_t phase = -1;
    int src_node = -1, dst_node = -1;
  };
  auto on_path = [&](int e, const LastUse& x) {  // directed edge e on the path of x
    const int c = e / 2 + 1;
    return e % 2 == 0 ? below(c, x.src_node) && !below(c, x.dst_node) : below(c, x.dst_node) && !below(c, x.src_node);
  };
  struct Dependence {
    Id from, to;  // chain positions
  };
  std::vector<Dependence> deps;  // by `to` in message order; per message by `from` in message order
  std::vector<LastUse> last_user(static_cast<std::size_t>(t.num_edge_ids()));
  struct Previous {
    LastUse use;
    int first, last, count;  // indices in the route
  };
  std::vector<int> route, down;  // edges of the path, in path order
  std::vector<Previous> previous;
  for (std::int64_t p = 0; p < phases; ++p)
    for (auto m = pm.offset[p]; m < pm.offset[p + 1]; ++m) {
      const LastUse me{static_cast<Id>(m), pos[m], static_cast<std::int32_t>(p), node_of_rank[pm.src[m]],
                       node_of_rank[pm.dst[m]]};
      route.clear();
      down.clear();
      int a = me.src_node, b = me.dst_node;
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
        LastUse& before = last_user[route[i]];
        if (before.id >= 0) {
          if (before.phase == me.phase)
            throw Error("plan_synchronisation: round " + std::to_string(p) + " is not contention free");
          auto same = previous.rbegin();  // usually the predecessor on the edge just before
          while (same != previous.rend() && same->use.id != before.id) ++same;
          if (same == previous.rend()) {
            previous.push_back({before, i, i, 1});
          } else {
            same->last = i;
            ++same->count;
          }
        }
        before = me;
      }
      std::sort(previous.begin(), previous.end(),
                [](const Previous& x, const Previous& y) { return x.use.id < y.use.id; });
      for (const auto& [x, first, last, count] : previous) {
        ++plan.consecutive_pairs;
        if (rank_at[x.pos] == pm.src[m]) {
          ++plan.same_sender_pairs;
          continue;
        }
        const bool implied = count < last - first + 1 || (first > 0 && on_path(route[first - 1], x)) ||
                             (last + 1 < static_cast<int>(route.size()) && on_path(route[last + 1], x));
        if (implied)
          ++plan.redundant;
        else
          deps.push_back({x.pos, me.pos});
      }
    }
  require(deps.size() < static_cast<std::size_t>(std::numeric_limits<Id>::max()),
          "plan_synchronisation: too many dependences (" + std::to_string(deps.size()) + ")");

  // The remaining graph in chain order: predecessors and successors of every position
  // (CSR). Counting sorts are stable, so each message's predecessors stay in message order.
  std::vector<Id> pred_start(n + 1, 0), pred(deps.size()), succ_start(n + 1, 0), succ(deps.size());
  for (const auto& d : deps) ++pred_start[d.to + 1], ++succ_start[d.from + 1];
  for (std::size_t i = 0; i < n; ++i) pred_start[i + 1] += pred_start[i], succ_start[i + 1] += succ_start[i];
  {
    std::vector<Id> pf(pred_start.begin(), pred_start.end() - 1), sf(succ_start.begin(), succ_start.end() - 1);
    for (const auto& d : deps) pred[pf[d.to]++] = d.from, succ[sf[d.from]++] = d.to;
  }
  deps = {};
  std::vector<char> redundant(pred.size(), 0);  // by index in `pred`

  // Step 2, the rest of the transitive reduction. u -> v is redundant when u reaches another
  // in-neighbour of v (a predecessor, or v's previous send); a dependence between adjacent
  // phases never is. For the others, a search from both ends, one step each in turn:
  //   * forward from u, up to the latest phase of v's other in-neighbours. Dependences that
  //     stay are typically of this kind: u's news has not spread yet, and this side dies out
  //     after a few steps;
  //   * backward from v's other in-neighbours, down to u's phase. Going back from v, the
  //     messages that reach v soon cover most ranks, so for a u from far back the two sides
  //     meet after a few steps each, where either alone would walk a large cone.
  // Both use that a rank's messages form a chain: reaching a rank's message of phase r
  // reaches all its later ones, and whatever reaches it reaches all its earlier ones. So each
  // side keeps one watermark per rank (forward: the earliest position reached from u;
  // backward: the latest position that reaches v without the edge u -> v), walks every chain
  // at most once, and the sides meet when the watermarks of some rank cross. A side that
  // runs out of work has its whole cone: no meeting by then means no other path.
  struct Watermarks {
    std::int64_t search = -1;
    Id forward = 0;   // earliest position reached from u (the chain's end: none)
    Id backward = 0;  // latest position reaching v (the chain's start - 1: none)
  };
  std::vector<Watermarks> marks(static_cast<std::size_t>(R));
  std::vector<std::pair<Id, Id>> forward_ranges, backward_ranges;  // chain positions still to expand
  std::int64_t search = 0;
  auto mark = [&](int r) -> Watermarks& {
    Watermarks& w = marks[r];
    if (w.search != search) w = {search, chain_start[r + 1], chain_start[r] - 1};
    return w;
  };
  // true: the sides meet.
  auto reach_forward = [&](Id x) {
    Watermarks& w = mark(rank_at[x]);
    if (x >= w.forward) return false;
    if (x <= w.backward) return true;
    forward_ranges.emplace_back(x, w.forward);  // [x, old watermark), upwards
    w.forward = x;
    return false;
  };
  auto reach_backward = [&](Id x) {
    Watermarks& w = mark(rank_at[x]);
    if (x <= w.backward) return false;
    if (x >= w.forward) return true;
    backward_ranges.emplace_back(w.backward + 1, x);  // [old watermark + 1, x], downwards
    w.backward = x;
    return false;
  };
  // Does u reach v other than by the edge u -> v? `v_first..v_last`: v's predecessors in
  // `pred`; `before_v`: v's previous send (-1: none).
  auto other_path = [&](Id u, Id v_first, Id v_last, Id before_v) {
    ++search;
    forward_ranges.clear();
    backward_ranges.clear();
    std::int32_t horizon = -1;  // latest phase of v's other in-neighbours
    for (Id j = v_first; j <= v_last; ++j) {
      const Id x = j < v_last ? pred[j] : before_v;
      if (x < 0 || x == u) continue;
      horizon = std::max(horizon, phase_at[x]);
      reach_backward(x);
    }
    if (reach_forward(u)) return true;
    const std::int32_t floor = phase_at[u];
    while (!forward_ranges.empty() && !backward_ranges.empty()) {
      auto& [f_low, f_high] = forward_ranges.back();
      if (phase_at[f_low] >= horizon) {
        forward_ranges.pop_back();  // later messages cannot reach an in-neighbour
      } else {
        const Id x = f_low++;
        if (f_low == f_high) forward_ranges.pop_back();
        for (Id j = succ_start[x]; j < succ_start[x + 1]; ++j)
          if (reach_forward(succ[j])) return true;
      }
      if (backward_ranges.empty()) break;
      auto& [b_low, b_high] = backward_ranges.back();
      if (phase_at[b_high] < floor) {
        backward_ranges.pop_back();  // earlier messages cannot be reached from u
      } else {
        const Id x = b_high--;
        if (b_high < b_low) backward_ranges.pop_back();
        for (Id j = pred_start[x]; j < pred_start[x + 1]; ++j)
          if (reach_backward(pred[j])) return true;
      }
    }
    return false;
  };
  for (Id v = 0; v < static_cast<Id>(n); ++v) {
    const Id before_v = v > chain_start[rank_at[v]] ? v - 1 : -1;
    for (Id j = pred_start[v]; j < pred_start[v + 1]; ++j)
      if (phase_at[v] - phase_at[pred[j]] >= 2 && other_path(pred[j], pred_start[v], pred_start[v + 1], before_v))
        redundant[j] = 1;
  }

  // The kept dependences in (before, to, after, from) order: targets by message id, and
  // each target's sources by message id.
  for (char r : redundant) plan.redundant += r;
  plan.syncs.reserve(redundant.size() - static_cast<std::size_t>(std::count(redundant.begin(), redundant.end(), 1)));
  for (std::int64_t p = 0; p < phases; ++p)
    for (auto m = pm.offset[p]; m < pm.offset[p + 1]; ++m)
      for (Id v = pos[m], j = pred_start[v]; j < pred_start[v + 1]; ++j)
        if (!redundant[j]) plan.syncs.push_back({rank_at[pred[j]], rank_at[v], phase_at[pred[j]], phase_at[v]});
  // Synchronisations between one pair of ranks must be consumed in the order they are
  // sent (they carry no data to tell them apart); the reduction guarantees it, because two
  // crossing ones would make one of them redundant. Check it, rank by rank of the receiver:
  // in chain order each sender's `after` and the receiver's `before` must increase strictly.
  struct LastSync {
    int to = -1;
    std::int32_t after = -1, before = -1;
  };
  std::vector<LastSync> last_sync(static_cast<std::size_t>(R));
  for (Id v = 0; v < static_cast<Id>(n); ++v)
    for (Id j = pred_start[v]; j < pred_start[v + 1]; ++j) {
      if (redundant[j]) continue;
      LastSync& l = last_sync[rank_at[pred[j]]];
      if (l.to == rank_at[v] && (phase_at[pred[j]] <= l.after || phase_at[v] <= l.before))
        throw Error("plan_synchronisation: internal error: crossing synchronisations " +
                    std::to_string(rank_at[pred[j]]) + " -> " + std::to_string(rank_at[v]));
      l = {rank_at[v], phase_at[pred[j]], phase_at[v]};
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
