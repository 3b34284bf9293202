// ClusteredAllToAll (paper 000, section 3, Fig. 2): the factor algorithm generalised to
// nodes with different numbers of processes.
//
// Nodes are ordered U < V if size(U) < size(V), ties by node id. A phase works on the set
// A of active nodes: current = min size in A; for each 1-factor G_i of the complete graph
// on A (with self-loops, v_i(a) = (i - a) mod |A|, positions in the order above), every
// pair (U, V), U <= V, runs steps: for each u of U with done <= l(u) < current, for each
// v of V: exchange m_uv and m_vu, or, when U = V, send m_uv only. Then done = current
// and nodes of size done retire. All pairs of a round run their steps in parallel; a
// round lasts as long as its longest pair. Node-level single port: in every step one
// process per node talks to another node. clustered_factor_program runs the steps; with
// one_matching_per_step a node's steps with other nodes also run one at a time.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "libcomm/error.hpp"
#include "libcomm/hierarchical.hpp"

namespace libcomm {

std::int64_t clustered_factor_theorem_steps(const NodeMap& nodes) {
  return static_cast<std::int64_t>(Layout::of(nodes).ppn) * nodes.num_ranks();
}

namespace {

// One step of a node pair: exchange m_uv / m_vu, or (self-paired node) send m_uv.
struct Move {
  int u, v;
  bool exchange;
};

// Paper 000's schedule, built round by round: phases of nodes of equal remaining size,
// each a 1-factorisation of the active nodes (Fig. 2), with section 4's intra-node fill.
class ClusteredFactorBuilder {
 public:
  ClusteredFactorBuilder(const NodeMap& nodes, const ClusteredFactorOptions& opts)
      : nodes_(nodes), opts_(opts), p_(nodes.num_ranks()) {
    require(p_ > 0, "clustered_factor: empty node map");
    out_.schedule.name = opts.intra_fill ? "clustered_factor_fill" : "clustered_factor";
    out_.schedule.nprocs = p_;
    out_.schedule.ports = 1;
  }

  ClusteredFactorSchedule build() && {
    // Node order: size, then id.
    std::vector<int> active(static_cast<std::size_t>(nodes_.num_nodes()));
    std::iota(active.begin(), active.end(), 0);
    std::stable_sort(active.begin(), active.end(),
                     [&](int a, int b) { return nodes_.node_size(a) < nodes_.node_size(b); });
    if (!opts_.copies_take_a_step) {
      out_.schedule.rounds.emplace_back();
      for (int u = 0; u < p_; ++u) add_transfer(out_.schedule.rounds.back(), u, u);
      out_.phase_of_step.push_back(-1);
      out_.round_of_step.push_back(-1);
    }
    int done = 0;
    while (!active.empty()) {
      const int current = nodes_.node_size(active.front());
      int rounds_this_phase = 0;
      for (int i = 0; i < static_cast<int>(active.size()); ++i)
        rounds_this_phase += factor_round(active, i, done, current) ? 1 : 0;
      if (rounds_this_phase > 0) {
        out_.rounds_per_phase.push_back(rounds_this_phase);
        ++out_.phases;
      }
      done = current;
      active.erase(std::remove_if(active.begin(), active.end(), [&](int U) { return nodes_.node_size(U) == done; }),
                   active.end());
    }
    out_.steps = static_cast<int>(out_.schedule.rounds.size()) - (opts_.copies_take_a_step ? 0 : 1);
    return std::move(out_);
  }

 private:
  void add_transfer(Round& r, int s, int d) { r.transfers.push_back({s, d, aapc_block(s, d, p_)}); }

  // The steps of node pair (U, V) in this phase: the processes of U at local index
  // done..current-1 to every process of V (both ways when U != V).
  std::vector<Move> pair_moves(int U, int V, int done, int current) const {
    std::vector<Move> steps;
    const auto& us = nodes_.ranks_of_node(U);
    for (int lu = done; lu < current; ++lu)
      for (int v : nodes_.ranks_of_node(V)) {
        const int u = us[lu];
        if (U == V && (sent_early_.count({u, v}) || (u == v && !opts_.copies_take_a_step))) continue;
        steps.push_back({u, v, U != V});
      }
    return steps;
  }

