// AAPC phases on a switch tree (paper 003, section 4): root identification (4.1),
// extended ring global scheduling (4.2) and the global and local message assignment of
// Fig. 4 (4.3).
#include <algorithm>
#include <numeric>

#include "libcomm/error.hpp"
#include "libcomm/tree_schedule.hpp"

namespace libcomm {

namespace {

// Machines on the `w` side of link (u, w).
int machines_beyond(const Topology& t, int u, int w) {
  return t.parent(w) == u ? t.machines_below(w) : t.num_machines() - t.machines_below(u);
}

int machine_branches(const Topology& t, int u) {
  int n = 0;
  for (int w : t.neighbours(u)) n += machines_beyond(t, u, w) > 0 ? 1 : 0;
  return n;
}

// Section 4.1: start from a bottleneck link (u, v) with |Mu| >= |Mv|; while u has a single
// branch with machines (besides v), move to that branch. The switch reached is the root.
int walk_to_root(const Topology& t, int u, int v) {
  for (;;) {
    int branches = 0, next = -1;
    for (int w : t.neighbours(u))
      if (w != v && machines_beyond(t, u, w) > 0) ++branches, next = w;
    require(!t.is_machine(u), "schedule_tree_aapc: internal error: root search reached machine '" +
                                  t.name(u) + "'");
    if (branches > 1) return u;
    require(branches == 1, "schedule_tree_aapc: internal error: dead end at '" + t.name(u) + "'");
    v = u;
    u = next;
  }
}

// The first bottleneck link (in Topology::links() order) decides. When its two sides hold
// equally many machines (|Mu| = |Mv|) both ends lead to a valid root; the paper's example
// (Fig. 1: link s0 -- s1 splits 3 | 3, root s1) takes the one with fewer subtrees, and so
// do we (then the lower node id).
int find_root(const Topology& t) {
  const auto bottleneck = t.bottleneck_links().front();
  if (bottleneck.machines_a != bottleneck.machines_b)
    return bottleneck.machines_a > bottleneck.machines_b ? walk_to_root(t, bottleneck.a, bottleneck.b)
                                                         : walk_to_root(t, bottleneck.b, bottleneck.a);
  const int ra = walk_to_root(t, bottleneck.a, bottleneck.b);
  const int rb = walk_to_root(t, bottleneck.b, bottleneck.a);
  const int ba = machine_branches(t, ra), bb = machine_branches(t, rb);
  if (ba != bb) return ba < bb ? ra : rb;
  return std::min(ra, rb);
}

std::int64_t mod(std::int64_t a, std::int64_t m) { return ((a % m) + m) % m; }

// The schedule of paper 003, s. 4, built step by step (each member one step of the paper).
class TreeAapcBuilder {
 public:
  explicit TreeAapcBuilder(const Topology& t) : t_(t), M_(t.num_machines()) {
    require(M_ >= 3, "schedule_tree_aapc: needs at least 3 machines, got " + std::to_string(M_));
    s_.num_machines = M_;
  }

  TreeAapcSchedule build() && {
    split_at_root();
    ring_groups();
    s_.phase_of.assign(static_cast<std::size_t>(M_) * M_, -1);
    t0_sender_.assign(static_cast<std::size_t>(T_), 0);
    t0_receiver_.assign(static_cast<std::size_t>(T_), 0);
    from_t0();            // step 1
    into_t0();            // step 2
    local_in_t0();        // step 3
    for (std::size_t i = 2; i < k_; ++i)  // step 4: t_i -> t_j, i > j >= 1
      for (std::size_t j = 1; j < i; ++j) broadcast(i, j);
    local_in_others();    // step 5
    for (std::size_t i = 1; i < k_; ++i)  // step 6: t_i -> t_j, 1 <= i < j
      for (std::size_t j = i + 1; j < k_; ++j) broadcast(i, j);
    check_complete();
    return std::move(s_);
  }

