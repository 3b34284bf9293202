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
// structure of the graph (details at the steps below; docs/algorithms/tree_scheduled.md):
//   * the messages that use one directed edge are totally ordered by phase (a phase is
//     contention free), so only consecutive users of an edge need a direct dependence.
//     One sweep in phase order, remembering the last user of every edge, gives each
//     message its incoming dependences and drops at once those implied along a shared edge;
//   * the sweep can start anywhere once it knows every edge's last user before that phase,
//     so the phases are cut into chunks swept by threads of their own;
//   * every dependence goes from an earlier phase to a later one, so one between adjacent
//     phases can never be implied;
//   * the users of one edge, like the sends of one rank, form a chain. Labels against the
//     chain of the busiest edge (the latest of its users reaching a message, the earliest
//     one reached from it) prove or rule out most other paths in O(1);
//   * the rest by a backward search of bounded length that walks every rank's chain at
//     most once, and what is still open then by one more sweep that follows the spread of
//     every open question at once, a bit each.
// Everything is indexed by message id (phase-major), so every per-message array is written
// in order; a rank's chain is linked by its previous send.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "libcomm/error.hpp"
#include "libcomm/tree_schedule.hpp"
#include "tree_index.hpp"

namespace libcomm {

namespace {

using Id = std::int32_t;
constexpr Id kNone = std::numeric_limits<Id>::max();
// hub_in of a message of a later chunk whose label comes from an earlier chunk (resolved
// once the earlier chunks are done).
constexpr Id kUnresolved = -2;

// On Linux, ask for transparent huge pages for the big arrays (tens of millions of
// entries at 4096 machines, written once): with 4 KiB pages the page faults of the first
// touch cost more than the computation. Only a hint: where it is refused, nothing changes.
void advise_huge_pages([[maybe_unused]] const void* data, [[maybe_unused]] std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t low = (begin + kHuge - 1) & ~(kHuge - 1),
                       high = (begin + bytes) & ~(kHuge - 1);
  if (high > low) madvise(reinterpret_cast<void*>(low), high - low, MADV_HUGEPAGE);
#endif
}

template <class T>
void reserve_large(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(T));
}

// A per-message array that several threads fill, each its own range: not initialised
// (only what is written costs memory).
template <class T>
class MessageArray {
 public:
  MessageArray() = default;
  explicit MessageArray(std::size_t n) : data_(new T[n]) {
    advise_huge_pages(data_.get(), n * sizeof(T));
  }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  std::unique_ptr<T[]> data_;
};

// The messages of a schedule phase by phase; within a phase, senders in rank order. Ids
// are positions in msg, so ids grow with (phase, sender rank). Four bytes a message (16.8 M
// at 4096 machines): the phase of a message comes from the offsets.
struct PhaseMessages {
  struct Message {
    std::uint16_t src, dst;  // ranks (a tree has at most 65536 nodes, at least one a switch)
  };
  std::vector<std::int64_t> offset;  // phase p holds messages [offset[p], offset[p + 1])
  MessageArray<Message> msg;
  std::size_t count = 0;
  bool aapc = false;  // every ordered pair of distinct ranks exactly once

  // The phase of message m: from the phase of message 64 * (m / 64), a few steps on.
  std::int32_t phase_of(std::int64_t m) const {
    auto p = static_cast<std::size_t>(coarse[static_cast<std::size_t>(m) >> 6]);
    while (offset[p + 1] <= m) ++p;
    return static_cast<std::int32_t>(p);
  }
  // After offset and count are set.
  void index_phases() {
    coarse.assign((count + 63) / 64, 0);
    std::size_t p = 0;
    for (std::size_t c = 0; c < coarse.size(); ++c) {
      while (offset[p + 1] <= static_cast<std::int64_t>(c * 64)) ++p;
      coarse[c] = static_cast<std::int32_t>(p);
    }
  }

