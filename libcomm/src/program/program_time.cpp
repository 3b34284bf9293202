// Timing of step programs without MPI (libcomm/program.hpp, simulate_program_time): the
// cost model's own simulator, against which the cost formulas are checked.
//
// Every rank runs its stages as the executor does: local steps first (a copy costs `copy`,
// a combine `gamma` per byte), then it posts its receives and its sends (the k-th send of a
// stage leaves k x `overhead` after the first), then its overlapped local steps; a stage ends
// once every communication step due by it has completed. A message of n bytes occupies a
// resource for n beta: between nodes the sending node's link out and the receiving node's
// link in, and, where the network carries fewer than every node's link at once
// (network_links), the network for n beta / network_links; inside a node the node's memory
// channel (beta_intra); resources serve messages
// one at a time in the order they were posted (so k messages at once on a link take k n
// beta in all, as the formulas' sharing says), and the message arrives alpha (alpha_intra)
// after it has gone through. A send completes when its bytes have left (eager); a receive
// when its message has arrived and it is posted. A message travels once both its send and
// its receive are posted (rendezvous: nothing is pushed at a rank that has not asked for
// it). Events are taken in time order.
#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <tuple>

#include "libcomm/cost_params.hpp"
#include "libcomm/error.hpp"
#include "libcomm/program.hpp"

namespace libcomm {

namespace {

// One message: both ends, once posted, and when it left and arrived.
struct Msg {
  int src = -1, dst = -1;
  std::size_t bytes = 0;
  double send_posted = -1, recv_posted = -1;
  double left = -1, arrival = -1;  // once it has travelled
};

class TimingSim {
 public:
  TimingSim(const std::vector<StepProgram>& programs, const NodeMap& nodes, const CostParams& c)
      : progs_(programs), nodes_(nodes), c_(c), ranks_(programs.size()) {
    require(static_cast<int>(programs.size()) == nodes.num_ranks(),
            "simulate_program_time: " + std::to_string(programs.size()) + " programs for a node map of " +
                std::to_string(nodes.num_ranks()) + " ranks");
    out_free_.assign(static_cast<std::size_t>(nodes.num_nodes()), 0.0);
    in_free_ = out_free_;
    mem_free_ = out_free_;
  }

  double run() {
    for (std::size_t r = 0; r < ranks_.size(); ++r) ready_.push({0.0, static_cast<int>(r)});
    while (!ready_.empty()) {
      const auto [t, r] = ready_.top();
      ready_.pop();
      start_stage(r, t);
    }
    double end = 0;
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      const RankState& s = ranks_[r];
      require(s.stage >= progs_[r].stages, [&] {
        return "simulate_program_time: " + progs_[r].algorithm + ": rank " + std::to_string(r) +
               " never finishes stage " + std::to_string(s.stage) + " (a message that is never sent)";
      });
      end = std::max(end, s.time);
    }
    return end;
  }

 private:
  struct Pending {
    std::shared_ptr<Msg> msg;
    bool send = false;
    std::uint32_t due = 0;
  };
  struct RankState {
    std::uint32_t stage = 0;
    std::size_t next = 0;  // first step of the current stage
    double time = 0;       // when the current stage's posting and local work are done
    double local_done = 0;  // the stage's overlapped local work
    std::vector<Pending> pending;
    bool waiting = false;
  };
  using Key = std::tuple<int, int, int, int>;  // src, dst, channel name index, tag
  struct Queues {
    std::deque<std::shared_ptr<Msg>> sends, recvs;  // unmatched, in posting order
  };

  int world_rank(const StepProgram& p, std::uint8_t channel, int peer) const {
    if (channel == 0) return peer;
    return p.channel_ranks.at(channel - 1).at(static_cast<std::size_t>(peer));
  }
  int channel_id(const StepProgram& p, std::uint8_t channel) {
    if (channel == 0) return 0;
    const std::string& name = p.channel_names.at(channel - 1);
    return channel_ids_.emplace(name, static_cast<int>(channel_ids_.size()) + 1).first->second;
  }
  double local_cost(const Step& st) const {
    const auto bytes = static_cast<double>(st.from.bytes);
    return bytes * (st.kind == StepKind::Reduce ? c_.gamma : c_.copy_at(bytes));  // Copy, Check: copy
  }