 private:
  // The machines of the subtree behind root neighbour w, in listing order.
  std::vector<int> machines_behind(int w) const {
    std::vector<int> machines;
    std::vector<std::pair<int, int>> stack = {{w, s_.root}};
    while (!stack.empty()) {
      const auto [x, from] = stack.back();
      stack.pop_back();
      if (t_.is_machine(x)) machines.push_back(t_.machine_index(x));
      for (int y : t_.neighbours(x))
        if (y != from) stack.emplace_back(y, x);
    }
    std::sort(machines.begin(), machines.end());
    return machines;
  }

  // 4.1: the root and its subtrees t0, t1, ... in decreasing size (ties: the subtree
  // holding the lower-numbered machine first). Lemma 1: none holds more than half.
  void split_at_root() {
    s_.root = find_root(t_);
    std::vector<std::pair<int, std::vector<int>>> subs;
    for (int w : t_.neighbours(s_.root))
      if (machines_beyond(t_, s_.root, w) != 0) subs.emplace_back(w, machines_behind(w));
    std::stable_sort(subs.begin(), subs.end(), [](const auto& a, const auto& b) {
      if (a.second.size() != b.second.size()) return a.second.size() > b.second.size();
      return a.second.front() < b.second.front();
    });
    k_ = subs.size();
    s_.subtree_of.assign(static_cast<std::size_t>(M_), -1);
    s_.index_in_subtree.assign(static_cast<std::size_t>(M_), -1);
    for (std::size_t i = 0; i < k_; ++i) {
      s_.subtree_node.push_back(subs[i].first);
      s_.subtrees.push_back(subs[i].second);
      size_.push_back(static_cast<std::int64_t>(subs[i].second.size()));
      for (std::size_t x = 0; x < subs[i].second.size(); ++x) {
        s_.subtree_of[subs[i].second[x]] = static_cast<int>(i);
        s_.index_in_subtree[subs[i].second[x]] = static_cast<int>(x);
      }
    }
    require(k_ >= 2 && 2 * size_[0] <= M_,
            "schedule_tree_aapc: internal error: root '" + t_.name(s_.root) + "' has a subtree of " +
                std::to_string(size_[0]) + " of " + std::to_string(M_) + " machines");
  }

  // 4.2: extended ring scheduling. t_i -> t_j occupies |Mi| |Mj| consecutive phases from
  //   j > i: |Mi| * sum_{l=i+1}^{j-1} |Ml|
  //   i > j: T - |Mj| * sum_{l=j+1}^{i} |Ml|
  void ring_groups() {
    M0_ = size_[0];
    T_ = M0_ * (M_ - M0_);
    s_.num_phases = T_;
    s_.subtree_prefix.assign(k_ + 1, 0);
    for (std::size_t i = 0; i < k_; ++i) s_.subtree_prefix[i + 1] = s_.subtree_prefix[i] + size_[i];
  }

  void place(int src, int dst, std::int64_t p) {
    auto& slot = s_.phase_of[static_cast<std::size_t>(src) * M_ + dst];
    if (slot != -1 || p < 0 || p >= T_)
      throw Error("schedule_tree_aapc: internal error: message " + t_.name(t_.machine_node(src)) + " -> " +
                  t_.name(t_.machine_node(dst)) + " placed twice or out of range");
    slot = static_cast<std::int32_t>(p);
  }

  // 4.3, Fig. 4, step 1: t0 -> tj. Receiver at phase p: t_{j, (p - T) mod |Mj|}. Senders:
  // rotate pattern on the base sequence t0,0 .. t0,|M0|-1: repeated for lcm(|M0|, |Mj|)
  // phases, then rotated once, and so on: x = (q mod |M0| + q / lcm) mod |M0| at the q-th
  // phase. (Indices kept as counters that wrap around instead of dividing every phase.)
  void from_t0() {
    const auto& t0 = s_.subtrees[0];
    for (std::size_t j = 1; j < k_; ++j) {
      const std::int64_t Mj = size_[j], start = s_.group_start(0, j);
      const std::int64_t lcm = M0_ / std::gcd(M0_, Mj) * Mj;
      const auto& tj = s_.subtrees[j];
      std::int64_t base = 0, turn = 0, in_turn = 0, receiver = mod(start - T_, Mj);
      for (std::int64_t q = 0; q < M0_ * Mj; ++q) {
        const std::int64_t p = start + q;
        std::int64_t x = base + turn;  // q / lcm < gcd(|M0|, |Mj|) <= |M0|
        if (x >= M0_) x -= M0_;
        t0_sender_[static_cast<std::size_t>(p)] = static_cast<std::uint16_t>(x);
        place(t0[x], tj[receiver], p);
        if (++base == M0_) base = 0;
        if (++receiver == Mj) receiver = 0;
        if (++in_turn == lcm) in_turn = 0, ++turn;
      }
    }
  }