 private:
  std::vector<std::int32_t> coarse;  // phase of message 64 c
};

// Pairs of messages sharing a directed edge, for an all-to-all personalised exchange
// (every ordered pair of machines once), without looking at the messages. Two paths of a
// tree share one contiguous run of L directed edges, so sum_e C(n_e, 2) counts such a pair
// L times and the same sum over consecutive edge pairs ("turns" through a node) L - 1
// times. For AAPC, n_e = |Mu| |Mv| of the link, and a turn through node x from its
// neighbour side i to side j carries m_i m_j messages (m_i: machines on side i).
//
// Both counts also name the busiest directed edge (the most messages), the hub of step 2.
// For AAPC that is a direction of the bottleneck link, used in every phase of
// schedule_tree_aapc.
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
PairCount counted_contending_pairs(const PhaseMessages& pm, const Topology& t) {
  const std::int64_t E = t.num_edge_ids();
  std::vector<std::int64_t> users(static_cast<std::size_t>(E), 0);
  std::unordered_map<std::int64_t, std::int64_t> turn_users;
  std::int64_t total = 0;
  std::vector<int> path;
  for (std::size_t m = 0; m < pm.count; ++m) {
    const auto& [src, dst] = pm.msg[m];
    path.clear();
    t.path_edge_ids(t.machine_node(t.machine_of_rank()[src]),
                    t.machine_node(t.machine_of_rank()[dst]), path);
    for (std::size_t k = 0; k + 1 < path.size(); ++k)
      total -= turn_users[path[k] * E + path[k + 1]]++;
    for (int e : path) total += users[e]++;
  }
  return {total, static_cast<int>(std::max_element(users.begin(), users.end()) - users.begin()),
          *std::min_element(users.begin(), users.end())};
}

// What every chunk of the sweep reads.
struct SweepInput {
  const PhaseMessages& pm;
  const detail::TreeIndex& tree;
  struct Machine {  // a rank's machine
    int node, position;
    std::uint32_t enter;
  };
  std::vector<Machine> machine_of_rank;
  int num_edges = 0;
  // The machines of a rank, and the edge ids of a message's path (TreeIndex::path; `path`
  // holds tree.max_path() entries); returns the path's length.
  const Machine& machine(int rank) const { return machine_of_rank[static_cast<std::size_t>(rank)]; }
  int path_of(const PhaseMessages::Message& msg, int* path) const {
    const Machine &src = machine(msg.src), &dst = machine(msg.dst);
    return tree.path(src.node, dst.node, tree.common_depth_at(src.position, dst.position), path);
  }
  int hub = 0;
  bool labels = false;        // step 2 may be needed: hub labels, prev_send, predecessor lists
  bool record_preds = false;  // keep the predecessor lists (step 2, or the synchronisations)
};

// The labels of a message for step 2, side by side: a search step or a label test reads
// all three of one message (one cache line instead of three).
struct Labels {
  Id hub_in, hub_out, prev_send;
};

// What the sweep writes for every message (each chunk its own id range). pred_start[m + 1]
// is where m's predecessors end in its chunk's list (made global when the chunks are joined).
struct SweepOutput {
  MessageArray<Labels> label;
  MessageArray<Id> pred_start;
};

// Step 1 over the phases [first_phase, end_phase): one sweep in phase order. The incoming
// dependences of every message are the previous users of the directed edges of its path
// (the previous user of the sender's own link is its previous send: program order). Every
// edge remembers its last user.
// A dependence u -> v is redundant at once when u and v share an edge on which some other
// message comes between them (u reaches it along that edge, and it reaches v). The edges
// two tree paths share form one contiguous run, so it is enough to look at the edges just
// outside, and between, those on which u is v's predecessor. Those dependences are dropped
// here: a dependence implied by a path of others can be left out of the graph without
// changing what reaches what (the transitive reduction of a DAG is unique and lies in every
// subgraph with the same reachability). Dependences with the same sender are program order
// and need no message. The others are kept in predecessor lists in id order, which is the
// order of the final synchronisations; step 2 takes the redundant ones out again.
// The sweep also labels every message with the latest user of the hub edge that reaches it
// (hub_in, counting the hub's users from 0), for step 2.
//
// A chunk that does not start at phase 0 first looks back for the last user of every edge
// before its first phase (seed()). Its hub users are counted from 0 and its labels that
// come from earlier chunks are kUnresolved; resolve_labels() fixes both afterwards.
class SweepChunk {
 public:
  // pred_capacity: room for the kept predecessors (0: twice the chunk's messages).
  SweepChunk(const SweepInput& in, SweepOutput& out, std::int64_t first_phase,
             std::int64_t end_phase, std::size_t pred_capacity)
      : in_(in),
        out_(out),
        first_phase_(first_phase),
        end_phase_(end_phase),
        first_id_(static_cast<Id>(in.pm.offset[first_phase])),
        end_id_(static_cast<Id>(in.pm.offset[end_phase])),
        last_user_(static_cast<std::size_t>(in.num_edges), -1) {
    live_.reserve(static_cast<std::size_t>(in.num_edges) + 1);
    if (in.record_preds)
      reserve_large(
          pred_, pred_capacity ? pred_capacity : 2 * static_cast<std::size_t>(end_id_ - first_id_));
  }

  Id first_id() const { return first_id_; }
  Id end_id() const { return end_id_; }
  const std::vector<Id>& preds() const { return pred_; }
  std::vector<Id> take_preds() { return std::move(pred_); }

  // Counters of the plan (see SyncPlan), for this chunk.
  std::int64_t consecutive_pairs = 0, same_sender_pairs = 0, redundant = 0, kept = 0;
  bool search_needed = false;  // some kept dependence spans more than one phase
  Id hub_users = 0;
  std::exception_ptr error;

  void run() {
    try {
      if (first_phase_ > 0) seed();
      sweep();
    } catch (...) {
      error = std::current_exception();
    }
  }

 private:
  // A message stays "live" while it is the last user of some edge. What the sweep needs of
  // a previous user is kept in this small table (at most one entry per directed edge), so
  // that it stays in cache; edges hold an index into it. An entry counts the edges that
  // still name it and is reused once none does.
  struct Live {
    Id id;
    std::int32_t phase, rank;
    std::uint32_t src_enter, dst_enter;  // DFS entry of its machines, for TreeIndex::on_path
    Id hub_in;
    std::int32_t edges;  // edges whose last user it is
    Id seen_by;          // the message whose predecessors it was last collected for
  };
  // Consecutive edges of a path with the same previous user (paths that followed the same
  // route for a while), then one entry per previous user.
  struct Run {
    std::int32_t slot;
    int first, last;  // indices in the path
  };
  struct Previous {
    Id id;
    std::int32_t slot;
    int first, last, count;  // indices in the path; edges on which it is the predecessor
  };

  std::int32_t new_slot() {
    if (free_slots_.empty()) {
      live_.emplace_back();
      return static_cast<std::int32_t>(live_.size()) - 1;
    }
    const std::int32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }

  // The last user of every edge before first_phase_, from the latest earlier message
  // backwards until every edge has one (or the messages run out).
  void seed() {
    const auto& pm = in_.pm;
    std::vector<Id> seed(static_cast<std::size_t>(in_.num_edges), -1);
    int missing = in_.num_edges;
    std::vector<int> path(static_cast<std::size_t>(in_.tree.max_path()));
    std::int64_t p = first_phase_;
    for (Id m = first_id_ - 1; m >= 0 && missing > 0; --m) {
      while (pm.offset[p] > m) --p;
      const auto& msg = pm.msg[static_cast<std::size_t>(m)];
      const int length = in_.path_of(msg, path.data());
      std::int32_t slot = -1;
      for (int i = 0; i < length; ++i) {
        const int e = path[i];
        if (seed[e] >= 0) continue;
        seed[e] = m;
        --missing;
        if (slot < 0) {
          slot = new_slot();
          live_[slot] = {m, static_cast<std::int32_t>(p), msg.src, in_.machine(msg.src).enter,
                         in_.machine(msg.dst).enter, kUnresolved, 0, -1};
        }
        last_user_[e] = slot;
        ++live_[slot].edges;
      }
    }
  }