  // Both ends are posted: the message goes through its resources.
  void travel(Msg& m) {
    const double start = std::max(m.send_posted, m.recv_posted);
    const int a = nodes_.node_of(m.src), b = nodes_.node_of(m.dst);
    const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    if (m.src == m.dst) {
      m.left = m.arrival = start;
    } else if (a == b) {
      mem_free_[ua] = std::max(start, mem_free_[ua]) + m.bytes * c_.beta_intra;
      m.left = mem_free_[ua];
      m.arrival = m.left + c_.alpha_intra;
    } else {
      // The switch buffers: the sender's link and the receiver's serve their own queues.
      out_free_[ua] = std::max(start, out_free_[ua]) + m.bytes * c_.beta;
      in_free_[ub] = std::max(start, in_free_[ub]) + m.bytes * c_.beta;
      double through = std::max(out_free_[ua], in_free_[ub]);
      if (c_.network_links > 0) {
        net_free_ = std::max(start, net_free_) + m.bytes * c_.beta / c_.network_links;
        through = std::max(through, net_free_);
      }
      m.left = out_free_[ua];
      m.arrival = through + c_.alpha;
    }
    try_finish(m.src);
    try_finish(m.dst);
  }

  std::shared_ptr<Msg> match(const Key& key, bool send) {
    Queues& q = channel_[key];
    auto& mine = send ? q.sends : q.recvs;
    auto& theirs = send ? q.recvs : q.sends;
    if (!theirs.empty()) {
      auto m = theirs.front();
      theirs.pop_front();
      return m;
    }
    auto m = std::make_shared<Msg>();
    mine.push_back(m);
    return m;
  }

  void start_stage(int r, double t) {
    const StepProgram& p = progs_[static_cast<std::size_t>(r)];
    RankState& s = ranks_[static_cast<std::size_t>(r)];
    if (s.stage >= p.stages) return;
    const auto& steps = p.steps;
    std::size_t end = s.next;
    while (end < steps.size() && steps[end].stage == s.stage) ++end;
    double now = t;
    for (std::size_t k = s.next; k < end; ++k) {
      const Step& st = steps[k];
      require(st.kind != StepKind::Alltoall, [&] {
        return "simulate_program_time: " + p.algorithm + ": library all-to-all steps are not simulated";
      });
      if (detail::is_local(st.kind) && !st.overlap) now += local_cost(st);
    }
    std::vector<Msg*> ready;
    int sent = 0;
    for (StepKind kind : {StepKind::Recv, StepKind::Send}) {  // as the executor posts them
      for (std::size_t k = s.next; k < end; ++k) {
        const Step& st = steps[k];
        if (st.kind != kind) continue;
        const bool send = st.kind == StepKind::Send;
        const int peer = world_rank(p, st.channel, st.peer);
        const int src = send ? r : peer, dst = send ? peer : r;
        auto m = match({src, dst, channel_id(p, st.channel), static_cast<int>(st.tag)}, send);
        m->src = src;
        m->dst = dst;
        if (send) {
          m->bytes = st.from.bytes;
          m->send_posted = now + sent++ * c_.overhead;
        } else {
          m->recv_posted = now;
        }
        if (m->send_posted >= 0 && m->recv_posted >= 0) ready.push_back(m.get());
        s.pending.push_back({m, send, st.complete});
      }
    }
    if (sent > 0) now += (sent - 1) * c_.overhead;
    s.local_done = now;
    for (std::size_t k = s.next; k < end; ++k)
      if (detail::is_local(steps[k].kind) && steps[k].overlap) s.local_done += local_cost(steps[k]);
    s.next = end;
    s.time = now;
    s.waiting = true;
    for (Msg* m : ready) travel(*m);
    try_finish(r);
  }

  // Ends the stage the rank waits in once every communication step due by it has completed.
  void try_finish(int r) {
    RankState& s = ranks_[static_cast<std::size_t>(r)];
    if (!s.waiting) return;
    double end = std::max(s.time, s.local_done);
    for (const Pending& pr : s.pending) {
      if (pr.due != s.stage) continue;
      const double done = pr.send ? pr.msg->left : std::max(pr.msg->recv_posted, pr.msg->arrival);
      if (pr.msg->arrival < 0) return;  // not travelled yet
      end = std::max(end, done);
    }
    std::erase_if(s.pending, [&](const Pending& pr) { return pr.due == s.stage; });
    s.waiting = false;
    s.time = end;
    ++s.stage;
    ready_.push({end, r});
  }

  const std::vector<StepProgram>& progs_;
  const NodeMap& nodes_;
  CostParams c_;
  std::vector<RankState> ranks_;
  std::vector<double> out_free_, in_free_, mem_free_;
  double net_free_ = 0;  // the network between nodes (CostParams::network_links)
  std::map<Key, Queues> channel_;
  std::map<std::string, int> channel_ids_;
  std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>> ready_;
};

}  // namespace

double simulate_program_time(const std::vector<StepProgram>& programs, const NodeMap& nodes, const CostParams& c) {
  return TimingSim(programs, nodes, c).run();
}

}  // namespace libcomm