  // Step 2: t_i -> t0. Rounds of |M0| phases; in round r the t0 sender x maps to receiver
  // (x + (r mod |M0|) + 1) mod |M0| (Table 3). Senders: broadcast pattern t_{i,0}, t_{i,1}, ...
  void into_t0() {
    const auto& t0 = s_.subtrees[0];
    for (std::size_t i = 1; i < k_; ++i) {
      const std::int64_t start = s_.group_start(i, 0);
      const auto& ti = s_.subtrees[i];
      std::int64_t round_mod = (start / M0_) % M0_, in_round = start % M0_, sender = 0, sent = 0;
      for (std::int64_t q = 0; q < size_[i] * M0_; ++q) {
        const std::int64_t p = start + q;
        std::int64_t receiver = t0_sender_[static_cast<std::size_t>(p)] + round_mod + 1;  // < 2 |M0| + 1
        while (receiver >= M0_) receiver -= M0_;
        t0_receiver_[static_cast<std::size_t>(p)] = static_cast<std::uint16_t>(receiver);
        place(ti[sender], t0[receiver], p);
        if (++in_round == M0_) {
          in_round = 0;
          if (++round_mod == M0_) round_mod = 0;
        }
        if (++sent == M0_) sent = 0, ++sender;
      }
    }
  }

  // Step 3: local messages of t0 in the first |M0| (|M0| - 1) phases: t0,x -> t0,y where
  // t0,x receives and t0,y sends a global message.
  void local_in_t0() {
    const auto& t0 = s_.subtrees[0];
    for (std::int64_t p = 0; p < M0_ * (M0_ - 1); ++p)
      place(t0[t0_receiver_[static_cast<std::size_t>(p)]], t0[t0_sender_[static_cast<std::size_t>(p)]], p);
  }

  // Steps 4 and 6, the broadcast pattern of t_i -> t_j: each sender of t_i in turn, to
  // t_{j,0}, t_{j,1}, ...
  void broadcast(std::size_t i, std::size_t j) {
    std::int64_t p = s_.group_start(i, j);
    for (int from : s_.subtrees[i])
      for (int to : s_.subtrees[j]) place(from, to, p++);
  }

  // Step 5: local messages of t_i, i >= 1, in the phases of t_i -> t_{i-1}: at phase p the
  // designated receiver of t_i is t_{i, (p - T) mod |Mi|}; t_{i,x} -> t_{i,y} goes in the
  // first phase where t_{i,x} is the designated receiver and t_{i,y} the global sender
  // (y = q / |M(i-1)| at the q-th phase of the group). Which t_{i,x} -> t_{i,y} are placed
  // already: a bitmap per subtree (the same test on phase_of missed the cache at every
  // phase; 45 % of the scheduler at 4096 machines).
  void local_in_others() {
    std::vector<bool> local_placed;
    for (std::size_t i = 1; i < k_; ++i) {
      const std::int64_t Mi = size_[i], run = size_[i - 1], start = s_.group_start(i, i - 1);
      const auto& ti = s_.subtrees[i];
      local_placed.assign(static_cast<std::size_t>(Mi * Mi), false);
      std::int64_t placed = 0, p = start, x = mod(start - T_, Mi);
      for (std::int64_t y = 0; y < Mi; ++y)
        for (std::int64_t in_run = 0; in_run < run; ++in_run, ++p) {
          const std::int64_t xx = x;
          if (++x == Mi) x = 0;
          if (xx == y || local_placed[static_cast<std::size_t>(xx * Mi + y)]) continue;
          local_placed[static_cast<std::size_t>(xx * Mi + y)] = true;
          place(ti[xx], ti[y], p);
          ++placed;
        }
      require(placed == Mi * (Mi - 1), "schedule_tree_aapc: internal error: step 5 placed " +
                                           std::to_string(placed) + " of the local messages of t" +
                                           std::to_string(i));
    }
  }