  // What one message's visit works in, sized once for the longest path.
  struct Scratch {
    std::vector<int> path;
    std::vector<Run> runs;
    std::vector<Previous> previous;
    explicit Scratch(std::size_t max_path) : path(max_path), runs(max_path + 1) { previous.reserve(max_path); }
  };

  void sweep() {
    Scratch sc(static_cast<std::size_t>(in_.tree.max_path()));
    for (std::int64_t p = first_phase_; p < end_phase_; ++p)
      for (auto mm = in_.pm.offset[p]; mm < in_.pm.offset[p + 1]; ++mm)
        visit(static_cast<Id>(mm), static_cast<std::int32_t>(p), sc);
  }

  // Message `me` of phase `phase` takes the edges of its path: its previous users, their
  // label, which of them it keeps as predecessors.
  void visit(Id me, std::int32_t phase, Scratch& sc) {
    const auto& msg = in_.pm.msg[static_cast<std::size_t>(me)];
    const auto &src = in_.machine(msg.src), &dst = in_.machine(msg.dst);
    const int length = in_.path_of(msg, sc.path.data());
    const std::int32_t slot = new_slot();
    const int nruns = take_path(sc.path.data(), length, slot, sc.runs);
    collect_previous(me, phase, msg.src, nruns, sc);
    const Id in = in_.labels ? label(me, src, dst, sc) : -1;
    keep_or_drop(phase, msg.src, length, sc);
    live_[slot] = {me, phase, msg.src, src.enter, dst.enter, in, length, -1};
    if (in_.record_preds) order_preds(me);
  }

  // Makes `slot` the last user of every edge of the path; returns the runs of equal
  // previous users along it (a path uses an edge once).
  int take_path(const int* path, int length, std::int32_t slot, std::vector<Run>& runs) {
    std::int32_t* const last = last_user_.data();
    std::int32_t current = last[path[0]];
    last[path[0]] = slot;
    int nruns = 0, first = 0;
    for (int i = 1; i < length; ++i) {
      const std::int32_t before = last[path[i]];
      last[path[i]] = slot;
      if (before != current) {
        runs[static_cast<std::size_t>(nruns++)] = {current, first, i - 1};
        current = before;
        first = i;
      }
    }
    runs[static_cast<std::size_t>(nruns++)] = {current, first, length - 1};
    return nruns;
  }

  // One Previous per previous user (its runs merged: a gap between them implies it); a
  // user of this phase is an error of the schedule.
  void collect_previous(Id me, std::int32_t phase, int rank, int nruns, Scratch& sc) {
    sc.previous.clear();
    for (int k = 0; k < nruns; ++k) {
      const Run& r = sc.runs[static_cast<std::size_t>(k)];
      if (r.slot < 0) continue;
      Live& x = live_[r.slot];
      x.edges -= r.last - r.first + 1;
      if (x.phase == phase)
        throw Error(r.first == 0 ? "plan_synchronisation: rank " + std::to_string(rank) + " sends twice in round " +
                                       std::to_string(phase) + " (the schedule must be single-ported)"
                                 : "plan_synchronisation: round " + std::to_string(phase) +
                                       " is not contention free");
      if (x.seen_by != me) {
        x.seen_by = me;
        sc.previous.push_back({x.id, r.slot, r.first, r.last, r.last - r.first + 1});
      } else {
        auto same = sc.previous.rbegin();
        while (same->slot != r.slot) ++same;
        same->last = r.last;
        same->count += r.last - r.first + 1;
      }
    }
  }

  // The hub labels of step 2 (below): a message on the hub edge takes the next hub number.
  Id label(Id me, const SweepInput::Machine& src, const SweepInput::Machine& dst, const Scratch& sc) {
    // The sender's own link carries its sends only: its last user is the previous send.
    const Id my_prev_send = sc.runs[0].slot < 0 ? -1 : live_[sc.runs[0].slot].id;
    const bool on_hub = in_.tree.on_path(in_.hub, src.enter, dst.enter);
    Id in = -1;
    bool unresolved = false;
    for (const auto& x : sc.previous) {
      const Id h = live_[x.slot].hub_in;
      in = std::max(in, h);
      unresolved |= h == kUnresolved;
    }
    if (on_hub)
      in = hub_users++;
    else if (unresolved && in < 0)  // only earlier chunks' labels reach it
      in = kUnresolved;
    out_.label[me] = {in, on_hub ? in : kNone, my_prev_send};
    return in;
  }

  // A previous user is implied (redundant) when a neighbouring edge of its runs lies on
  // its own path too, or its runs have a gap; the others are kept as predecessors.
  void keep_or_drop(std::int32_t phase, int rank, int length, const Scratch& sc) {
    const int* const path = sc.path.data();
    for (const auto& [x, x_slot, x_first, x_last, x_count] : sc.previous) {
      const Live& l = live_[x_slot];
      if (l.edges == 0) free_slots_.push_back(x_slot);
      ++consecutive_pairs;
      if (l.rank == rank) {
        ++same_sender_pairs;
        continue;
      }
      const bool implied = x_count < x_last - x_first + 1 ||
                           (x_first > 0 && in_.tree.on_path(path[x_first - 1], l.src_enter, l.dst_enter)) ||
                           (x_last + 1 < length && in_.tree.on_path(path[x_last + 1], l.src_enter, l.dst_enter));
      if (implied) {
        ++redundant;
      } else {
        ++kept;
        if (in_.record_preds) pred_.push_back(x);
        search_needed |= phase - l.phase >= 2;
      }
    }
  }

