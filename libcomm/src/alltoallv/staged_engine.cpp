// The MPI engine of the staged algorithms (A2, A3, A4) in the three modes of paper 001,
// section 3.4 / Fig. 13.
//
// A rank holds runs of elements (alltoallv_internal.hpp). At the start of a stage the
// router splits every held run into the send buckets (sBUF) of the stage's partners; a
// bucket is a stream of [24-byte run header][run elements]... and travels as one message.
// Receivers do not know message sizes in advance (they depend on other ranks' counts): the
// executor's ProbedMessages (runtime/messages.hpp) receives each into an rBUF of its size;
// its waits are bounded by LIBCOMM_TIMEOUT, as the executor's are.
//   Blocking (b):  per step of the schedule: Isend, probe + receive, wait for the send.
//   n1:            per stage: post every send, receive in arrival order (any source), wait for the
//                  sends, then distribute everything into the next stage's buckets.
//   n2:            two sBUFs used alternately: each message is distributed into the next
//                  stage's buckets as soon as it arrives, while this stage's sends are still
//                  in flight (they are waited for only before that buffer is reused).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>

#include "../runtime/comm_cache.hpp"
#include "../runtime/messages.hpp"
#include "../runtime/tags.hpp"
#include "libcomm/sim.hpp"
#include "alltoallv_internal.hpp"

namespace libcomm::detail {
namespace {

// Per-rank step list of one stage, cut from the schedule.
struct StageStep {
  int send_to = -1;    // -1: nothing (or a stall); == me: the message kept locally
  int recv_from = -1;  // -1: nothing
};
std::vector<StageStep> rank_steps(const Schedule& stage, int me) {
  std::vector<StageStep> steps(stage.rounds.size());
  for (std::size_t k = 0; k < stage.rounds.size(); ++k)
    for (const Transfer& t : stage.rounds[k].transfers) {
      if (t.src == me) steps[k].send_to = t.dst;
      if (t.dst == me) steps[k].recv_from = t.src;
    }
  return steps;
}

// A byte whose default construction leaves it as it is: a vector of them grows without
// zeroing what it grows (sBUF buckets, rBUF messages; zeroing them cost time).
struct RawByte {
  RawByte() {}  // (not = default: value-initialisation would zero it)
  std::byte b;
};
using ByteBuf = std::vector<RawByte>;
std::byte* bytes(ByteBuf& v) { return reinterpret_cast<std::byte*>(v.data()); }
const std::byte* bytes(const ByteBuf& v) { return reinterpret_cast<const std::byte*>(v.data()); }
// Appends `n` bytes to `v`; returns where they start.
std::byte* grow(ByteBuf& v, std::size_t n) {
  v.resize(v.size() + n);
  return bytes(v) + v.size() - n;
}

struct Piece {
  Run run;
  const std::byte* data;
};

// Buffers kept between calls (their capacity is reused), per communicator.
struct Workspace {
  std::vector<ByteBuf> buckets[2];
  std::vector<std::uint64_t> bucket_payload[2];
  std::vector<ByteBuf> inbox;  // received messages of the current / previous stage
  std::vector<Piece> held, next_held;
  std::vector<Routed> routed;
  PostedSends posted[2], step_sends;  // sends in flight (this stage's, the previous one's)
};

// The per-communicator cache: algorithm (with router state), per-stage steps and partners.
struct Prepared {
  std::unique_ptr<StagedAlgorithm> alg;
  std::vector<std::vector<StageStep>> steps;
  std::vector<std::vector<int>> bucket_of;  // per stage: partner rank -> bucket index
  std::vector<int> buckets;                 // per stage: number of buckets
};

// A run header is the Run's bytes as they lie in memory.
static_assert(std::is_trivially_copyable_v<Run> && sizeof(Run) == kRunHeaderBytes && offsetof(Run, dst) == 4 &&
              offsetof(Run, first) == 8 && offsetof(Run, n) == 16);

class Engine {
 public:
  Engine(Prepared& prep, Workspace& ws, const Comm& comm, AlltoallvAlgo algo, AlltoallvMode mode,
         AlltoallvStats* stats)
      : prep_(prep),
        alg_(*prep.alg),
        ws_(ws),
        comm_(comm),
        messages_(comm.internal(), std::string(alltoallv_algo_name(algo))),
        me_(comm.rank()),
        mode_(mode),
        stats_(stats) {}