  // Round i of the phase: the pairs of factor i, each pair's steps side by side. False when
  // everything of the round was sent early.
  bool factor_round(const std::vector<int>& active, int i, int done, int current) {
    const int m = static_cast<int>(active.size());
    std::vector<std::vector<Move>> pair_steps;
    std::vector<int> self_nodes;  // nodes paired with themselves in this round
    for (int a = 0; a < m; ++a) {
      const int b = ((i - a) % m + m) % m;
      if (a > b) continue;
      if (a == b) self_nodes.push_back(active[a]);
      pair_steps.push_back(pair_moves(active[a], active[b], done, current));
    }
    std::size_t len = 0;
    for (const auto& s : pair_steps) len = std::max(len, s.size());
    if (len == 0) return false;
    const std::size_t first = out_.schedule.rounds.size();
    out_.schedule.rounds.resize(first + len);
    for (const auto& steps : pair_steps)
      for (std::size_t k = 0; k < steps.size(); ++k) {
        Round& r = out_.schedule.rounds[first + k];
        add_transfer(r, steps[k].u, steps[k].v);
        if (steps[k].exchange) add_transfer(r, steps[k].v, steps[k].u);
      }
    if (opts_.intra_fill)
      for (int U : self_nodes) fill_idle(U, first, len, current);
    for (std::size_t k = 0; k < len; ++k) {
      out_.phase_of_step.push_back(out_.phases);
      out_.round_of_step.push_back(global_round_);
    }
    ++global_round_;
    return true;
  }

  // Section 4: in the steps of this round, idle processes of a self-paired node send
  // intra-node messages of later phases (l(u) >= current), at most one send and one
  // receive per process per step.
  void fill_idle(int U, std::size_t first, std::size_t len, int current) {
    const auto& us = nodes_.ranks_of_node(U);
    for (std::size_t k = 0; k < len; ++k) {
      Round& r = out_.schedule.rounds[first + k];
      std::set<int> busy_send, busy_recv;
      for (const auto& t : r.transfers) busy_send.insert(t.src), busy_recv.insert(t.dst);
      for (int lu = current; lu < static_cast<int>(us.size()); ++lu) {
        const int u = us[lu];
        if (busy_send.count(u)) continue;
        for (int v : us) {
          if (busy_recv.count(v) || sent_early_.count({u, v})) continue;
          if (u == v && !opts_.copies_take_a_step) continue;
          add_transfer(r, u, v);
          sent_early_.insert({u, v});
          busy_send.insert(u);
          busy_recv.insert(v);
          break;
        }
      }
    }
  }

  const NodeMap& nodes_;
  const ClusteredFactorOptions& opts_;
  const int p_;
  ClusteredFactorSchedule out_;
  int global_round_ = 0;
  std::set<std::pair<int, int>> sent_early_;  // intra-node messages sent early (section 4)
};

}  // namespace

ClusteredFactorSchedule clustered_factor_schedule(const NodeMap& nodes, const ClusteredFactorOptions& opts) {
  return ClusteredFactorBuilder(nodes, opts).build();
}

StepProgram clustered_factor_program(const NodeMap& nodes, int rank, std::size_t b,
                                     const ClusteredFactorOptions& opts) {
  const Schedule s = clustered_factor_schedule(nodes, opts).schedule;
  if (!opts.one_matching_per_step) return schedule_program(s, rank, b, ScheduleRun::PerRound);
  const int p = s.nprocs;
  require(rank >= 0 && rank < p, "clustered_factor_program: rank " + std::to_string(rank) + " of P = " +
                                     std::to_string(p) + " does not exist");
  // holder[r]: the process of this rank's node in an exchange with another node in round r
  // (-1: none). The schedule is single-ported per node, so there is at most one.
  const int node = nodes.node_of(rank);
  std::vector<int> holder(s.rounds.size(), -1);
  for (std::size_t r = 0; r < s.rounds.size(); ++r)
    for (const auto& t : s.rounds[r].transfers) {
      if (nodes.node_of(t.src) == nodes.node_of(t.dst)) continue;
      for (int q : {t.src, t.dst})
        if (nodes.node_of(q) == node) {
          require(holder[r] < 0 || holder[r] == q, "clustered_factor_program: round " + std::to_string(r) +
                                                       " has two processes of node " + std::to_string(node) +
                                                       " talking off-node");
          holder[r] = q;
        }
    }
  // The stages: for each round this rank takes part in, a stage that waits for the node's
  // port when it takes it over from another process, then the round's messages; the hand-
  // over to the next process goes out in the stage after them.
  struct Stage {
    int wait_from = -1, notify = -1;
    std::size_t round = 0;
    bool messages = false;
  };
  std::vector<Stage> stages;
  int previous = -1;  // the node's last holder so far
  for (std::size_t r = 0; r < s.rounds.size(); ++r) {
    const bool takes_part = std::any_of(s.rounds[r].transfers.begin(), s.rounds[r].transfers.end(),
                                        [&](const Transfer& t) { return t.src == rank || t.dst == rank; });
    const int h = holder[r];
    if (h >= 0 && h != rank && previous == rank) {
      // This rank hands the port on after its last exchange (the stage after it).
      stages.push_back({.notify = h, .round = r});
    }
    if (takes_part) {
      if (h == rank && previous >= 0 && previous != rank) stages.push_back({.wait_from = previous, .round = r});
      stages.push_back({.round = r, .messages = true});
    }
    if (h >= 0) previous = h;
  }
  const auto last = static_cast<std::uint32_t>(stages.empty() ? 0 : stages.size() - 1);
  ProgramBuilder out(s.name, rank, p);
  const std::size_t n = static_cast<std::size_t>(p) * b;
  out.set_extents(n, n);
  const auto block = [&](Area a, int k) { return ByteRange{a, static_cast<std::size_t>(k) * b, b}; };
  bool copied = false;
  for (std::uint32_t k = 0; k < stages.size(); ++k) {
    const Stage& st = stages[k];
    if (st.wait_from >= 0) out.recv(k, st.wait_from, {Area::Recv, 0, 0}, k, TagKind::Sync);
    if (st.notify >= 0) out.send(k, st.notify, {Area::Send, 0, 0}, last, TagKind::Sync);
    if (!st.messages) continue;
    for (const auto& t : s.rounds[st.round].transfers) {
      if (t.src == t.dst) continue;
      if (t.src == rank)
        out.send(k, t.dst, block(Area::Send, t.dst), k);
      else if (t.dst == rank)
        out.recv(k, t.src, block(Area::Recv, t.src), k);
    }
    // The rank's own block is a local copy alongside its first messages, whichever round
    // the schedule lists it in (as schedule_program places it).
    if (!copied) out.copy(k, block(Area::Send, rank), block(Area::Recv, rank), true);
    copied = true;
  }
  return std::move(out).program();
}

VerifyResult verify_node_single_port(const Schedule& s, const NodeMap& nodes) {
  VerifyResult res;
  for (std::size_t r = 0; r < s.rounds.size(); ++r) {
    std::map<int, std::set<int>> senders, receivers;  // node -> processes talking off-node
    for (const auto& t : s.rounds[r].transfers) {
      if (t.src < 0 || t.src >= nodes.num_ranks() || t.dst < 0 || t.dst >= nodes.num_ranks())
        continue;
      if (nodes.node_of(t.src) == nodes.node_of(t.dst)) continue;
      senders[nodes.node_of(t.src)].insert(t.src);
      receivers[nodes.node_of(t.dst)].insert(t.dst);
    }
    for (const auto* side : {&senders, &receivers})
      for (const auto& [node, procs] : *side)
        if (procs.size() > 1)
          res.fail("round " + std::to_string(r) + ": " + std::to_string(procs.size()) + " processes of node " +
                   std::to_string(node) + (side == &senders ? " send" : " receive") + " off-node");
  }
  return res;
}

}  // namespace libcomm