  // The kept predecessors in id order (the order of the final synchronisations): one or
  // two entries, as a rule.
  void order_preds(Id me) {
    const auto begin = pred_.begin() + (me == first_id_ ? 0 : out_.pred_start[me]);
    for (auto i = begin + 1; i < pred_.end(); ++i)
      for (auto k = i; k > begin && *k < *(k - 1); --k) std::iter_swap(k, k - 1);
    out_.pred_start[me + 1] = static_cast<Id>(pred_.size());
  }

  const SweepInput& in_;
  SweepOutput& out_;
  const std::int64_t first_phase_, end_phase_;
  const Id first_id_, end_id_;
  std::vector<std::int32_t> last_user_;  // slot in live_, -1: no user yet
  std::vector<Live> live_;
  std::vector<std::int32_t> free_slots_;
  std::vector<Id> pred_;  // the kept predecessors, message after message
};

// The dependences kept by step 1, as predecessor lists over all messages (CSR).
struct PredLists {
  MessageArray<Id> start;  // n + 1 entries
  std::vector<Id> pred;
  // The kept predecessors of message m.
  std::span<const Id> of(std::int64_t m) const { return {pred.data() + start[m], pred.data() + start[m + 1]}; }
};

// Step 2, the rest of the transitive reduction. u -> v is redundant when u reaches another
// in-neighbour w of v (a kept predecessor, or v's previous send); a dependence between
// adjacent phases never is.
//
// First the labels. The users of one directed edge form a chain, like the sends of a rank,
// so hub_out(u) <= hub_in(w) shows a path u -> hub -> w in O(1). For the busiest edge, used
// in every phase, that settles most dependences from far back. And a message reaches only
// messages whose labels are at least its own, which rules out most of the dependences that
// stay.
//
// The rest ("open questions") by one more sweep in phase order that follows the spread of
// every open question at once, one bit each. u's news spreads along edges: a message that
// uses an edge some reached message used before it is reached, and marks every edge of its
// path. u -> v is redundant iff, when v comes, an edge of v's path that u's path does not
// share carries u's bit: the last user of that edge is then reached from u and is another
// in-neighbour of v (the edges the two paths share all have u as v's predecessor, or step 1
// would have dropped u -> v). The work is the paths of the messages while some question is
// open, plus a word operation per edge for 64 open questions; a search from both ends of
// the graph is faster on average but took minutes where u's news spreads slowly (4096
// machines on 4 switches: 1 M phases between u and v, 10^6 messages in each cone).
int decided_by_labels(Id u, Id v, const SweepOutput& out, const PredLists& g) {
  bool possible = false;
  const Labels lu = out.label[u];
  auto other = [&](Id w) {
    const Labels& lw = out.label[w];
    if (lu.hub_out <= lw.hub_in) return true;
    possible |= lu.hub_in <= lw.hub_in && lu.hub_out <= lw.hub_out;
    return false;
  };
  for (Id w : g.of(v))
    if (w != u && other(w)) return 1;
  const Id prev_send = out.label[v].prev_send;
  if (prev_send >= 0 && other(prev_send)) return 1;
  return possible ? -1 : 0;
}

// A search backward from v's other in-neighbours, of at most `budget` steps: 1 = u reaches
// one of them, 0 = it does not, -1 = not decided within the budget (the spread below decides
// those). A rank's messages form a chain: whatever reaches one of them reaches all its
// earlier ones, so the search keeps one watermark per rank (the latest message found that
// reaches v without the edge u -> v) and walks every rank's chain at most once; it has
// found a path when the watermark of u's rank passes u. It expands a message only while
// its phase is after u's and its labels are at least u's (messages reach only messages
// whose labels are at least their own); labels and phases grow along a chain, so a
// stretch ends at the first that fails. One per thread; the graph is only read.
class BoundedSearch {
 public:
  BoundedSearch(const PhaseMessages& pm, const SweepOutput& labels, const PredLists& g, int ranks)
      : pm_(pm), l_(labels), g_(g), marks_(static_cast<std::size_t>(ranks)) {}

  int run(Id u, Id v, int budget) {
    ++search_;
    stretches_.clear();
    u_ = u;
    u_rank_ = pm_.msg[static_cast<std::size_t>(u)].src;
    for (Id w : g_.of(v))
      if (w != u && reach(w)) return 1;
    if (l_.label[v].prev_send >= 0 && reach(l_.label[v].prev_send)) return 1;
    // Messages before u's phase cannot be reached.
    const std::int64_t floor = pm_.offset[static_cast<std::size_t>(pm_.phase_of(u))];
    const Id in_floor = l_.label[u].hub_in, out_floor = l_.label[u].hub_out;
    for (int steps = 0; !stretches_.empty();) {
      auto& [stop, next] = stretches_.back();
      const Labels& ln = l_.label[next];
      if (next < floor || ln.hub_in < in_floor || ln.hub_out < out_floor) {
        stretches_.pop_back();  // earlier messages cannot be reached from u
        continue;
      }
      if (++steps > budget) return -1;
      const Id x = next;
      next = ln.prev_send;
      if (next == stop) stretches_.pop_back();
      for (Id w : g_.of(x))
        if (reach(w)) return 1;
    }
    return 0;
  }

 private:
  struct Watermark {
    std::int64_t search = -1;
    Id latest = -1;  // latest message of the rank found to reach v (-1: none)
  };
  // true: x is a message of u's rank at or after u, so u reaches it.
  bool reach(Id x) {
    const int rank = pm_.msg[static_cast<std::size_t>(x)].src;
    Watermark& w = marks_[static_cast<std::size_t>(rank)];
    if (w.search != search_) w = {search_, -1};
    if (x <= w.latest) return false;
    if (rank == u_rank_ && x >= u_) return true;
    stretches_.emplace_back(w.latest, x);  // walk prev_send from x down to the old watermark
    w.latest = x;
    return false;
  }