  void check_complete() const {
    for (int a = 0; a < M_; ++a)
      for (int b = 0; b < M_; ++b)
        if ((a == b) != (s_.phase(a, b) == -1))
          throw Error("schedule_tree_aapc: internal error: message " + t_.name(t_.machine_node(a)) + " -> " +
                      t_.name(t_.machine_node(b)) + " has no phase");
  }

  const Topology& t_;
  const int M_;
  TreeAapcSchedule s_;
  std::size_t k_ = 0;
  std::vector<std::int64_t> size_;  // |M_i|
  std::int64_t M0_ = 0, T_ = 0;
  // Sender in t0 (index) and designated receiver in t0 (index) of every phase; indices in
  // t0 fit 16 bits (|M0| <= |M| / 2 < 32768).
  std::vector<std::uint16_t> t0_sender_, t0_receiver_;
};

}  // namespace

TreeAapcSchedule schedule_tree_aapc(const Topology& t) { return TreeAapcBuilder(t).build(); }

std::int64_t TreeAapcSchedule::group_start(std::size_t i, std::size_t j) const {
  const std::size_t k = subtrees.size();
  if (i >= k || j >= k || subtree_prefix.size() != k + 1)  // no message string built per call
    throw Error("TreeAapcSchedule::group_start: subtree out of range");
  if (i == j) return -1;
  // j > i: |Mi| * (|M(i+1)| + ... + |M(j-1)|); i > j: T - |Mj| * (|M(j+1)| + ... + |Mi|).
  const auto& prefix = subtree_prefix;
  return j > i ? (prefix[i + 1] - prefix[i]) * (prefix[j] - prefix[i + 1])
               : num_phases - (prefix[j + 1] - prefix[j]) * (prefix[i + 1] - prefix[j + 1]);
}

TreeAapcSchedule::Phases TreeAapcSchedule::phases() const {
  Phases out;
  out.offset.assign(static_cast<std::size_t>(num_phases) + 1, 0);
  const std::size_t M = static_cast<std::size_t>(num_machines);
  for (std::size_t i = 0; i < M * M; ++i)
    if (phase_of[i] >= 0) ++out.offset[static_cast<std::size_t>(phase_of[i]) + 1];
  for (std::size_t p = 0; p < static_cast<std::size_t>(num_phases); ++p) out.offset[p + 1] += out.offset[p];
  out.messages.resize(static_cast<std::size_t>(out.offset.back()));
  std::vector<std::int64_t> fill(out.offset.begin(), out.offset.end() - 1);
  for (std::size_t a = 0; a < M; ++a)
    for (std::size_t b = 0; b < M; ++b) {
      const std::int32_t p = phase_of[a * M + b];
      if (p >= 0) out.messages[static_cast<std::size_t>(fill[p]++)] = {static_cast<int>(a), static_cast<int>(b)};
    }
  return out;
}

Schedule tree_rank_schedule(const TreeAapcSchedule& s, const Topology& t) {
  require(t.num_machines() == s.num_machines,
          "tree_rank_schedule: the schedule is for " + std::to_string(s.num_machines) +
              " machines, the topology has " + std::to_string(t.num_machines()));
  Schedule out;
  out.name = "tree_scheduled";
  out.nprocs = s.num_machines;
  out.ports = 1;
  out.rounds.resize(static_cast<std::size_t>(s.num_phases));
  const auto ph = s.phases();
  for (std::size_t p = 0; p < out.rounds.size(); ++p) {
    auto& tr = out.rounds[p].transfers;
    if (p == 0)
      for (int r = 0; r < out.nprocs; ++r) tr.push_back({r, r, aapc_block(r, r, out.nprocs)});
    for (auto k = ph.offset[p]; k < ph.offset[p + 1]; ++k) {
      const int src = t.rank_of_machine(ph.messages[k].first);
      const int dst = t.rank_of_machine(ph.messages[k].second);
      tr.push_back({src, dst, aapc_block(src, dst, out.nprocs)});
    }
  }
  return out;
}

}  // namespace libcomm