  void run(const std::byte* send, std::span<const std::int64_t> sc,
           std::span<const std::int64_t> sd, std::byte* recv, std::span<const std::int64_t> rc,
           std::span<const std::int64_t> rd) {
    recv_ = recv;
    rc_ = rc;
    rd_ = rd;
    const int stages = alg_.num_stages();
    if (stats_ != nullptr) stats_->stages.assign(static_cast<std::size_t>(stages), {});
    ws_.held.clear();
    std::uint64_t user_bytes = 0;
    for (int j = 0; j < comm_.size(); ++j) {
      const auto n = sc[static_cast<std::size_t>(j)];
      if (n == 0) continue;
      ws_.held.push_back(
          {{me_, j, 0, n},
           send + static_cast<std::size_t>(sd[static_cast<std::size_t>(j)])});
      user_bytes += static_cast<std::uint64_t>(n);
    }
    prev_rbuf_ = user_bytes;  // the paper keeps the initial data in rBUF
    inbox_used_ = 0;
    for (PostedSends* p : {&ws_.posted[0], &ws_.posted[1], &ws_.step_sends}) p->reqs.clear(), p->to.clear();
    PostedSends* prev_sends = &ws_.posted[1];
    for (int s = 0; s < stages; ++s) {
      stage_ = s;
      messages_.at_stage(s, stages);
      st_ = stats_ != nullptr ? &stats_->stages[static_cast<std::size_t>(s)] : &scratch_stats_;
      *st_ = {};
      st_->name = alg_.schedule().stage_names[static_cast<std::size_t>(s)];
      st_->steps = static_cast<int>(prep_.steps[static_cast<std::size_t>(s)].size());
      last_ = s == stages - 1;
      const int b = mode_ == AlltoallvMode::NonblockingDual ? s % 2 : 0;
      cur_ = &ws_.buckets[b];
      next_ = &ws_.buckets[1 - b];
      cur_pay_ = &ws_.bucket_payload[b];
      next_pay_ = &ws_.bucket_payload[1 - b];
      if (mode_ != AlltoallvMode::NonblockingDual || s == 0) {
        open_buckets(*cur_, *cur_pay_, s);
        distribute_held(s, *cur_, *cur_pay_, cur_payload_);
        st_->peak_buffer_bytes = cur_payload_ + prev_rbuf_;
        release_inbox();
      } else {
        cur_payload_ = next_payload_;
        next_payload_ = 0;
      }
      st_->send_buffer_bytes = cur_payload_;
      rbuf_ = 0;
      next_opened_ = false;
      PostedSends& sends = ws_.posted[s % 2];  // (empty: waited for in the stage before)
      if (mode_ == AlltoallvMode::Blocking)
        blocking_stage(s);
      else
        nonblocking_stage(s, sends, *prev_sends);
      if (mode_ == AlltoallvMode::NonblockingSingle) {
        messages_.wait(sends);
      } else if (mode_ == AlltoallvMode::NonblockingDual) {
        if (!next_opened_ && !last_) open_next(*prev_sends);
        messages_.wait(*prev_sends);
        prev_sends = &sends;
      }
      st_->recv_buffer_bytes = st_->received_bytes;
      st_->peak_buffer_bytes =
          std::max(st_->peak_buffer_bytes, cur_payload_ + rbuf_ + next_payload_);
      prev_rbuf_ = rbuf_;
      if (mode_ != AlltoallvMode::NonblockingDual) {
        ws_.held.swap(ws_.next_held);
        ws_.next_held.clear();
      }
    }
    messages_.wait(*prev_sends);
    if (mode_ != AlltoallvMode::NonblockingDual) {
      for (const Piece& pc : ws_.held) deliver(pc);
      ws_.held.clear();
    }
    release_inbox();
  }