  const PhaseMessages& pm_;
  const SweepOutput& l_;
  const PredLists& g_;
  std::vector<Watermark> marks_;
  std::int64_t search_ = 0;
  Id u_ = 0;
  int u_rank_ = 0;
  std::vector<std::pair<Id, Id>> stretches_;  // {stop, next}
};

struct OpenQuestion {
  Id u, v;
  std::size_t entry;  // index of u in pred
};

// Edge-major bit sets of `words` words; an open question holds one bit from its u to its v.
// Bits given back wait in `retired` until a bulk clear makes them free again.
class EdgeBits {
 public:
  explicit EdgeBits(std::size_t edges) : E_(edges) {}

  std::uint32_t take() {
    if (free_.empty() && !retired_.empty()) clear_retired();
    if (free_.empty()) widen();
    const std::uint32_t b = free_.back();
    free_.pop_back();
    return b;
  }
  void give_back(std::uint32_t b) { retired_.push_back(b); }
  bool has(int edge, std::uint32_t b) const {
    return (bits_[static_cast<std::size_t>(edge) * words_ + b / 64] & (std::uint64_t{1} << (b % 64))) != 0;
  }
  // mask = the union of the path's edges' bits.
  void gather(const int* path, int length) {
    std::uint64_t* const m = mask_.data();
    if (words_ == 1) {  // the usual case: at most 64 questions open at a time
      std::uint64_t any = 0;
      for (int i = 0; i < length; ++i) any |= bits_[static_cast<std::size_t>(path[i])];
      m[0] = any;
      return;
    }
    for (std::size_t w = 0; w < words_; ++w) m[w] = 0;
    for (int i = 0; i < length; ++i) {
      const std::uint64_t* edge = bits_.data() + static_cast<std::size_t>(path[i]) * words_;
      for (std::size_t w = 0; w < words_; ++w) m[w] |= edge[w];
    }
  }
  void add_to_mask(std::uint32_t b) { mask_[b / 64] |= std::uint64_t{1} << (b % 64); }
  // Every edge of the path gets the mask (a path without bits has nothing to pass on).
  void pass_on(const int* path, int length) {
    if (words_ == 1) {
      if (mask_[0] != 0)
        for (int i = 0; i < length; ++i) bits_[static_cast<std::size_t>(path[i])] = mask_[0];
      return;
    }
    for (int i = 0; i < length; ++i)
      std::copy(mask_.begin(), mask_.end(), bits_.begin() + static_cast<std::ptrdiff_t>(path[i] * words_));
  }

 private:
  void clear_retired() {  // clear the retired bits on every edge
    std::vector<std::uint64_t> clear(words_, 0);
    for (std::uint32_t b : retired_) clear[b / 64] |= std::uint64_t{1} << (b % 64);
    for (std::size_t e = 0; e < E_; ++e)
      for (std::size_t w = 0; w < words_; ++w) bits_[e * words_ + w] &= ~clear[w];
    free_.swap(retired_);
  }
  void widen() {  // 64 more bits for every edge
    std::vector<std::uint64_t> wider(E_ * (words_ + 1), 0);
    for (std::size_t e = 0; e < E_; ++e)
      std::copy(bits_.begin() + static_cast<std::ptrdiff_t>(e * words_),
                bits_.begin() + static_cast<std::ptrdiff_t>((e + 1) * words_),
                wider.begin() + static_cast<std::ptrdiff_t>(e * (words_ + 1)));
    bits_.swap(wider);
    for (std::uint32_t b = 64; b > 0; --b) free_.push_back(static_cast<std::uint32_t>(64 * words_ + b - 1));
    ++words_;
    mask_.assign(words_, 0);
  }

  const std::size_t E_;
  std::size_t words_ = 0;
  std::vector<std::uint64_t> bits_, mask_;
  std::vector<std::uint32_t> free_, retired_;
};

// The sweep described above, over the questions (in v order); sets redundant[entry].
void answer_by_spread(const SweepInput& in, const std::vector<OpenQuestion>& questions,
                      std::vector<std::uint8_t>& redundant) {
  if (questions.empty()) return;
  const auto& pm = in.pm;
  std::vector<std::uint32_t> by_source(questions.size()), bit_of(questions.size());
  for (std::uint32_t q = 0; q < by_source.size(); ++q) by_source[q] = q;
  std::stable_sort(by_source.begin(), by_source.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return questions[a].u < questions[b].u; });
  EdgeBits bits(static_cast<std::size_t>(in.num_edges));
  std::vector<int> path(static_cast<std::size_t>(in.tree.max_path()));
  std::size_t next_source = 0, next_target = 0, open = 0;
  for (Id x = questions[by_source[0]].u; next_target < questions.size(); ++x) {
    const bool source = next_source < by_source.size() && questions[by_source[next_source]].u == x;
    if (open == 0 && !source) continue;  // no question open: nothing spreads that matters
    const int length = in.path_of(pm.msg[static_cast<std::size_t>(x)], path.data());
    for (; next_source < by_source.size() && questions[by_source[next_source]].u == x; ++next_source, ++open)
      bit_of[by_source[next_source]] = bits.take();
    bits.gather(path.data(), length);
    // Questions answered at x (their v): before x marks its own path.
    for (; next_target < questions.size() && questions[next_target].v == x; ++next_target, --open) {
      const OpenQuestion& q = questions[next_target];
      const auto& u = pm.msg[static_cast<std::size_t>(q.u)];
      const std::uint32_t u_src = in.machine(u.src).enter, u_dst = in.machine(u.dst).enter;
      for (int i = 0; i < length; ++i)
        if (bits.has(path[i], bit_of[next_target]) && !in.tree.on_path(path[i], u_src, u_dst)) {
          redundant[q.entry] = 1;
          break;
        }
      bits.give_back(bit_of[next_target]);
    }
    for (std::size_t k = next_source; k-- > 0 && questions[by_source[k]].u == x;) bits.add_to_mask(bit_of[by_source[k]]);
    // x is reached for every bit in the mask and passes them to all of its edges.
    bits.pass_on(path.data(), length);
  }
}

