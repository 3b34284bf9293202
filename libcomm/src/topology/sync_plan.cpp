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
// structure of the graph (details at plan_from_messages; docs/algorithms/tree_scheduled.md):
//   * the messages that use one directed edge are totally ordered by phase (a phase is
//     contention free), so only consecutive users of an edge need a direct dependence.
//     One sweep in phase order, remembering the last user of every edge, gives each
//     message its incoming dependences and drops at once those implied along a shared edge;
//   * every dependence goes from an earlier phase to a later one, so one between adjacent
//     phases can never be implied;
//   * the users of one edge, like the sends of one rank, form a chain. Labels against the
//     chain of the busiest edge (the latest of its users reaching a message, the earliest
//     one reached from it) prove or rule out most other paths in O(1);
//   * the rest is a search from both ends that walks every rank's chain at most once.
// Everything is indexed by message id (phase-major), so every per-message array is written
// in order; a rank's chain is linked by prev/next send. A path is copied from per-switch
// lists of up edges, its length given by an O(1) common-ancestor table, and the sweep
// handles a run of edges with the same last user as one entry. At 4096 machines the cost
// is page faults of the big arrays (output included) and about 2-4 s of sweep on the
// deeper trees (docs/algorithms/tree_scheduled.md has the figures).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "libcomm/error.hpp"
#include "libcomm/tree_schedule.hpp"