 private:
  void open_buckets(std::vector<ByteBuf>& set, std::vector<std::uint64_t>& pay, int s) {
    const auto n = static_cast<std::size_t>(prep_.buckets[static_cast<std::size_t>(s)]);
    if (set.size() < n) set.resize(n);
    for (auto& bkt : set) bkt.clear();
    pay.assign(n, 0);
  }

  // Routes a held piece into the buckets `set` of stage s (the one routing, route_run):
  // each part as its run header and its elements.
  void route_piece(const Piece& pc, int s, std::vector<ByteBuf>& set,
                   std::vector<std::uint64_t>& pay, std::uint64_t& payload) {
    static const std::string who = "alltoallv";
    route_run(alg_, s, me_, pc.run, prep_.bucket_of[static_cast<std::size_t>(s)], ws_.routed, who,
              [&](std::size_t b, const Run& part) {
                const auto len = static_cast<std::size_t>(part.n);
                std::byte* at = grow(set[b], kRunHeaderBytes + len);
                std::memcpy(at, &part, kRunHeaderBytes);
                if (len > 0)
                  std::memcpy(at + kRunHeaderBytes, pc.data + static_cast<std::size_t>(part.first - pc.run.first), len);
                // The composition of sBUF (paper 001's t_m per byte): charged in a simulation with a
                // copy model, so that n2's overlap of it with the exchange can show (sim.hpp).
                sim::charge_copy(static_cast<double>(kRunHeaderBytes + len));
                payload += len;
                pay[b] += len;
              });
  }

  void distribute_held(int s, std::vector<ByteBuf>& set, std::vector<std::uint64_t>& pay,
                       std::uint64_t& payload) {
    payload = 0;
    alg_.begin_stage(s, me_);
    for (const Piece& pc : ws_.held) route_piece(pc, s, set, pay, payload);
    ws_.held.clear();
  }

  void deliver(const Piece& pc) {
    const Run& r = pc.run;
    if (!(r.dst == me_ && r.src >= 0 && r.src < comm_.size() && r.first >= 0 &&
          r.first + r.n <= rc_[static_cast<std::size_t>(r.src)]))
      throw Error("alltoallv: rank " + std::to_string(me_) + " received elements [" +
                  std::to_string(r.first) + ", " + std::to_string(r.first + r.n) + ") from rank " +
                  std::to_string(r.src) + " for rank " + std::to_string(r.dst) +
                  ", outside its recvcounts (counts inconsistent across ranks?)");
    if (r.n > 0)
      std::memcpy(
          recv_ + static_cast<std::size_t>(rd_[static_cast<std::size_t>(r.src)] + r.first),
          pc.data, static_cast<std::size_t>(r.n));
    sim::charge_copy(static_cast<double>(r.n));
  }

  ByteBuf& take_inbox() {
    if (ws_.inbox.size() <= inbox_used_) ws_.inbox.resize(inbox_used_ + 1);
    ByteBuf& b = ws_.inbox[inbox_used_++];
    b.clear();
    return b;
  }
  void release_inbox() { inbox_used_ = 0; }

  // Dual buffers: before the first message is distributed into the next stage's buckets,
  // the sends that last used them (the previous stage's) must have completed.
  void open_next(PostedSends& prev_sends) {
    messages_.wait(prev_sends);
    open_buckets(*next_, *next_pay_, stage_ + 1);
    next_payload_ = 0;
    alg_.begin_stage(stage_ + 1, me_);
    next_opened_ = true;
  }