// Appends the seconds since the last stage to plan.seconds.
class StageClock {
 public:
  explicit StageClock(SyncPlan& plan) : plan_(plan) {}
  void operator()(const std::string& stage) {
    const auto now = std::chrono::steady_clock::now();
    plan_.seconds.emplace_back(stage, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

 private:
  SyncPlan& plan_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Runs f(0), ..., f(threads - 1), each on a thread of its own but the first.
template <class F>
void run_threads(int threads, F&& f) {
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back([&f, k] { f(k); });
  f(0);
  for (auto& th : pool) th.join();
}

// The threads of a plan over `phases` phases: options.threads, at least 1 and at most one
// per phase (a chunk of the sweep, or of the messages-by-phase sort, is a phase or more).
int plan_threads(const SyncPlanOptions& options, std::int64_t phases) {
  return static_cast<int>(
      std::clamp<std::int64_t>(options.threads, 1, std::max<std::int64_t>(1, phases)));
}

// Where each rank's machine is in the tree, for the sweep.
void add_machines(SweepInput& in, const Topology& t, const detail::TreeIndex& tree) {
  in.machine_of_rank.resize(static_cast<std::size_t>(t.num_machines()));
  for (int r = 0; r < t.num_machines(); ++r) {
    const int m = t.machine_of_rank()[r], node = t.machine_node(m);
    in.machine_of_rank[r] = {node, tree.position(m), tree.enter(node)};
  }
}

// Step 1 in chunks of about equal numbers of messages, each for a thread: chunk k ends at
// the first phase boundary past (k + 1) n / threads messages, leaving every later chunk at
// least one phase.
std::vector<std::unique_ptr<SweepChunk>> sweep_chunks(const SweepInput& in, SweepOutput& out, int threads,
                                                      std::int64_t phases) {
  const auto& pm = in.pm;
  const std::size_t n = pm.count;
  std::vector<std::unique_ptr<SweepChunk>> chunks;
  for (std::int64_t k = 0, first = 0; k < threads; ++k) {
    const auto target = static_cast<std::int64_t>(n) * (k + 1) / threads;
    std::int64_t end = std::lower_bound(pm.offset.begin() + first + 1, pm.offset.end(), target) -
                       pm.offset.begin();
    end = k + 1 == threads ? phases : std::clamp(end, first + 1, phases - (threads - k - 1));
    chunks.push_back(std::make_unique<SweepChunk>(in, out, first, end, k == 0 ? 2 * n : 0));
    first = end;
  }
  return chunks;
}

// The chunks joined: their counters, their predecessor lists as one CSR.
struct Joined {
  PredLists g;
  std::int64_t kept = 0;
  bool search_needed = false;
};
Joined join_chunks(const std::vector<std::unique_ptr<SweepChunk>>& chunks, SweepOutput& out, bool record_preds,
                   SyncPlan& plan) {
  Joined j;
  for (const auto& c : chunks) {
    plan.consecutive_pairs += c->consecutive_pairs;
    plan.same_sender_pairs += c->same_sender_pairs;
    plan.redundant += c->redundant;
    j.kept += c->kept;
    j.search_needed |= c->search_needed;
  }
  require(j.kept < static_cast<std::int64_t>(kNone),
          "plan_synchronisation: too many dependences (" + std::to_string(j.kept) + ")");
  if (!record_preds) return j;
  j.g.start = std::move(out.pred_start);
  j.g.pred = chunks[0]->take_preds();  // reserved for all of them
  j.g.start[0] = 0;
  for (std::size_t k = 1; k < chunks.size(); ++k) {
    const auto& c = *chunks[k];
    const Id base = static_cast<Id>(j.g.pred.size());
    j.g.pred.insert(j.g.pred.end(), c.preds().begin(), c.preds().end());
    for (Id m = c.first_id(); m < c.end_id(); ++m) j.g.start[m + 1] += base;
  }
  return j;
}

// The hub labels of later chunks: their own hub users counted on from the earlier
// chunks', their labels that came from earlier chunks taken from their predecessors, in
// id order.
void join_labels(const std::vector<std::unique_ptr<SweepChunk>>& chunks, SweepOutput& out, const PredLists& g) {
  Id base = chunks[0]->hub_users;
  for (std::size_t k = 1; k < chunks.size(); ++k) {
    const auto& c = *chunks[k];
    for (Id m = c.first_id(); m < c.end_id(); ++m) {
      Labels& l = out.label[m];
      if (l.hub_in >= 0) {
        l.hub_in += base;
      } else if (l.hub_in == kUnresolved) {
        l.hub_in = l.prev_send >= 0 ? out.label[l.prev_send].hub_in : -1;
        for (Id u : g.of(m)) l.hub_in = std::max(l.hub_in, out.label[u].hub_in);
      }
      if (l.hub_out != kNone) l.hub_out += base;
    }
    base += c.hub_users;
  }
}

// hub_out: the earliest user of the hub edge that a message reaches (kNone: none). From
// the latest message backwards, every message's label is final when it is reached (its
// successors come later) and is passed on to its predecessors and previous send.
void spread_hub_out(SweepOutput& out, const PredLists& g, std::size_t n) {
  for (auto m = static_cast<std::int64_t>(n) - 1; m >= 0; --m) {
    const Id h = out.label[m].hub_out, prev_send = out.label[m].prev_send;
    const auto pass_on = [&](Id to) { out.label[to].hub_out = std::min(out.label[to].hub_out, h); };
    if (prev_send >= 0) pass_on(prev_send);
    for (Id u : g.of(m)) pass_on(u);
  }
}

// Step 2's first pass, on the threads in blocks of messages: the dependences that span two
// phases or more, decided by the labels or a bounded search; returns those left open, in
// v order.
std::vector<OpenQuestion> decide_by_labels_and_search(const PhaseMessages& pm, const SweepOutput& out,
                                                      const PredLists& g, int R, int threads,
                                                      const SyncPlanOptions& options,
                                                      std::vector<std::uint8_t>& redundant) {
  const std::size_t n = pm.count;
  constexpr std::size_t kBlock = 1 << 14;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::vector<OpenQuestion>> open(blocks);
  std::atomic<std::size_t> next_block{0};
  run_threads(threads, [&](int) {
    BoundedSearch search(pm, out, g, R);
    for (std::size_t block; (block = next_block.fetch_add(1)) < blocks;) {
      const std::size_t end = std::min(n, (block + 1) * kBlock);
      for (std::size_t m = block * kBlock; m < end; ++m) {
        const auto phase = static_cast<std::size_t>(pm.phase_of(static_cast<std::int64_t>(m)));
        // u -> v spans two phases or more iff u comes before the phase before v's.
        const std::int64_t adjacent = phase > 0 ? pm.offset[phase - 1] : 0;
        for (Id j = g.start[m]; j < g.start[m + 1]; ++j) {
          const Id u = g.pred[j], v = static_cast<Id>(m);
          if (u >= adjacent) continue;
          int verdict = decided_by_labels(u, v, out, g);
          if (verdict < 0) verdict = search.run(u, v, options.search_budget);
          if (verdict > 0)
            redundant[j] = 1;
          else if (verdict < 0)
            open[block].push_back({u, v, static_cast<std::size_t>(j)});
        }
      }
    }
  });
  std::vector<OpenQuestion> questions;
  for (auto& o : open) questions.insert(questions.end(), o.begin(), o.end());
  return questions;
}

// Step 2, the rest of the transitive reduction (only needed when some kept dependence spans
// two or more phases): which kept predecessor entries are redundant after all.
std::vector<std::uint8_t> second_step(const SweepInput& in, SweepOutput& out, const PredLists& g, int threads,
                                      const SyncPlanOptions& options, StageClock& stage) {
  if (!in.labels)  // every edge busy in every phase leaves no gap of two phases
    throw Error("plan_synchronisation: internal error: a dependence spans two phases on a tree whose edges are "
                "all busy in every phase");
  spread_hub_out(out, g, in.pm.count);
  stage("hub_out");
  std::vector<std::uint8_t> redundant(g.pred.size(), 0);
  const std::vector<OpenQuestion> questions = decide_by_labels_and_search(
      in.pm, out, g, static_cast<int>(in.machine_of_rank.size()), threads, options, redundant);
  stage("labels");
  // The open questions in groups, one per thread (a group's sweep carries only its bits).
  const int groups = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(threads), (questions.size() + 63) / 64));
  std::vector<std::vector<OpenQuestion>> group(static_cast<std::size_t>(std::max(groups, 1)));
  for (std::size_t q = 0; q < questions.size(); ++q) group[q % group.size()].push_back(questions[q]);
  run_threads(groups, [&](int k) { answer_by_spread(in, group[static_cast<std::size_t>(k)], redundant); });
  stage("open questions (" + std::to_string(questions.size()) + ")");
  return redundant;
}

// The kept synchronisations, message by message (SyncPlanOptions::keep_syncs).
void list_syncs(SyncPlan& plan, const PhaseMessages& pm, const PredLists& g,
                const std::vector<std::uint8_t>& redundant, std::int64_t kept) {
  reserve_large(plan.syncs, static_cast<std::size_t>(kept));
  for (std::size_t m = 0; m < pm.count; ++m) {
    const std::int32_t phase = pm.phase_of(static_cast<std::int64_t>(m));  // (once per message)
    for (Id j = g.start[m]; j < g.start[m + 1]; ++j)
      if (redundant.empty() || !redundant[j]) {
        const auto& u = pm.msg[static_cast<std::size_t>(g.pred[j])];
        plan.syncs.push_back({u.src, pm.msg[m].src, pm.phase_of(g.pred[j]), phase});
      }
  }
}

// Takes pm by reference: indexes its phases (index_phases) for the phase of a message.
// `plan` may hold the seconds of stages before.
SyncPlan plan_from_messages(PhaseMessages& pm, const Topology& t, const SyncPlanOptions& options,
                            SyncPlan plan = {}) {
  const std::size_t n = pm.count;
  pm.index_phases();
  require(n < static_cast<std::size_t>(kNone), "plan_synchronisation: " + std::to_string(n) +
                                                   " messages; at most 2^31 - 2 are supported");
  const int R = t.num_machines();
  require(R <= 65536, "plan_synchronisation: " + std::to_string(R) + " ranks; at most 65536 are supported");
  const std::int64_t phases = static_cast<std::int64_t>(pm.offset.size()) - 1;
  StageClock stage(plan);
  const PairCount count = pm.aapc ? aapc_contending_pairs(t) : counted_contending_pairs(pm, t);
  plan.contending_pairs = count.contending_pairs;

  const detail::TreeIndex tree(t);
  SweepInput in{pm, tree, {}, t.num_edge_ids(), count.busiest_edge};
  add_machines(in, t, tree);
  // When every directed edge is used in every phase (one switch), every dependence joins
  // adjacent phases and step 2 has nothing to do: no labels are kept for it then.
  in.labels = count.fewest_users < phases;
  in.record_preds = in.labels || options.keep_syncs;

  const int threads = plan_threads(options, phases);
  SweepOutput out;
  if (in.labels) out.label = MessageArray<Labels>(n);
  if (in.record_preds) out.pred_start = MessageArray<Id>(n + 1);
  auto chunks = sweep_chunks(in, out, threads, phases);
  stage("set-up");
  run_threads(threads, [&](int k) { chunks[static_cast<std::size_t>(k)]->run(); });
  stage("sweep (step 1)");
  for (const auto& c : chunks)
    if (c->error) std::rethrow_exception(c->error);  // the earliest phase's problem
  Joined joined = join_chunks(chunks, out, in.record_preds, plan);
  if (in.labels) join_labels(chunks, out, joined.g);
  chunks.clear();
  stage("join chunks");

  std::vector<std::uint8_t> redundant;  // by predecessor entry: found redundant in step 2
  if (joined.search_needed) {
    redundant = second_step(in, out, joined.g, threads, options, stage);
    for (std::uint8_t r : redundant) plan.redundant += r, joined.kept -= r;
  }
  plan.synchronisations = joined.kept;
  if (options.keep_syncs) {
    list_syncs(plan, pm, joined.g, redundant, joined.kept);
    stage("synchronisations");
  }
  // Synchronisations between one pair of ranks are consumed in the order they are sent
  // (they carry no data to tell them apart), so two of them must never cross: a -> b after
  // a's sends x1 < x2 before b's sends y1 >= y2. They cannot: x1 reaches x2 -> y2, which
  // reaches y1, so x1 -> y1 would be redundant. (test_sync_plan.cpp checks this too.)
  return plan;
}

}  // namespace

