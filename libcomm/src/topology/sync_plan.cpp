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
//   * the rest is a search from both ends that walks every rank's chain at most once.
// Everything is indexed by message id (phase-major), so every per-message array is written
// in order; a rank's chain is linked by prev/next send.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <thread>
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

// The messages of a schedule phase by phase; within a phase, senders in rank order. Ids
// are positions in msg, so ids grow with (phase, sender rank).
struct PhaseMessages {
  struct Message {
    std::int32_t src, dst;  // ranks (plan_from_messages puts the phase in dst after step 1)
  };
  std::vector<std::int64_t> offset;  // phase p holds messages [offset[p], offset[p + 1])
  std::vector<Message> msg;
  bool aapc = false;  // every ordered pair of distinct ranks exactly once
};

// On Linux, ask for transparent huge pages for the big arrays (tens of millions of
// entries at 4096 machines, written once): with 4 KiB pages the page faults of the first
// touch cost more than the computation. Only a hint: where it is refused, nothing changes.
void advise_huge_pages([[maybe_unused]] const void* data, [[maybe_unused]] std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t low = (begin + kHuge - 1) & ~(kHuge - 1), high = (begin + bytes) & ~(kHuge - 1);
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
  explicit MessageArray(std::size_t n) : data_(new T[n]) { advise_huge_pages(data_.get(), n * sizeof(T)); }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  std::unique_ptr<T[]> data_;
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
  for (const auto& [src, dst] : pm.msg) {
    path.clear();
    t.path_edge_ids(t.machine_node(t.machine_of_rank()[src]), t.machine_node(t.machine_of_rank()[dst]), path);
    for (std::size_t k = 0; k + 1 < path.size(); ++k) total -= turn_users[path[k] * E + path[k + 1]]++;
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
  int hub = 0;
  bool labels = false;        // step 2 may be needed: hub labels, prev_send, predecessor lists
  bool record_preds = false;  // keep the predecessor lists (step 2, or the synchronisations)
};

// What the sweep writes for every message (each chunk its own id range). pred_end[m] is
// where m's predecessors end in the chunk's list (made global after the sweep).
struct SweepOutput {
  MessageArray<Id> hub_in, hub_out, prev_send, pred_end;
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
  SweepChunk(const SweepInput& in, SweepOutput& out, std::int64_t first_phase, std::int64_t end_phase,
             std::size_t pred_capacity)
      : in_(in), out_(out), first_phase_(first_phase), end_phase_(end_phase),
        first_id_(static_cast<Id>(in.pm.offset[first_phase])), end_id_(static_cast<Id>(in.pm.offset[end_phase])),
        last_user_(static_cast<std::size_t>(in.num_edges), -1) {
    live_.reserve(static_cast<std::size_t>(in.num_edges) + 1);
    if (in.record_preds)
      reserve_large(pred_, pred_capacity ? pred_capacity : 2 * static_cast<std::size_t>(end_id_ - first_id_));
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

  int path_of(Id m, int* path) const {
    const auto& msg = in_.pm.msg[static_cast<std::size_t>(m)];
    const auto& src = in_.machine_of_rank[static_cast<std::size_t>(msg.src)];
    const auto& dst = in_.machine_of_rank[static_cast<std::size_t>(msg.dst)];
    return in_.tree.path(src.node, dst.node, in_.tree.common_depth_at(src.position, dst.position), path);
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
      const int length = path_of(m, path.data());
      std::int32_t slot = -1;
      for (int i = 0; i < length; ++i) {
        const int e = path[i];
        if (seed[e] >= 0) continue;
        seed[e] = m;
        --missing;
        if (slot < 0) {
          slot = new_slot();
          const auto& msg = pm.msg[static_cast<std::size_t>(m)];
          live_[slot] = {m, static_cast<std::int32_t>(p), msg.src,
                         in_.machine_of_rank[static_cast<std::size_t>(msg.src)].enter,
                         in_.machine_of_rank[static_cast<std::size_t>(msg.dst)].enter, kUnresolved, 0, -1};
        }
        last_user_[e] = slot;
        ++live_[slot].edges;
      }
    }
  }

  void sweep() {
    const auto& pm = in_.pm;
    const auto& tree = in_.tree;
    const std::size_t max_path = static_cast<std::size_t>(tree.max_path());
    std::vector<int> path_buffer(max_path);
    std::vector<Run> runs(max_path + 1);
    std::vector<Previous> previous;
    previous.reserve(max_path);
    int* const path = path_buffer.data();
    std::int32_t* const last = last_user_.data();
    const bool labels = in_.labels, record = in_.record_preds;
    for (std::int64_t p = first_phase_; p < end_phase_; ++p)
      for (auto mm = pm.offset[p]; mm < pm.offset[p + 1]; ++mm) {
        const Id me = static_cast<Id>(mm);
        const std::int32_t phase = static_cast<std::int32_t>(p);
        const int rank = pm.msg[mm].src;
        const auto& src = in_.machine_of_rank[static_cast<std::size_t>(rank)];
        const auto& dst = in_.machine_of_rank[static_cast<std::size_t>(pm.msg[mm].dst)];
        const int length = tree.path(src.node, dst.node, tree.common_depth_at(src.position, dst.position), path);
        const std::int32_t slot = new_slot();
        // Runs of equal previous users along the path (a path uses an edge once).
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
        previous.clear();
        for (int k = 0; k < nruns; ++k) {
          const Run& r = runs[static_cast<std::size_t>(k)];
          if (r.slot < 0) continue;
          Live& x = live_[r.slot];
          x.edges -= r.last - r.first + 1;
          if (x.phase == phase)
            throw Error(r.first == 0 ? "plan_synchronisation: rank " + std::to_string(rank) +
                                           " sends twice in round " + std::to_string(p) +
                                           " (the schedule must be single-ported)"
                                     : "plan_synchronisation: round " + std::to_string(p) + " is not contention free");
          if (x.seen_by != me) {
            x.seen_by = me;
            previous.push_back({x.id, r.slot, r.first, r.last, r.last - r.first + 1});
          } else {  // a second run of the same user: merge (a gap between them implies it)
            auto same = previous.rbegin();
            while (same->slot != r.slot) ++same;
            same->last = r.last;
            same->count += r.last - r.first + 1;
          }
        }
        // Insertion sort by id: a handful of entries, mostly in order already.
        for (std::size_t i = 1; i < previous.size(); ++i)
          for (std::size_t k = i; k > 0 && previous[k].id < previous[k - 1].id; --k)
            std::swap(previous[k], previous[k - 1]);
        Id in = -1;
        if (labels) {
          // The sender's own link carries its sends only: its last user is the previous send.
          const Id my_prev_send = runs[0].slot < 0 ? -1 : live_[runs[0].slot].id;
          const bool on_hub = tree.on_path(in_.hub, src.enter, dst.enter);
          bool unresolved = false;
          for (const auto& x : previous) {
            const Id h = live_[x.slot].hub_in;
            in = std::max(in, h);
            unresolved |= h == kUnresolved;
          }
          if (on_hub)
            in = hub_users++;
          else if (unresolved && in < 0)  // only earlier chunks' labels reach it
            in = kUnresolved;
          out_.hub_in[me] = in;
          out_.hub_out[me] = on_hub ? in : kNone;
          out_.prev_send[me] = my_prev_send;
        }
        for (const auto& [x, x_slot, x_first, x_last, x_count] : previous) {
          const Live& l = live_[x_slot];
          if (l.edges == 0) free_slots_.push_back(x_slot);
          ++consecutive_pairs;
          if (l.rank == rank) {
            ++same_sender_pairs;
            continue;
          }
          const bool implied =
              x_count < x_last - x_first + 1 ||
              (x_first > 0 && tree.on_path(path[x_first - 1], l.src_enter, l.dst_enter)) ||
              (x_last + 1 < length && tree.on_path(path[x_last + 1], l.src_enter, l.dst_enter));
          if (implied) {
            ++redundant;
          } else {
            ++kept;
            if (record) pred_.push_back(x);
            search_needed |= phase - l.phase >= 2;
          }
        }
        live_[slot] = {me, phase, rank, src.enter, dst.enter, in, length, -1};
        if (record) out_.pred_end[me] = static_cast<Id>(pred_.size());
      }
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

// The graph step 2 searches: predecessor lists (CSR over all messages), the successor
// lists, previous and next send, phase and rank of every message, and both hub labels.
struct SearchGraph {
  MessageArray<Id> pred_start;  // n + 1 entries
  std::vector<Id> pred;
  MessageArray<Id> succ_start, succ, next_send;
};

// Step 2, the rest of the transitive reduction. u -> v is redundant when u reaches another
// in-neighbour w of v (a predecessor, or v's previous send); a dependence between adjacent
// phases never is. First the hub: the users of one directed edge form a chain too, so
// hub_out(u) <= hub_in(w) shows a path u -> hub -> w in O(1). For the busiest edge, used in
// every phase, that settles most dependences from far back. The rest by a search from both
// ends, one step each in turn:
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
// at most once, and the sides meet when the watermarks of some rank cross. A side that runs
// out of work has its whole cone: no meeting by then means no other path.
// One Reducer per thread; the graph is only read.
class Reducer {
 public:
  Reducer(const PhaseMessages& pm, const SweepOutput& labels, const SearchGraph& g, int ranks)
      : pm_(pm), l_(labels), g_(g), marks_(static_cast<std::size_t>(ranks)) {}

  // Does u reach v other than by the edge u -> v?
  bool other_path(Id u, Id v) {
    const auto& hub_in = l_.hub_in;
    const auto& hub_out = l_.hub_out;
    others_.clear();
    for (Id j = g_.pred_start[v]; j < g_.pred_start[v + 1]; ++j)
      if (g_.pred[j] != u) others_.push_back(g_.pred[j]);
    if (l_.prev_send[v] >= 0) others_.push_back(l_.prev_send[v]);
    // The labels decide most cases: a path through the hub, or none because a message
    // only reaches what has labels at least its own.
    bool possible = false;
    for (Id w : others_) {
      if (hub_out[u] <= hub_in[w]) return true;
      possible |= hub_in[u] <= hub_in[w] && hub_out[u] <= hub_out[w];
    }
    if (!possible) return false;
    ++search_;
    forward_.clear();
    backward_.clear();
    // Forward, a message is worth expanding while it is before the latest in-neighbour and
    // its labels are at most theirs; backward, while it is after u and its labels are at
    // least u's. Labels and phases grow along a chain, so a stretch ends at the first that fails.
    std::int32_t horizon = -1;
    Id in_limit = -1, out_limit = -1;
    for (Id w : others_) {
      horizon = std::max(horizon, phase_of(w));
      in_limit = std::max(in_limit, hub_in[w]);
      out_limit = std::max(out_limit, hub_out[w]);
      reach_backward(w);
    }
    if (reach_forward(u)) return true;
    const std::int32_t floor = phase_of(u);
    const Id in_floor = hub_in[u], out_floor = hub_out[u];
    while (!forward_.empty() && !backward_.empty()) {
      auto& [f_next, f_stop] = forward_.back();
      if (phase_of(f_next) >= horizon || hub_in[f_next] > in_limit || hub_out[f_next] > out_limit) {
        forward_.pop_back();  // later messages cannot reach an in-neighbour
      } else {
        const Id x = f_next;
        f_next = g_.next_send[x];
        if (f_next == f_stop) forward_.pop_back();
        for (Id j = g_.succ_start[x]; j < g_.succ_start[x + 1]; ++j)
          if (reach_forward(g_.succ[j])) return true;
      }
      if (backward_.empty()) break;
      auto& [b_stop, b_next] = backward_.back();
      if (phase_of(b_next) < floor || hub_in[b_next] < in_floor || hub_out[b_next] < out_floor) {
        backward_.pop_back();  // earlier messages cannot be reached from u
      } else {
        const Id x = b_next;
        b_next = l_.prev_send[x];
        if (b_next == b_stop) backward_.pop_back();
        for (Id j = g_.pred_start[x]; j < g_.pred_start[x + 1]; ++j)
          if (reach_backward(g_.pred[j])) return true;
      }
    }
    return false;
  }

 private:
  struct Watermarks {
    std::int64_t search = -1;
    Id forward = kNone;  // earliest message reached from u (kNone: none)
    Id backward = -1;    // latest message reaching v (-1: none)
  };
  std::int32_t phase_of(Id x) const { return pm_.msg[static_cast<std::size_t>(x)].dst; }
  Watermarks& mark(Id x) {
    Watermarks& w = marks_[static_cast<std::size_t>(pm_.msg[static_cast<std::size_t>(x)].src)];
    if (w.search != search_) w = {search_, kNone, -1};
    return w;
  }
  // true: the sides meet.
  bool reach_forward(Id x) {
    Watermarks& w = mark(x);
    if (x >= w.forward) return false;
    if (x <= w.backward) return true;
    forward_.emplace_back(x, w.forward);
    w.forward = x;
    return false;
  }
  bool reach_backward(Id x) {
    Watermarks& w = mark(x);
    if (x <= w.backward) return false;
    if (x >= w.forward) return true;
    backward_.emplace_back(w.backward, x);
    w.backward = x;
    return false;
  }

  const PhaseMessages& pm_;
  const SweepOutput& l_;
  const SearchGraph& g_;
  std::vector<Watermarks> marks_;
  std::int64_t search_ = 0;
  // Chain stretches still to expand: forward {next, stop}, walking next_send from `next` up
  // to the old watermark `stop`; backward {stop, next}, walking prev_send down to `stop`.
  std::vector<std::pair<Id, Id>> forward_, backward_;
  std::vector<Id> others_;  // v's in-neighbours other than u
};

// Runs f(0), ..., f(threads - 1), each on a thread of its own but the first.
template <class F>
void run_threads(int threads, F&& f) {
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back([&f, k] { f(k); });
  f(0);
  for (auto& th : pool) th.join();
}

// Takes pm by reference and reuses it: after step 1, a message's dst holds its phase.
SyncPlan plan_from_messages(PhaseMessages& pm, const Topology& t, const SyncPlanOptions& options) {
  const std::size_t n = pm.msg.size();
  require(n < static_cast<std::size_t>(kNone),
          "plan_synchronisation: " + std::to_string(n) + " messages; at most 2^31 - 2 are supported");
  const int R = t.num_machines();
  const std::int64_t phases = static_cast<std::int64_t>(pm.offset.size()) - 1;
  SyncPlan plan;
  const PairCount count = pm.aapc ? aapc_contending_pairs(t) : counted_contending_pairs(pm, t);
  plan.contending_pairs = count.contending_pairs;

  const detail::TreeIndex tree(t);
  SweepInput in{pm, tree, {}, t.num_edge_ids(), count.busiest_edge};
  in.machine_of_rank.resize(static_cast<std::size_t>(R));
  for (int r = 0; r < R; ++r) {
    const int m = t.machine_of_rank()[r], node = t.machine_node(m);
    in.machine_of_rank[r] = {node, tree.position(m), tree.enter(node)};
  }
  // When every directed edge is used in every phase (one switch), every dependence joins
  // adjacent phases and step 2 has nothing to do: no labels are kept for it then.
  in.labels = count.fewest_users < phases;
  in.record_preds = in.labels || options.keep_syncs;

  // Step 1 in chunks of about equal numbers of messages, each on a thread.
  int threads = options.threads > 0 ? options.threads : 1;
  threads = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, phases)));
  SweepOutput out;
  if (in.labels) {
    out.hub_in = MessageArray<Id>(n);
    out.hub_out = MessageArray<Id>(n);
    out.prev_send = MessageArray<Id>(n);
  }
  if (in.record_preds) out.pred_end = MessageArray<Id>(n);
  std::vector<std::unique_ptr<SweepChunk>> chunks;
  for (std::int64_t k = 0, first = 0; k < threads; ++k) {
    // Chunk k ends at the first phase boundary past (k + 1) n / threads messages, leaving
    // every later chunk at least one phase.
    const auto target = static_cast<std::int64_t>(n) * (k + 1) / threads;
    std::int64_t end = std::lower_bound(pm.offset.begin() + first + 1, pm.offset.end(), target) - pm.offset.begin();
    end = k + 1 == threads ? phases : std::clamp(end, first + 1, phases - (threads - k - 1));
    chunks.push_back(std::make_unique<SweepChunk>(in, out, first, end, k == 0 ? 2 * n : 0));
    first = end;
  }
  run_threads(threads, [&](int k) { chunks[static_cast<std::size_t>(k)]->run(); });
  for (const auto& c : chunks)
    if (c->error) std::rethrow_exception(c->error);  // the earliest phase's problem

  // Join the chunks: counters, the predecessor lists into one CSR, and the hub labels of
  // later chunks (their own hub users counted on from the earlier chunks', their labels
  // that came from earlier chunks taken from their predecessors, in id order).
  bool search_needed = false;
  std::int64_t kept = 0;
  for (const auto& c : chunks) {
    plan.consecutive_pairs += c->consecutive_pairs;
    plan.same_sender_pairs += c->same_sender_pairs;
    plan.redundant += c->redundant;
    kept += c->kept;
    search_needed |= c->search_needed;
  }
  require(kept < static_cast<std::int64_t>(kNone),
          "plan_synchronisation: too many dependences (" + std::to_string(kept) + ")");
  SearchGraph g;
  if (in.record_preds) {
    g.pred_start = MessageArray<Id>(n + 1);
    g.pred = chunks[0]->take_preds();  // reserved for all of them
    g.pred_start[0] = 0;
    for (std::size_t k = 0; k < chunks.size(); ++k) {
      const auto& c = *chunks[k];
      const Id base = k == 0 ? 0 : static_cast<Id>(g.pred.size());
      if (k > 0) g.pred.insert(g.pred.end(), c.preds().begin(), c.preds().end());
      for (Id m = c.first_id(); m < c.end_id(); ++m) g.pred_start[m + 1] = out.pred_end[m] + base;
    }
  }
  if (in.labels) {
    Id base = chunks[0]->hub_users;
    for (std::size_t k = 1; k < chunks.size(); ++k) {
      const auto& c = *chunks[k];
      for (Id m = c.first_id(); m < c.end_id(); ++m) {
        Id& h = out.hub_in[m];
        if (h >= 0) {
          h += base;
        } else if (h == kUnresolved) {
          h = out.prev_send[m] >= 0 ? out.hub_in[out.prev_send[m]] : -1;
          for (Id j = g.pred_start[m]; j < g.pred_start[m + 1]; ++j) h = std::max(h, out.hub_in[g.pred[j]]);
        }
        if (out.hub_out[m] != kNone) out.hub_out[m] += base;
      }
      base += c.hub_users;
    }
  }
  chunks.clear();

  // Phases replace the destinations (not needed any more).
  for (std::int64_t p = 0; p < phases; ++p)
    for (auto m = pm.offset[p]; m < pm.offset[p + 1]; ++m) pm.msg[m].dst = static_cast<std::int32_t>(p);

  // Step 2 (only needed when some kept dependence spans two or more phases).
  std::vector<std::uint8_t> removed;  // by predecessor entry: found redundant in step 2
  if (search_needed) {
    if (!in.labels)  // every edge busy in every phase leaves no gap of two phases
      throw Error("plan_synchronisation: internal error: a dependence spans two phases on a tree whose edges are "
                  "all busy in every phase");
    // Next send and successors (CSR) of every message.
    g.next_send = MessageArray<Id>(n);
    for (std::size_t m = 0; m < n; ++m) g.next_send[m] = kNone;
    for (std::size_t m = 0; m < n; ++m)
      if (out.prev_send[m] >= 0) g.next_send[static_cast<std::size_t>(out.prev_send[m])] = static_cast<Id>(m);
    g.succ_start = MessageArray<Id>(n + 1);
    g.succ = MessageArray<Id>(g.pred.size() + 1);
    for (std::size_t i = 0; i <= n; ++i) g.succ_start[i] = 0;
    for (Id u : g.pred) ++g.succ_start[static_cast<std::size_t>(u) + 1];
    for (std::size_t i = 0; i < n; ++i) g.succ_start[i + 1] += g.succ_start[i];
    for (std::size_t m = 0; m < n; ++m)  // fills list u at start[u], moving start[u] to start[u + 1]
      for (Id j = g.pred_start[m]; j < g.pred_start[m + 1]; ++j) g.succ[g.succ_start[g.pred[j]]++] = static_cast<Id>(m);
    for (std::size_t i = n; i > 0; --i) g.succ_start[i] = g.succ_start[i - 1];
    g.succ_start[0] = 0;
    // hub_out: the earliest user of the hub edge that a message reaches (kNone: none), from
    // the latest message backwards.
    for (auto m = static_cast<std::int64_t>(n) - 1; m >= 0; --m) {
      Id h = out.hub_out[m];
      if (g.next_send[m] != kNone) h = std::min(h, out.hub_out[g.next_send[m]]);
      for (Id j = g.succ_start[m]; j < g.succ_start[m + 1]; ++j) h = std::min(h, out.hub_out[g.succ[j]]);
      out.hub_out[m] = h;
    }
    // The dependences in blocks of messages, handed out to the threads as they come.
    removed.assign(g.pred.size(), 0);
    constexpr std::size_t kBlock = 1 << 14;
    std::atomic<std::size_t> next_block{0};
    std::vector<std::int64_t> removed_by(static_cast<std::size_t>(threads), 0);
    std::vector<std::exception_ptr> failed(static_cast<std::size_t>(threads));
    run_threads(threads, [&](int k) {
      try {
      Reducer reduce(pm, out, g, R);
      std::int64_t found = 0;
      for (;;) {
        const std::size_t begin = next_block.fetch_add(kBlock);
        if (begin >= n) break;
        const std::size_t end = std::min(n, begin + kBlock);
        for (std::size_t m = begin; m < end; ++m)
          for (Id j = g.pred_start[m]; j < g.pred_start[m + 1]; ++j) {
            const Id u = g.pred[j], v = static_cast<Id>(m);
            if (pm.msg[v].dst - pm.msg[u].dst >= 2 && reduce.other_path(u, v)) {
              removed[j] = 1;
              ++found;
            }
          }
      }
      removed_by[static_cast<std::size_t>(k)] = found;
      } catch (...) {
        failed[static_cast<std::size_t>(k)] = std::current_exception();
      }
    });
    for (const auto& e : failed)
      if (e) std::rethrow_exception(e);
    for (auto r : removed_by) plan.redundant += r, kept -= r;
  }
  plan.synchronisations = kept;
  if (options.keep_syncs) {
    reserve_large(plan.syncs, static_cast<std::size_t>(kept));
    for (std::size_t m = 0; m < n; ++m)
      for (Id j = g.pred_start[m]; j < g.pred_start[m + 1]; ++j)
        if (removed.empty() || !removed[j]) {
          const auto& u = pm.msg[static_cast<std::size_t>(g.pred[j])];
          plan.syncs.push_back({u.src, pm.msg[m].src, u.dst, pm.msg[m].dst});
        }
  }
  // Synchronisations between one pair of ranks are consumed in the order they are sent
  // (they carry no data to tell them apart), so two of them must never cross: a -> b after
  // a's sends x1 < x2 before b's sends y1 >= y2. They cannot: x1 reaches x2 -> y2, which
  // reaches y1, so x1 -> y1 would be redundant. (test_sync_plan.cpp checks this too.)
  return plan;
}

}  // namespace

SyncPlan plan_synchronisation(const Schedule& s, const Topology& t, const SyncPlanOptions& options) {
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
  return plan_from_messages(pm, t, options);
}

SyncPlan plan_synchronisation(const TreeAapcSchedule& s, const Topology& t, const SyncPlanOptions& options) {
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
  return plan_from_messages(pm, t, options);
}

TreeRankPlan::TreeRankPlan(const Schedule& s, const SyncPlan& sync, int rank)
    : plan(s, rank), wait_from(s.rounds.size()), notify(s.rounds.size()) {
  for (const auto& y : sync.syncs) {
    if (y.to == rank) wait_from.at(static_cast<std::size_t>(y.before)).push_back(y.from);
    if (y.from == rank) notify.at(static_cast<std::size_t>(y.after)).push_back(y.to);
  }
}

}  // namespace libcomm