  // A message (received, or the one kept for itself) arrived in `buf`.
  void on_message(ByteBuf& buf, PostedSends* prev_sends) {
    std::uint64_t payload = 0;
    const std::size_t first_piece = ws_.next_held.size();
    std::size_t at = 0;
    const std::byte* p = bytes(buf);
    while (at < buf.size()) {
      if (!(buf.size() - at >= kRunHeaderBytes))
        throw Error("alltoallv: internal error: truncated run header");
      Run r;
      std::memcpy(&r, p + at, kRunHeaderBytes);
      at += kRunHeaderBytes;
      const std::size_t len = static_cast<std::size_t>(r.n);
      if (!(r.n >= 0 && buf.size() - at >= len))
        throw Error("alltoallv: internal error: truncated run");
      ws_.next_held.push_back({r, p + at});
      at += len;
      payload += len;
    }
    ++st_->messages_received;
    st_->received_bytes += payload;
    st_->longest_message = std::max(st_->longest_message, payload);
    st_->header_bytes += buf.size() - payload;
    rbuf_ += payload;
    if (mode_ != AlltoallvMode::NonblockingDual) return;
    // n2: distribute (or deliver) now, then the message's buffer is free again.
    if (last_) {
      for (std::size_t k = first_piece; k < ws_.next_held.size(); ++k) deliver(ws_.next_held[k]);
    } else {
      if (!next_opened_) open_next(*prev_sends);
      for (std::size_t k = first_piece; k < ws_.next_held.size(); ++k)
        route_piece(ws_.next_held[k], stage_ + 1, *next_, *next_pay_, next_payload_);
    }
    st_->peak_buffer_bytes = std::max(st_->peak_buffer_bytes, cur_payload_ + rbuf_ + next_payload_);
    ws_.next_held.resize(first_piece);
    rbuf_ -= payload;  // its buffer is free again
    --inbox_used_;
  }

  // The message to itself: the bucket's buffer moves to the inbox (no copy).
  void keep_own(int s, PostedSends* prev_sends) {
    const int idx = prep_.bucket_of[static_cast<std::size_t>(s)][static_cast<std::size_t>(me_)];
    ByteBuf& in = take_inbox();
    in.swap((*cur_)[static_cast<std::size_t>(idx)]);
    on_message(in, prev_sends);
  }

  // Receives the next message from `from` (or any of `expected`) with `tag`; returns its sender.
  int receive(int from, int tag, std::span<const int> expected, PostedSends* prev_sends) {
    ByteBuf& in = take_inbox();
    const int src = messages_.receive(
        from, tag,
        [&](std::size_t n) {
          in.resize(n);
          return bytes(in);
        },
        expected);
    on_message(in, prev_sends);
    return src;
  }

  void post_send(int s, int to, PostedSends& sends) {
    const int idx = prep_.bucket_of[static_cast<std::size_t>(s)][static_cast<std::size_t>(to)];
    const ByteBuf& b = (*cur_)[static_cast<std::size_t>(idx)];
    messages_.send(bytes(b), b.size(), to, tags::kStagedBase + s, sends);
    ++st_->messages_sent;
    st_->sent_bytes += (*cur_pay_)[static_cast<std::size_t>(idx)];
  }

  void blocking_stage(int s) {
    for (const StageStep& step : prep_.steps[static_cast<std::size_t>(s)]) {
      PostedSends& sent = ws_.step_sends;
      if (step.send_to >= 0 && step.send_to != me_) post_send(s, step.send_to, sent);
      if (step.send_to == me_) keep_own(s, nullptr);
      if (step.recv_from >= 0 && step.recv_from != me_)
        receive(step.recv_from, tags::kStagedBase + s, {&step.recv_from, 1}, nullptr);
      messages_.wait(sent);
    }
  }