SyncPlan plan_synchronisation(const Schedule& s, const Topology& t,
                              const SyncPlanOptions& options) {
  require(s.nprocs == t.num_machines(), "plan_synchronisation: the schedule has " +
                                            std::to_string(s.nprocs) + " ranks, the topology " +
                                            std::to_string(t.num_machines()) + " machines");
  const int R = s.nprocs;
  PhaseMessages pm;
  pm.offset.push_back(0);
  std::vector<PhaseMessages::Message> msgs;
  std::vector<bool> seen(static_cast<std::size_t>(R) * R, false);
  bool duplicate = false;
  for (std::size_t r = 0; r < s.rounds.size(); ++r) {
    const auto first = static_cast<std::ptrdiff_t>(msgs.size());  // of this round
    for (const auto& tr : s.rounds[r].transfers) {
      require(tr.src >= 0 && tr.src < R && tr.dst >= 0 && tr.dst < R,
              "plan_synchronisation: round " + std::to_string(r) + " names a rank outside 0.." +
                  std::to_string(R - 1));
      if (tr.src == tr.dst) continue;
      msgs.push_back({static_cast<std::uint16_t>(tr.src), static_cast<std::uint16_t>(tr.dst)});
      auto bit = seen[static_cast<std::size_t>(tr.src) * R + tr.dst];
      duplicate |= bit;
      bit = true;
    }
    std::sort(msgs.begin() + first, msgs.end(),
              [](const auto& a, const auto& b) { return std::tie(a.src, a.dst) < std::tie(b.src, b.dst); });
    pm.offset.push_back(static_cast<std::int64_t>(msgs.size()));
  }
  pm.count = msgs.size();
  pm.msg = MessageArray<PhaseMessages::Message>(pm.count);
  for (std::size_t m = 0; m < pm.count; ++m) pm.msg[m] = msgs[m];
  pm.aapc = !duplicate && pm.count == static_cast<std::size_t>(R) * (R - 1);
  return plan_from_messages(pm, t, options);
}