namespace libcomm {

namespace {

// The messages of a schedule phase by phase; within a phase, senders in rank order. Ids
// are positions in src/dst, so ids grow with (phase, sender rank).
struct PhaseMessages {
  struct Message {
    std::int32_t src, dst;  // ranks (plan_from_messages puts the phase in dst after step 1)
  };
  std::vector<std::int64_t> offset;  // phase p holds messages [offset[p], offset[p + 1])
  std::vector<Message> msg;
  bool aapc = false;  // every ordered pair of distinct ranks exactly once
};

// The big arrays below (tens of millions of entries at 4096 machines) are written once. On
// Linux, ask for transparent huge pages for them: with 4 KiB pages the page faults of the
// first touch cost more than the computation (about 4 ns a byte on the shared VM this was
// measured on; with 2 MiB pages anywhere from 25 times less to 2-3 ns a byte when the
// host has to back fresh guest memory). Only a hint: where it is refused or
// unknown, nothing changes.
template <class T>
void reserve_large(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t low = (begin + kHuge - 1) & ~(kHuge - 1), high = (begin + n * sizeof(T)) & ~(kHuge - 1);
  if (high > low) madvise(reinterpret_cast<void*>(low), high - low, MADV_HUGEPAGE);
#endif
}

template <class T>
std::vector<T> large_vector(std::size_t n, const T& value) {
  std::vector<T> v;
  reserve_large(v, n);
  v.assign(n, value);
  return v;
}

// Pairs of messages sharing a directed edge, for an all-to-all personalised exchange
// (every ordered pair of machines once), without looking at the messages. Two paths of a
// tree share one contiguous run of L directed edges, so sum_e C(n_e, 2) counts such a pair
// L times and the same sum over consecutive edge pairs ("turns" through a node) L - 1
// times. For AAPC, n_e = |Mu| |Mv| of the link, and a turn through node x from its
// neighbour side i to side j carries m_i m_j messages (m_i: machines on side i).
//
// Both counts also name the busiest directed edge (the most messages), the hub of step 2
// of plan_from_messages. For AAPC that is a direction of the bottleneck link, used in every
// phase of schedule_tree_aapc.
struct PairCount {
  std::int64_t contending_pairs = 0;
  int busiest_edge = 0;
  std::int64_t fewest_users = 0;  // of any directed edge
};

PairCount aapc_contending_pairs(const Topology& t) {
  auto pairs = [](std::int64_t k) { return k * (k - 1) / 2; };
  std::int64_t total = 0, busiest = -1, fewest = std::numeric_limits<std::int64_t>::max();
  int edge = 0;
  for (const auto& l : t.links()) {
    total += 2 * pairs(l.load());
    if (l.load() > busiest) busiest = l.load(), edge = t.edge_id(l.a, l.b);
    fewest = std::min(fewest, l.load());
  }
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
  return {total, edge, fewest};
}

// The same count for any schedule, from the paths themselves.
PairCount counted_contending_pairs(const PhaseMessages& pm, const Topology& t,
                                   const std::vector<int>& node_of_rank) {
  const std::int64_t E = t.num_edge_ids();
  std::vector<std::int64_t> users(static_cast<std::size_t>(E), 0);
  std::unordered_map<std::int64_t, std::int64_t> turn_users;
  std::int64_t total = 0;
  std::vector<int> path;
  for (const auto& [src, dst] : pm.msg) {
    path.clear();
    t.path_edge_ids(node_of_rank[src], node_of_rank[dst], path);
    for (std::size_t k = 0; k + 1 < path.size(); ++k) total -= turn_users[path[k] * E + path[k + 1]]++;
    for (int e : path) total += users[e]++;
  }
  return {total, static_cast<int>(std::max_element(users.begin(), users.end()) - users.begin()),
          *std::min_element(users.begin(), users.end())};
}

// Takes pm by reference and reuses it: after step 1, a message's dst holds its phase.
SyncPlan plan_from_messages(PhaseMessages& pm, const Topology& t) {
  using Id = std::int32_t;
  constexpr Id kNone = std::numeric_limits<Id>::max();
  const std::size_t n = pm.msg.size();
  require(n < static_cast<std::size_t>(kNone),
          "plan_synchronisation: " + std::to_string(n) + " messages; at most 2^31 - 2 are supported");
  const int R = t.num_machines();
  const std::int64_t phases = static_cast<std::int64_t>(pm.offset.size()) - 1;
  SyncPlan plan;
  std::vector<int> node_of_rank(static_cast<std::size_t>(R));
  for (int r = 0; r < R; ++r) node_of_rank[r] = t.machine_node(t.machine_of_rank()[r]);
  const PairCount count = pm.aapc ? aapc_contending_pairs(t) : counted_contending_pairs(pm, t, node_of_rank);
  plan.contending_pairs = count.contending_pairs;
  const int hub = count.busiest_edge;

  // Depth-first times of the tree, for "is directed edge e on the path of message x".
  std::vector<int> parent(static_cast<std::size_t>(t.num_nodes())), depth(parent.size());
  std::vector<int> enter(parent.size()), leave(parent.size());
  // The Euler tour's depths (every switch on entering it and again after each child switch)
  // give the depth of the common ancestor of x and y as the least depth between visits of
  // them (a machine: of its switch); a sparse table of minima answers that in O(1). Leaving
  // the machines out keeps the table small (40 KB for 512 switches).
  std::vector<int> euler_depth, first_visit(parent.size());
  {
    int clock = 0;
    std::vector<std::pair<int, std::size_t>> stack = {{0, 0}};
    enter[0] = clock++;
    euler_depth.push_back(t.depth(0));
    while (!stack.empty()) {
      auto& [x, next] = stack.back();
      const auto& adj = t.neighbours(x);
      if (next < adj.size()) {
        const int y = adj[next++];
        if (y != t.parent(x)) {
          enter[y] = clock++;
          if (t.is_machine(y)) {  // a leaf: its switch stands for it (the entry just written)
            first_visit[y] = static_cast<int>(euler_depth.size()) - 1;
          } else {
            first_visit[y] = static_cast<int>(euler_depth.size());
            euler_depth.push_back(t.depth(y));
          }
          stack.emplace_back(y, 0);
        }
      } else {
        leave[x] = clock++;
        const bool machine = t.is_machine(x);
        stack.pop_back();
        if (!stack.empty() && !machine) euler_depth.push_back(t.depth(stack.back().first));
      }
    }
  }
  for (int v = 0; v < t.num_nodes(); ++v) parent[v] = t.parent(v), depth[v] = t.depth(v);
  const std::size_t tour = euler_depth.size();
  std::vector<int> min_depth = euler_depth;  // level k at [k * tour ..]: minima of 2^k entries
  for (std::size_t k = 1; (std::size_t{1} << k) <= tour; ++k) {
    min_depth.resize((k + 1) * tour);
    const std::size_t half = std::size_t{1} << (k - 1);
    for (std::size_t i = 0; i + 2 * half <= tour; ++i)
      min_depth[k * tour + i] = std::min(min_depth[(k - 1) * tour + i], min_depth[(k - 1) * tour + i + half]);
  }
  auto common_depth = [&](int x, int y) {
    int l = first_visit[x], r = first_visit[y];
    if (l > r) std::swap(l, r);
    const int k = 31 - __builtin_clz(static_cast<unsigned>(r - l + 1));
    return std::min(min_depth[k * tour + l], min_depth[k * tour + r - (1 << k) + 1]);
  };
  // Up edges from every switch towards the root (the node's own first): a path is its
  // source's up edge and a prefix of the list of the source's switch, then the same for the
  // destination reversed, as down edges (up edge id + 1). Machines are leaves.
  std::vector<int> up_start(parent.size() + 1, 0), up_edges;
  for (int v = 0; v < t.num_nodes(); ++v) {
    if (!t.is_machine(v))
      for (int x = v; x != 0; x = parent[x]) up_edges.push_back(2 * (x - 1));
    up_start[v + 1] = static_cast<int>(up_edges.size());
  }
  auto below = [&](int x, int y) { return enter[x] <= enter[y] && leave[y] <= leave[x]; };  // y under x
  auto on_path = [&](int e, int src_node, int dst_node) {  // directed edge e on the path src -> dst
    const int c = e / 2 + 1;
    return e % 2 == 0 ? below(c, src_node) && !below(c, dst_node) : below(c, dst_node) && !below(c, src_node);
  };

  // When every directed edge is used in every phase (one switch), every dependence joins
  // adjacent phases and step 2 has nothing to do: nothing is kept for it then.
  const bool search_possible = count.fewest_users < phases;

  // Everything below is indexed by message id. Ids grow with the phase, so a rank's messages
  // (its chain of program order) have growing ids too, linked by prev_send / next_send.

  // Step 1, one sweep in phase order: the incoming dependences of every message are the
  // previous users of the directed edges of its path (the previous user of the sender's own
  // link is its previous send: program order). Every edge remembers its last user.
  // A dependence u -> v is redundant at once when u and v share an edge on which some other
  // message comes between them (u reaches it along that edge, and it reaches v). The edges
  // two tree paths share form one contiguous run, so it is enough to look at the edges just
  // outside, and between, those on which u is v's predecessor. Those dependences are
  // dropped here: a dependence implied by a path of others can be left out of the graph
  // without changing what reaches what (the transitive reduction of a DAG is unique and lies
  // in every subgraph with the same reachability). Dependences with the same sender are
  // program order and need no message. The others are written to plan.syncs at once, in
  // the final order; step 2 takes the redundant ones out again.
  // The sweep also labels every message with the latest user of the hub edge that reaches it
  // (hub_in, counting the hub's users from 0), for step 2.
  struct EdgeUse {  // an edge's last user: 8 bytes, the rest is looked up by id
    Id id = -1;
    std::int32_t phase = 0;
  };
  // For step 2, by message id, all appended in id order (no scattered writes): hub_in;
  // hub_out (for now: the hub's users only); prev_send (the sender's previous message, -1:
  // none); the kept dependences as predecessor lists (CSR, pred[pred_start[m] ..]), entry
  // for entry the same as plan.syncs.
  std::vector<Id> hub_in, hub_out, prev_send, pred_start, pred;
  // Room for (typically) all the dependences kept here, about one a message on one switch
  // and 1.1-1.3 on deeper trees; only what is written costs memory.
  reserve_large(plan.syncs, search_possible ? 2 * n : n);
  if (search_possible) {
    reserve_large(hub_in, n);
    reserve_large(hub_out, n);
    reserve_large(prev_send, n);
    reserve_large(pred_start, n + 1);
    reserve_large(pred, 2 * n);
    pred_start.push_back(0);
  }
  bool search_needed = false;  // some dependence spans more than one phase
  Id hub_users = 0;
  std::vector<EdgeUse> last_user(static_cast<std::size_t>(t.num_edge_ids()));
  struct Previous {
    Id id;
    std::int32_t phase;
    int first, last, count;  // indices in the route
  };
  // Edges of a path, in path order.
  std::vector<int> route_buffer(2 * static_cast<std::size_t>(*std::max_element(depth.begin(), depth.end())) + 2);
  std::vector<Previous> previous;
  for (std::int64_t p = 0; p < phases; ++p)
    for (auto m = pm.offset[p]; m < pm.offset[p + 1]; ++m) {
      const Id me = static_cast<Id>(m);
      const std::int32_t phase = static_cast<std::int32_t>(p);
      const int rank = pm.msg[m].src, src_node = node_of_rank[rank];
      // Up edges 2(a-1) from the source, down edges 2(b-1)+1 to the destination, up to and
      // from the common ancestor.
      const int a = src_node, b = node_of_rank[pm.msg[m].dst], top = common_depth(a, b);
      const int ups = depth[a] - top, route_size = ups + depth[b] - top;
      int* const route = route_buffer.data();
      if (ups > 0) {
        route[0] = 2 * (a - 1);
        const int* up = up_edges.data() + up_start[parent[a]];
        for (int i = 1; i < ups; ++i) route[i] = up[i - 1];
      }
      if (route_size > ups) {
        int* const last = route + route_size - 1;
        *last = 2 * (b - 1) + 1;
        const int* up = up_edges.data() + up_start[parent[b]];
        for (int i = 1; i < route_size - ups; ++i) last[-i] = up[i - 1] + 1;
      }
      previous.clear();
      const bool on_hub = on_path(hub, a, b);
      const Id my_prev_send = last_user[route[0]].id;  // the sender's own link: its sends only
      // The edges' previous users come in runs (paths that followed the same route for a
      // while): one entry per run, merged per user.
      auto add_run = [&](EdgeUse x, int first, int last) {
        if (x.id < 0) return;
        if (x.phase == phase)
          throw Error(first == 0 ? "plan_synchronisation: rank " + std::to_string(rank) + " sends twice in round " +
                                       std::to_string(p) + " (the schedule must be single-ported)"
                                 : "plan_synchronisation: round " + std::to_string(p) + " is not contention free");
        auto same = previous.rbegin();
        while (same != previous.rend() && same->id != x.id) ++same;
        if (same == previous.rend()) {
          previous.push_back({x.id, x.phase, first, last, last - first + 1});
        } else {
          same->last = last;
          same->count += last - first + 1;
        }
      };
      EdgeUse run = last_user[route[0]];
      int run_first = 0;
      last_user[route[0]] = {me, phase};
      for (int i = 1; i < route_size; ++i) {
        const int e = route[i];
        const EdgeUse before = last_user[e];
        last_user[e] = {me, phase};  // a path uses an edge once
        if (before.id != run.id) {
          add_run(run, run_first, i - 1);
          run = before;
          run_first = i;
        }
      }
      add_run(run, run_first, route_size - 1);
      // Insertion sort by id: a handful of entries, mostly in order already.
      for (std::size_t i = 1; i < previous.size(); ++i)
        for (std::size_t k = i; k > 0 && previous[k].id < previous[k - 1].id; --k) std::swap(previous[k], previous[k - 1]);
      if (search_possible) {
        Id in = -1;
        for (const auto& x : previous) in = std::max(in, hub_in[x.id]);
        if (on_hub) in = hub_users++;
        hub_in.push_back(in);
        hub_out.push_back(on_hub ? in : kNone);
        prev_send.push_back(my_prev_send);
      }
      for (const auto& [x, x_phase, first, last, count] : previous) {
        ++plan.consecutive_pairs;
        const int x_rank = pm.msg[x].src;
        if (x_rank == rank) {
          ++plan.same_sender_pairs;
          continue;
        }
        const int x_src = node_of_rank[x_rank], x_dst = node_of_rank[pm.msg[x].dst];
        const bool implied = count < last - first + 1 || (first > 0 && on_path(route[first - 1], x_src, x_dst)) ||
                             (last + 1 < route_size && on_path(route[last + 1], x_src, x_dst));
        if (implied) {
          ++plan.redundant;
        } else {
          plan.syncs.push_back({x_rank, rank, x_phase, phase});
          if (search_possible) pred.push_back(x);
          search_needed |= phase - x_phase >= 2;
        }
      }
      if (search_possible) pred_start.push_back(static_cast<Id>(pred.size()));
    }
  require(plan.syncs.size() < static_cast<std::size_t>(kNone),
          "plan_synchronisation: too many dependences (" + std::to_string(plan.syncs.size()) + ")");
  if (!search_needed) return plan;  // adjacent phases only: nothing more is implied
  if (!search_possible)  // every edge busy in every phase leaves no gap of two phases
    throw Error("plan_synchronisation: internal error: a dependence spans two phases on a tree whose edges are "
                "all busy in every phase");

  // The phase and next send of every message, and its successors (CSR), for step 2.
  // Destinations are not needed any more: keep the phases there (one array less to fault in).
  for (std::int64_t p = 0; p < phases; ++p)
    for (auto m = pm.offset[p]; m < pm.offset[p + 1]; ++m) pm.msg[m].dst = static_cast<std::int32_t>(p);
  auto phase_of = [&pm](Id x) { return pm.msg[x].dst; };
  std::vector<Id> next_send = large_vector<Id>(n, kNone);
  for (std::size_t m = 0; m < n; ++m)
    if (prev_send[m] >= 0) next_send[prev_send[m]] = static_cast<Id>(m);
  std::vector<Id> succ_start = large_vector<Id>(n + 1, 0), succ = large_vector<Id>(pred.size(), 0);
  for (Id u : pred) ++succ_start[u + 1];
  for (std::size_t i = 0; i < n; ++i) succ_start[i + 1] += succ_start[i];
  for (std::size_t m = 0; m < n; ++m)  // fills list u at start[u], moving start[u] to start[u + 1]
    for (Id j = pred_start[m]; j < pred_start[m + 1]; ++j) succ[succ_start[pred[j]]++] = static_cast<Id>(m);
  for (std::size_t i = n; i > 0; --i) succ_start[i] = succ_start[i - 1];
  succ_start[0] = 0;
  // hub_out: the earliest user of the hub edge that a message reaches (kNone: none), from
  // the latest message backwards.
  for (auto m = static_cast<std::int64_t>(n) - 1; m >= 0; --m) {
    Id h = hub_out[m];
    if (next_send[m] != kNone) h = std::min(h, hub_out[next_send[m]]);
    for (Id j = succ_start[m]; j < succ_start[m + 1]; ++j) h = std::min(h, hub_out[succ[j]]);
    hub_out[m] = h;
  }

  // Step 2, the rest of the transitive reduction. u -> v is redundant when u reaches another
  // in-neighbour w of v (a predecessor, or v's previous send); a dependence between adjacent
  // phases never is. First the hub: the users of one directed edge form a chain too, so
  // hub_out(u) <= hub_in(w) shows a path u -> hub -> w in O(1). For the busiest edge, used
  // in every phase, that settles most dependences from far back. The rest by a search from
  // both ends, one step each in turn:
  //   * forward from u, up to the latest phase of v's other in-neighbours. Dependences that
  //     stay are typically of this kind: u's news has not spread yet, and this side dies out
  //     after a few steps;
  //   * backward from v's other in-neighbours, down to u's phase. Going back from v, the
  //     messages that reach v soon cover most ranks, so when u's news has spread the two
  //     sides meet after a few steps each, where either alone may walk a large cone.
  // Both use that a rank's messages form a chain: reaching a rank's message of phase r
  // reaches all its later ones, and whatever reaches it reaches all its earlier ones. So each
  // side keeps one watermark per rank (forward: the earliest message reached from u;
  // backward: the latest message that reaches v without the edge u -> v), walks every chain
  // at most once, and the sides meet when the watermarks of some rank cross. A side that
  // runs out of work has its whole cone: no meeting by then means no other path.
  struct Watermarks {
    std::int64_t search = -1;
    Id forward = kNone;  // earliest message reached from u (kNone: none)
    Id backward = -1;    // latest message reaching v (-1: none)
  };
  std::vector<Watermarks> marks(static_cast<std::size_t>(R));
  // Chain stretches still to expand: forward {next, stop}, walking next_send from `next` up to
  // the old watermark `stop`; backward {stop, next}, walking prev_send down to `stop`.
  std::vector<std::pair<Id, Id>> forward_ranges, backward_ranges;
  std::int64_t search = 0;
  auto mark = [&](Id x) -> Watermarks& {
    Watermarks& w = marks[pm.msg[x].src];
    if (w.search != search) w = {search, kNone, -1};
    return w;
  };
  // true: the sides meet.
  auto reach_forward = [&](Id x) {
    Watermarks& w = mark(x);
    if (x >= w.forward) return false;
    if (x <= w.backward) return true;
    forward_ranges.emplace_back(x, w.forward);
    w.forward = x;
    return false;
  };
  auto reach_backward = [&](Id x) {
    Watermarks& w = mark(x);
    if (x <= w.backward) return false;
    if (x >= w.forward) return true;
    backward_ranges.emplace_back(w.backward, x);
    w.backward = x;
    return false;
  };
  std::vector<Id> others;  // v's in-neighbours other than u
  // Does u reach v other than by the edge u -> v?
  auto other_path = [&](Id u, Id v) {
    others.clear();
    for (Id j = pred_start[v]; j < pred_start[v + 1]; ++j)
      if (pred[j] != u) others.push_back(pred[j]);
    if (prev_send[v] >= 0) others.push_back(prev_send[v]);
    // The labels decide most cases: a path through the hub, or none because a message
    // only reaches what has labels at least its own.
    bool possible = false;
    for (Id w : others) {
      if (hub_out[u] <= hub_in[w]) return true;
      possible |= hub_in[u] <= hub_in[w] && hub_out[u] <= hub_out[w];
    }
    if (!possible) return false;
    ++search;
    forward_ranges.clear();
    backward_ranges.clear();
    // Forward, a message is worth expanding while it is before the latest in-neighbour and
    // its labels are at most theirs; backward, while it is after u and its labels are at
    // least u's. Labels and phases grow along a chain, so a stretch ends at the first that fails.
    std::int32_t horizon = -1;
    Id in_limit = -1, out_limit = -1;
    for (Id w : others) {
      horizon = std::max(horizon, phase_of(w));
      in_limit = std::max(in_limit, hub_in[w]);
      out_limit = std::max(out_limit, hub_out[w]);
      reach_backward(w);
    }
    if (reach_forward(u)) return true;
    const std::int32_t floor = phase_of(u);
    const Id in_floor = hub_in[u], out_floor = hub_out[u];
    while (!forward_ranges.empty() && !backward_ranges.empty()) {
      auto& [f_next, f_stop] = forward_ranges.back();
      if (phase_of(f_next) >= horizon || hub_in[f_next] > in_limit || hub_out[f_next] > out_limit) {
        forward_ranges.pop_back();  // later messages cannot reach an in-neighbour
      } else {
        const Id x = f_next;
        f_next = next_send[x];
        if (f_next == f_stop) forward_ranges.pop_back();
        for (Id j = succ_start[x]; j < succ_start[x + 1]; ++j)
          if (reach_forward(succ[j])) return true;
      }
      if (backward_ranges.empty()) break;
      auto& [b_stop, b_next] = backward_ranges.back();
      if (phase_of(b_next) < floor || hub_in[b_next] < in_floor || hub_out[b_next] < out_floor) {
        backward_ranges.pop_back();  // earlier messages cannot be reached from u
      } else {
        const Id x = b_next;
        b_next = prev_send[x];
        if (b_next == b_stop) backward_ranges.pop_back();
        for (Id j = pred_start[x]; j < pred_start[x + 1]; ++j)
          if (reach_backward(pred[j])) return true;
      }
    }
    return false;
  };
  std::size_t kept = 0;
  for (std::size_t m = 0; m < n; ++m)
    for (Id j = pred_start[m]; j < pred_start[m + 1]; ++j) {
      const Id u = pred[j], v = static_cast<Id>(m);
      if (phase_of(v) - phase_of(u) >= 2 && other_path(u, v))
        ++plan.redundant;
      else
        plan.syncs[kept++] = plan.syncs[j];
    }
  plan.syncs.resize(kept);
  // Synchronisations between one pair of ranks are consumed in the order they are sent
  // (they carry no data to tell them apart), so two of them must never cross: a -> b after
  // a's sends x1 < x2 before b's sends y1 >= y2. They cannot: x1 reaches x2 -> y2, which
  // reaches y1, so x1 -> y1 would be redundant. (test_sync_plan.cpp checks this too.)
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
    for (const auto& [a, b] : round) pm.msg.push_back({a, b});
    pm.offset.push_back(static_cast<std::int64_t>(pm.msg.size()));
  }
  pm.aapc = !duplicate && pm.msg.size() == static_cast<std::size_t>(R) * (R - 1);
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
  reserve_large(pm.msg, static_cast<std::size_t>(pm.offset.back()));
  pm.msg.resize(static_cast<std::size_t>(pm.offset.back()));
  std::vector<std::int64_t> fill(pm.offset.begin(), pm.offset.end() - 1);
  std::vector<std::int32_t> rank_of(M);
  for (std::size_t b = 0; b < M; ++b) rank_of[b] = t.rank_of_machine(static_cast<int>(b));
  for (std::size_t r = 0; r < M; ++r) {  // senders in rank order
    const std::int32_t* row = s.phase_of.data() + static_cast<std::size_t>(t.machine_of_rank()[r]) * M;
    for (std::size_t b = 0; b < M; ++b)
      if (row[b] >= 0) {
        pm.msg[fill[row[b]]++] = {static_cast<std::int32_t>(r), rank_of[b]};
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