  void nonblocking_stage(int s, PostedSends& sends, PostedSends& prev_sends) {
    std::vector<int> pending;
    bool own = false;
    for (const StageStep& step : prep_.steps[static_cast<std::size_t>(s)]) {
      if (step.send_to >= 0 && step.send_to != me_) post_send(s, step.send_to, sends);
      if (step.send_to == me_) own = true;
      if (step.recv_from >= 0 && step.recv_from != me_) pending.push_back(step.recv_from);
    }
    if (own) keep_own(s, &prev_sends);
    // Receive in arrival order: block in a matched probe for any source (the stage's tag
    // is this stage's alone, so whatever matches is an expected message), as paper 001's
    // non-blocking modes do; blocking on one chosen sender would serialise the others.
    while (!pending.empty()) {
      const int src = receive(MPI_ANY_SOURCE, tags::kStagedBase + s, pending, &prev_sends);
      const auto it = std::find(pending.begin(), pending.end(), src);
      if (it == pending.end())
        throw Error("alltoallv: rank " + std::to_string(me_) + ": stage " + std::to_string(s) +
                    ": a message from rank " + std::to_string(src) + ", which the schedule does not send");
      pending.erase(it);
    }
  }

  Prepared& prep_;
  StagedAlgorithm& alg_;
  Workspace& ws_;
  const Comm& comm_;
  ProbedMessages messages_;
  int me_;
  AlltoallvMode mode_;
  AlltoallvStats* stats_;
  AlltoallvStageStats scratch_stats_, *st_ = nullptr;
  std::byte* recv_ = nullptr;
  std::span<const std::int64_t> rc_, rd_;
  std::vector<ByteBuf>* cur_ = nullptr;
  std::vector<ByteBuf>* next_ = nullptr;
  std::vector<std::uint64_t>* cur_pay_ = nullptr;
  std::vector<std::uint64_t>* next_pay_ = nullptr;
  std::size_t inbox_used_ = 0;
  int stage_ = 0;
  bool last_ = false, next_opened_ = false;
  std::uint64_t cur_payload_ = 0, next_payload_ = 0, rbuf_ = 0, prev_rbuf_ = 0;
};

}  // namespace

// What the blocking engine keeps per communicator: each algorithm's routing, and the
// buffers whose capacity later calls reuse.
struct StagedState {
  std::map<AlltoallvAlgo, Prepared> prepared;
  Workspace workspace;
};

namespace {

StagedState& staged_state(const Comm& comm) {
  CommCache& cache = comm.cache();
  if (!cache.staged) cache.staged = std::make_shared<StagedState>();
  return *cache.staged;
}

Prepared& prepared_for(AlltoallvAlgo algo, const Comm& comm) {
  auto& all = staged_state(comm).prepared;
  if (auto it = all.find(algo); it != all.end()) return it->second;
  Prepared& prep = all[algo];
  prep.alg = make_staged(algo, comm.size());
  const auto& sched = prep.alg->schedule();
  for (const Schedule& stage : sched.stages) {
    prep.steps.push_back(rank_steps(stage, comm.rank()));
    std::vector<int> bucket_of(static_cast<std::size_t>(comm.size()), -1);
    int n = 0;
    for (const StageStep& st : prep.steps.back())
      if (st.send_to >= 0 && bucket_of[static_cast<std::size_t>(st.send_to)] < 0)
        bucket_of[static_cast<std::size_t>(st.send_to)] = n++;
    prep.bucket_of.push_back(std::move(bucket_of));
    prep.buckets.push_back(n);
  }
  return prep;
}

}  // namespace

void run_staged_call(AlltoallvAlgo algo, const AlltoallvOp::Args& a, const AlltoallvOp::Shape& s, const Comm& comm) {
  Prepared& prep = prepared_for(algo, comm);
  prep.alg->set_unit(static_cast<std::int64_t>(s.opts->element_bytes));
  Engine engine(prep, staged_state(comm).workspace, comm, algo, s.opts->mode, s.opts->stats);
  engine.run(static_cast<const std::byte*>(a.send), s.sc, s.sd, static_cast<std::byte*>(a.recv), s.rc, s.rd);
}

}  // namespace libcomm::detail