SyncPlan plan_synchronisation(const TreeAapcSchedule& s, const Topology& t,
                              const SyncPlanOptions& options) {
  SyncPlan plan;
  StageClock stage(plan);
  require(s.num_machines == t.num_machines(),
          "plan_synchronisation: the schedule is for " + std::to_string(s.num_machines) +
              " machines, the topology has " + std::to_string(t.num_machines()));
  const std::size_t M = static_cast<std::size_t>(s.num_machines);
  require(M <= 65536,
          "plan_synchronisation: " + std::to_string(M) + " machines; at most 65536 are supported");
  PhaseMessages pm;
  pm.offset.assign(static_cast<std::size_t>(s.num_phases) + 1, 0);
  std::vector<std::int32_t> rank_of(M);
  for (std::size_t b = 0; b < M; ++b) rank_of[b] = t.rank_of_machine(static_cast<int>(b));
  // A counting sort by phase. Every thread takes a range of phases and reads all of
  // phase_of twice (count, then fill), so that no two threads write the same place.
  const int threads = plan_threads(options, s.num_phases);
  auto phase_range = [&](int k) {
    return std::pair<std::int32_t, std::int32_t>(
        static_cast<std::int32_t>(s.num_phases * k / threads),
        static_cast<std::int32_t>(s.num_phases * (k + 1) / threads));
  };
  run_threads(threads, [&](int k) {
    const auto [low, high] = phase_range(k);
    for (std::int32_t p : s.phase_of)
      if (p >= low && p < high) ++pm.offset[static_cast<std::size_t>(p) + 1];
  });
  for (std::int64_t p = 0; p < s.num_phases; ++p) pm.offset[p + 1] += pm.offset[p];
  pm.msg = MessageArray<PhaseMessages::Message>(static_cast<std::size_t>(pm.offset.back()));
  pm.count = static_cast<std::size_t>(pm.offset.back());
  std::vector<std::int64_t> fill(pm.offset.begin(), pm.offset.end() - 1);
  run_threads(threads, [&](int k) {
    const auto [low, high] = phase_range(k);
    for (std::size_t r = 0; r < M; ++r) {  // senders in rank order
      const std::int32_t* row =
          s.phase_of.data() + static_cast<std::size_t>(t.machine_of_rank()[r]) * M;
      for (std::size_t b = 0; b < M; ++b)
        if (row[b] >= low && row[b] < high)
          pm.msg[static_cast<std::size_t>(fill[static_cast<std::size_t>(row[b])]++)] = {
              static_cast<std::uint16_t>(r), static_cast<std::uint16_t>(rank_of[b])};
    }
  });
  pm.aapc = true;  // schedule_tree_aapc places every message exactly once
  stage("messages by phase");
  return plan_from_messages(pm, t, options, std::move(plan));
}

}  // namespace libcomm