// ---- The algorithm's descriptors (alltoall.cpp lists them) -------------------------------

#include "alltoall_internal.hpp"

namespace libcomm::detail {

namespace {

template <bool fill>
StepProgram program(const AlltoallOp::Shape& s, int rank) {
  return clustered_factor_program(*s.nodes, rank, s.block,
                                  {.intra_fill = fill, .one_matching_per_step = s.opts->one_matching_per_step});
}

template <bool fill>
Schedule schedule(int p) {
  // Without a node map: every rank a node of its own.
  return clustered_factor_schedule(NodeMap::one_rank_per_node(p), {.intra_fill = fill}).schedule;
}

// Paper 000, Theorem 1: the steps of ClusteredAllToAll, one inter-node exchange per node
// per step. Auto considers it only where nodes hold several ranks (on one rank per node it
// is the 1-factor algorithm).
double predicted_time(const AlltoallOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  if (l.ppn == 1 || l.nodes == 1) return std::numeric_limits<double>::infinity();
  const int steps = clustered_factor_schedule(*s.nodes).steps;
  const double b = static_cast<double>(s.block);
  return steps * (c.alpha + cost::off_node(l, c, b * c.beta_at(b), b, b)) + cost::copy(c, b);
}

}  // namespace

extern const AlltoallAlgorithm clustered_factor_alltoall{
    .algo = AlltoallAlgo::ClusteredFactor, .name = "clustered_factor",
    .summary = "1-factor phases over nodes of different sizes, one inter-node exchange per node per step",
    .paper = "paper 000, Fig. 2", .cost = predicted_time, .program = program<false>, .node_map = true,
    .extra = {.schedule = schedule<false>}};

extern const AlltoallAlgorithm clustered_factor_fill_alltoall{
    .algo = AlltoallAlgo::ClusteredFactorFill, .name = "clustered_factor_fill",
    .summary = "clustered_factor plus extra intra-node work in self-paired rounds", .paper = "paper 000, s. 4",
    .program = program<true>, .node_map = true, .extra = {.schedule = schedule<true>}};

}  // namespace libcomm::detail
