// The one executor: runs a rank's step program (libcomm/program.hpp) over MPI, blocking
// (start + wait), non-blocking (start, then test / wait progress it) or persistently (the
// same state started again). Stages follow each other: a stage runs its local steps,
// posts its receives and sends, runs its overlapping local steps, and ends when every
// communication step due by it has completed. In a SimGrid build the local copies are
// charged by the copy model and skipped with a simulated payload (libcomm/sim.hpp,
// libcomm/buffer.hpp), the reductions are charged as local work.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "libcomm/error.hpp"
#include "libcomm/settings.hpp"
#include "libcomm/reduction.hpp"
#include "libcomm/sim.hpp"
#include "messages.hpp"
#include "mpi_bytes.hpp"
#include "plan_state.hpp"
#include "tags.hpp"

namespace libcomm {

namespace detail {

namespace {

std::byte* area_base(const PlanState& s, Area a) {
  switch (a) {
    case Area::Send:
      return const_cast<std::byte*>(s.send);
    case Area::Recv:
      return s.recv;
    case Area::Scratch:
      return s.scratch;
    case Area::Const:
      return const_cast<std::byte*>(s.program->constants.data());
    case Area::Shared:
      return s.shared;
  }
  return nullptr;
}

std::byte* at(const PlanState& s, const ByteRange& r) {
  return area_base(s, r.area) + r.offset;
}

// LIBCOMM_TRACE_STAGES=DIR: when a run of a step program completes, its rank appends one
// line per stage to DIR/stages.<world rank>.txt: algorithm, run, stage, the times (MPI_Wtime:
// simulated seconds under SimGrid) at which the stage was posted and was done, and what it
// posted (s<peer>:<bytes> sends, r<peer>:<bytes> receives, . for sync messages). Shows
// where a schedule spends its time: waiting for synchronisation, or sending.
const char* trace_dir() {
  static const std::string dir = setting_text(Setting::TraceStages);
  return dir.empty() ? nullptr : dir.c_str();
}

void stage_mark(PlanState& s, bool posted) {
  if (!trace_dir()) return;
  if (posted) s.stage_times.resize(s.stage + 1, {-1, -1}), s.stage_times[s.stage].first = MPI_Wtime();
  else if (s.stage < s.stage_times.size()) s.stage_times[s.stage].second = MPI_Wtime();
}

void write_stage_trace(PlanState& s, const StepProgram& p) {
  if (!trace_dir()) return;
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  std::ofstream out(std::string(trace_dir()) + "/stages." + std::to_string(world) + ".txt", std::ios::app);
  const std::uint64_t run = s.traced_runs++;
  std::size_t k = 0;
  for (std::uint32_t stage = 0; stage < s.stage_times.size(); ++stage) {
    out << p.algorithm << " " << run << " " << stage << " " << s.stage_times[stage].first << " "
        << s.stage_times[stage].second;
    for (; k < p.steps.size() && p.steps[k].stage == stage; ++k) {
      const Step& st = p.steps[k];
      if (st.kind != StepKind::Send && st.kind != StepKind::Recv) continue;
      out << " " << (st.kind == StepKind::Send ? 's' : 'r') << st.peer << ":";
      if (st.tag == TagKind::Sync) out << ".";
      else out << (st.kind == StepKind::Send ? st.from.bytes : st.to.bytes);
    }
    out << "\n";
  }
  s.stage_times.clear();
}

void run_local(PlanState& s, const StepProgram& p, const Step& st) {
  const std::size_t n = st.from.bytes;
  if (st.kind == StepKind::Copy) {
    sim::charge_copy(static_cast<double>(n), st.cold);
    if (n && !simulated_payload()) std::memcpy(at(s, st.to), at(s, st.from), n);
    return;
  }
  if (st.kind == StepKind::Check) {  // reads what arrived: nothing to read in a simulation
    if (n && !simulated_payload() && std::memcmp(at(s, st.to), at(s, st.from), n) != 0)
      throw Error(p.algorithm + ": rank " + std::to_string(p.rank) + ": stage " + std::to_string(st.stage) +
                  ": received data fails its check (a corrupt message)");
    return;
  }
  // Reduce: element-wise combine, charged as local work in a simulation: one flop per
  // element under the flop model, else its measured CPU time (or, with a simulated
  // payload, its bytes at the copy rate).
  if (sim::flop_rate() > 0) {
    sim::charge_flops(static_cast<double>(n / p.elem_bytes));
    if (!simulated_payload()) reduce_local(at(s, st.from), at(s, st.to), n / p.elem_bytes, p.elem, p.op);
    return;
  }
  if (simulated_payload()) {
    sim::charge_copy(static_cast<double>(n));
    return;
  }
  sim::charge_local_work(
      [&] { reduce_local(at(s, st.from), at(s, st.to), n / p.elem_bytes, p.elem, p.op); });
}

// The order in which a stage posts its communication steps (waited_steps relies on it).
constexpr StepKind kPostingOrder[] = {StepKind::Recv, StepKind::Send, StepKind::Alltoall};

int tag_of(const PlanState& s, const Step& st) { return st.tag == TagKind::Data ? s.tag_data : s.tag_sync; }

void post(PlanState& s, const Step& st) {
  s.reqs.emplace_back(MPI_REQUEST_NULL);
  s.req_complete.push_back(st.complete);
  const MPI_Comm comm = s.channels[st.channel];
  if (st.kind == StepKind::Alltoall) {
    const MpiBytes blk(st.from.bytes / s.channel_sizes[st.channel]);
    check_mpi(MPI_Ialltoall(at(s, st.from), blk.count(), blk.type(), at(s, st.to), blk.count(), blk.type(), comm,
                            &s.reqs.back()),
              "MPI_Ialltoall");
    return;
  }
  const int tag = tag_of(s, st);
  if (st.kind == StepKind::Recv) {
    const MpiBytes n(st.to.bytes);
    check_mpi(MPI_Irecv(at(s, st.to), n.count(), n.type(), st.peer, tag, comm, &s.reqs.back()),
              "MPI_Irecv");
  } else {
    const MpiBytes n(st.from.bytes);
    const auto isend = st.synchronous ? &MPI_Issend : &MPI_Isend;
    check_mpi(isend(at(s, st.from), n.count(), n.type(), st.peer, tag, comm, &s.reqs.back()),
              st.synchronous ? "MPI_Issend" : "MPI_Isend");
  }
}

// A blocking run's stage of one receive and / or one send, or of one library all-to-all,
// due by its end, with nothing else in flight: the one blocking call that does the same
// (MPI_Sendrecv, MPI_Recv, MPI_Send, MPI_Alltoall) costs less than posting and waiting for
// the requests (measured: a 2-rank ring allgather of 8 B took about 10 % longer through
// MPI_Irecv + MPI_Isend + MPI_Waitall). False, having run nothing, when the stage is not so.
bool run_at_once(PlanState& s, const Step* recv, const Step* send, const Step* coll) {
  const auto due_now = [&](const Step* st) { return !st || st->complete == s.stage; };
  if (!s.reqs.empty() || !due_now(recv) || !due_now(send) || !due_now(coll) ||
      (recv && send && (recv->channel != send->channel || send->synchronous)))
    return false;
  if (coll) {
    const MpiBytes blk(coll->from.bytes / s.channel_sizes[coll->channel]);
    check_mpi(MPI_Alltoall(at(s, coll->from), blk.count(), blk.type(), at(s, coll->to), blk.count(), blk.type(),
                           s.channels[coll->channel]),
              "MPI_Alltoall");
    return true;
  }
  const MPI_Comm comm = s.channels[(recv ? recv : send)->channel];
  if (recv && send) {
    const MpiBytes in(recv->to.bytes), out(send->from.bytes);
    check_mpi(MPI_Sendrecv(at(s, send->from), out.count(), out.type(), send->peer, tag_of(s, *send), at(s, recv->to),
                           in.count(), in.type(), recv->peer, tag_of(s, *recv), comm, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
  } else if (recv) {
    const MpiBytes in(recv->to.bytes);
    check_mpi(MPI_Recv(at(s, recv->to), in.count(), in.type(), recv->peer, tag_of(s, *recv), comm, MPI_STATUS_IGNORE),
              "MPI_Recv");
  } else {
    const MpiBytes out(send->from.bytes);
    const auto send_fn = send->synchronous ? &MPI_Ssend : &MPI_Send;
    check_mpi(send_fn(at(s, send->from), out.count(), out.type(), send->peer, tag_of(s, *send), comm),
              send->synchronous ? "MPI_Ssend" : "MPI_Send");
  }
  return true;
}

// Runs the local steps and posts the communication of stage s.stage. In a blocking run, a
// stage of one exchange runs it at once (run_at_once) and posts nothing: s.reqs was empty
// and stays so, nothing to wait for.
void post_stage(PlanState& s, const StepProgram& p, bool blocking) {
  const std::size_t first = s.next_step;
  std::size_t end = first;
  const Step *recv = nullptr, *send = nullptr, *coll = nullptr;
  int recvs = 0, sends = 0, colls = 0;
  for (; end < p.steps.size() && p.steps[end].stage == s.stage; ++end) {
    const Step& st = p.steps[end];
    if (st.kind == StepKind::Recv) recv = &st, ++recvs;
    if (st.kind == StepKind::Send) send = &st, ++sends;
    if (st.kind == StepKind::Alltoall) coll = &st, ++colls;
  }
  s.next_step = end;
  // Orders this process's accesses to the shared window against the other members' (their
  // writes before the messages that ended the previous stage are visible now).
  if (s.window) std::atomic_thread_fence(std::memory_order_seq_cst);
  for (std::size_t k = first; k < end; ++k)
    if (is_local(p.steps[k].kind) && !p.steps[k].overlap) run_local(s, p, p.steps[k]);
  const bool one_exchange =
      colls == 0 ? recvs <= 1 && sends <= 1 && recvs + sends > 0 : colls == 1 && recvs + sends == 0;
  if (!(blocking && one_exchange && run_at_once(s, recv, send, coll)))
    for (StepKind kind : kPostingOrder)
      for (std::size_t k = first; k < end; ++k)
        if (p.steps[k].kind == kind) post(s, p.steps[k]);
  for (std::size_t k = first; k < end; ++k)
    if (is_local(p.steps[k].kind) && p.steps[k].overlap) run_local(s, p, p.steps[k]);
  s.stage_posted = true;
}

// Moves the requests due by the current stage into s.waitset (keeping the others).
void collect_due(PlanState& s) {
  s.waitset.clear();
  std::size_t keep = 0;
  for (std::size_t k = 0; k < s.reqs.size(); ++k) {
    if (s.req_complete[k] <= s.stage) {
      s.waitset.push_back(s.reqs[k]);
    } else {
      s.reqs[keep] = s.reqs[k];
      s.req_complete[keep++] = s.req_complete[k];
    }
  }
  s.reqs.resize(keep);
  s.req_complete.resize(keep);
}

// LIBCOMM_TIMEOUT=SECONDS (a positive number; unset, empty or 0: off): a blocking wait of
// the executor that sees none of its requests complete for that long throws an Error
// naming the ranks whose messages are outstanding, instead of waiting for a peer that has
// stopped or died (README, "Faults"). Off in a SimGrid build: its clock is simulated.
double wait_timeout() {
#ifdef LIBCOMM_SIMGRID
  return 0;
#else
  return setting_number(Setting::Timeout);
#endif
}

// The program's communication steps behind the requests of the wait set of stage
// s.stage, in the wait set's order: each stage posts in kPostingOrder and collect_due
// keeps posting order, so the set holds the steps posted so far whose `complete` is this
// stage. (Only with the timeout on: then no stage runs as one blocking call, and every
// step has its request.)
std::vector<const Step*> waited_steps(const PlanState& s, const StepProgram& p) {
  std::vector<const Step*> out;
  for (std::size_t first = 0, end = 0; first < p.steps.size() && p.steps[first].stage <= s.stage; first = end) {
    while (end < p.steps.size() && p.steps[end].stage == p.steps[first].stage) ++end;
    for (StepKind kind : kPostingOrder)
      for (std::size_t k = first; k < end; ++k)
        if (p.steps[k].kind == kind && p.steps[k].complete == s.stage) out.push_back(&p.steps[k]);
  }
  return out;
}

// "1, 3 (world ranks 5, 7)": ranks of the Comm, and of MPI_COMM_WORLD where they differ.
std::string rank_list(MPI_Comm comm, const std::vector<int>& ranks) {
  std::string text, world_text;
  std::vector<int> world(ranks.size(), MPI_UNDEFINED);
  MPI_Group mine = MPI_GROUP_NULL, all = MPI_GROUP_NULL;
  if (!ranks.empty() && MPI_Comm_group(comm, &mine) == MPI_SUCCESS &&
      MPI_Comm_group(MPI_COMM_WORLD, &all) == MPI_SUCCESS)
    MPI_Group_translate_ranks(mine, static_cast<int>(ranks.size()), ranks.data(), all, world.data());
  if (mine != MPI_GROUP_NULL) MPI_Group_free(&mine);
  if (all != MPI_GROUP_NULL) MPI_Group_free(&all);
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    text += (k ? ", " : "") + std::to_string(ranks[k]);
    world_text += (k ? ", " : "") + (world[k] == MPI_UNDEFINED ? std::string("?") : std::to_string(world[k]));
  }
  return world_text == text ? text : text + " (world ranks " + world_text + ")";
}

// The Error of a wait on `comm` that saw no message complete for `seconds`: the
// algorithm, this rank, where the run is, and the ranks whose messages are outstanding.
// (`from` and `to` may repeat ranks.)
Error stall_error(MPI_Comm comm, std::string_view algorithm, std::string_view where, std::vector<int> from,
                  std::vector<int> to, double seconds) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  const auto sorted_once = [](std::vector<int>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  sorted_once(from);
  sorted_once(to);
  std::vector<int> peers = from;
  peers.insert(peers.end(), to.begin(), to.end());
  sorted_once(peers);
  std::string text = std::string(algorithm) + ": rank " + rank_list(comm, {me}) + ": no message completed for " +
                     std::to_string(static_cast<long long>(seconds)) + " s (LIBCOMM_TIMEOUT) in " + std::string(where);
  if (!peers.empty()) {
    text += ": waiting for rank " + rank_list(comm, peers) + " (";
    if (!from.empty()) text += "messages from " + rank_list(comm, from);
    if (!to.empty()) text += std::string(from.empty() ? "" : "; ") + "sends to " + rank_list(comm, to);
    text += ")";
  }
  return Error(text + "; a peer has stopped or died, and the communicator's collectives cannot go on: end the job");
}

// The Error of a wait that timed out: which ranks' messages are still outstanding.
Error timeout_error(const PlanState& s, const std::vector<MPI_Request>& reqs, double seconds) {
  std::vector<int> from, to;  // (stall_error drops repeats)
  std::string where = "the MPI library's collective (every rank of the communicator takes part)";
  int me = 0;
  MPI_Comm_rank(s.channels[0], &me);
  if (s.program) {
    const StepProgram& p = *s.program;
    const std::vector<const Step*> steps = waited_steps(s, p);
    if (steps.size() == reqs.size()) {
      for (std::size_t k = 0; k < reqs.size(); ++k) {
        if (reqs[k] == MPI_REQUEST_NULL) continue;
        const Step& st = *steps[k];
        const auto comm_rank = [&](int peer) {
          return st.channel == 0 ? peer : p.channel_ranks[st.channel - 1][static_cast<std::size_t>(peer)];
        };
        if (st.kind != StepKind::Alltoall) {
          (st.kind == StepKind::Recv ? from : to).push_back(comm_rank(st.peer));
          continue;
        }
        const int members = st.channel == 0 ? p.nprocs : static_cast<int>(p.channel_ranks[st.channel - 1].size());
        for (int m = 0; m < members; ++m)  // every other member of the channel
          if (comm_rank(m) != me) from.push_back(comm_rank(m)), to.push_back(comm_rank(m));
      }
      where = s.prelude_pending ? "the exchange of the counts"
                                : "stage " + std::to_string(s.stage) + " of " + std::to_string(p.stages);
    }
  }
  return stall_error(s.channels[0], s.algorithm, where, from, to, seconds);
}

// MPI_Waitall with a deadline: false when `seconds` pass without any request completing
// (the others left as they are: completed ones are MPI_REQUEST_NULL).
bool wait_until_stalled(std::vector<MPI_Request>& reqs, double seconds) {
  std::vector<int> done(reqs.size());
  double last = MPI_Wtime();
  for (;;) {
    int n = 0;
    check_mpi(MPI_Testsome(static_cast<int>(reqs.size()), reqs.data(), &n, done.data(), MPI_STATUSES_IGNORE),
              "MPI_Testsome");
    if (n == MPI_UNDEFINED) return true;  // every request has completed
    const double now = MPI_Wtime();
    if (n > 0) last = now;
    else if (now - last > seconds) return false;
  }
}

// Waits for `reqs` (block) or tests them once; true when all have completed. With
// LIBCOMM_TIMEOUT a blocking wait that stalls ends the run and throws (timeout_error).
bool requests_done(PlanState& s, std::vector<MPI_Request>& reqs, bool block) {
  if (block && wait_timeout() > 0) {
    if (wait_until_stalled(reqs, wait_timeout())) return true;
    Error e = timeout_error(s, reqs, wait_timeout());
    s.active = false;  // (the requests stay posted: the job is to end)
    s.reqs.clear(), s.req_complete.clear(), s.waitset.clear();
    throw e;
  }
  if (block) {
    wait_all(static_cast<int>(reqs.size()), reqs.data());
    return true;
  }
  int done = 0;
  check_mpi(MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
  return done != 0;
}

// Progresses the run; with `block` until it completes. True when it has completed.
// `blocking_call` (run_blocking, which blocks): stages of one exchange use one blocking call.
bool progress(PlanState& s, bool block, bool blocking_call = false) {
  if (!s.active) return true;
  if (!s.program) {  // native: one request
    if (!requests_done(s, s.reqs, block)) return false;
    s.reqs.clear();
    s.active = false;
    return true;
  }
  const StepProgram& p = *s.program;
  while (s.stage < p.stages) {
    if (!s.stage_posted) {
      stage_mark(s, true);
      post_stage(s, p, blocking_call && wait_timeout() == 0);
      collect_due(s);  // (nothing due after a stage run at once)
    }
    if (!s.waitset.empty()) {
      if (!requests_done(s, s.waitset, block)) return false;
      s.waitset.clear();
    }
    stage_mark(s, false);
    ++s.stage;
    s.stage_posted = false;
  }
  require(s.reqs.empty(), [&] { return "executor: " + p.algorithm + ": rank " + std::to_string(p.rank) +
                              ": communication left after the last stage (a program error)"; });
  if (s.prelude_pending) {  // what the program is built from is here: build it and run it
    s.prelude_pending = false;
    s.recv = s.user_recv;
    s.tag_data = tags::program_tag(s.run_sequence, TagKind::Data);
    s.program = std::make_shared<const StepProgram>(s.build(s.gathered));
    s.own_scratch.resize(s.program->scratch_bytes);
    s.scratch = s.own_scratch.data();
    s.stage = 0;
    s.stage_posted = false;
    s.next_step = 0;
    return progress(s, block, blocking_call);
  }
  write_stage_trace(s, p);
  s.active = false;
  return true;
}

// Posts the first stage; `poll` then tests it once (the non-blocking forms: as much as can
// go out at once does).
void start(PlanState& s, const void* send, void* recv, std::byte* borrowed_scratch, bool poll) {
  require(!s.active, [&] { return "libcomm: " + s.algorithm +
                         ": the plan was started again before its previous run completed"; });
  wait_timeout();  // a malformed LIBCOMM_TIMEOUT is an error before anything is posted
  s.send = static_cast<const std::byte*>(send);
  s.recv = static_cast<std::byte*>(recv);
  s.reqs.clear();
  s.req_complete.clear();
  s.waitset.clear();
  s.active = true;
  if (!s.prelude && !s.program) {
    s.reqs.emplace_back(MPI_REQUEST_NULL);
    s.native_start(send, recv, s.reqs.data());
    return;
  }
  // (The sequence number is taken at start, as every rank starts its collectives in one
  // order; a deferred program uses it once built.)
  const std::uint64_t seq = (*s.sequence)++;
  s.scratch = borrowed_scratch ? borrowed_scratch : s.own_scratch.data();
  s.run_sequence = seq;
  s.tag_data = tags::program_tag(seq, TagKind::Data);
  s.tag_sync = tags::program_tag(seq, TagKind::Sync);
  if (s.prelude) {  // a deferred program: its prelude gathers what it is built from, first
    s.program = s.prelude;
    s.prelude_pending = true;
    s.user_recv = s.recv;
    s.recv = s.gathered.data();
    s.tag_data = tags::prelude_tag(seq);
  }
  s.stage = 0;
  s.stage_posted = false;
  s.next_step = 0;
  if (s.window) s.shared = s.window->base + (s.shared_runs++ % 2) * s.program->shared_bytes;
  if (poll) progress(s, false);
}

// A plan state's names, channel 0 and the Comm's call sequence.
std::shared_ptr<PlanState> new_plan(const Comm& comm, std::string algorithm, std::string reason, MPI_Comm channel) {
  auto s = std::make_shared<PlanState>();
  s->algorithm = std::move(algorithm);
  s->reason = std::move(reason);
  s->channels = {channel};
  s->sequence = comm.sequence_counter();
  return s;
}

}  // namespace

SharedWindow::SharedWindow(MPI_Comm comm, std::size_t bytes) : size(std::max<std::size_t>(2 * bytes, 1)) {
  int me = 0;
  check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  // The channel's first member creates the segment; the others learn its name (and its
  // errno, so that a failure is reported on every rank alike).
  struct {
    char name[48];
    int error;
  } made{};
  if (me == 0) {
    static std::atomic<unsigned> made_count{0};
    std::snprintf(made.name, sizeof made.name, "/libcomm-%ld-%u", static_cast<long>(getpid()),
                  made_count.fetch_add(1));
    const int fd = shm_open(made.name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) made.error = errno;
    if (fd >= 0) close(fd);
    if (made.error != 0 && fd >= 0) shm_unlink(made.name);
  }
  check_mpi(MPI_Bcast(&made, static_cast<int>(sizeof made), MPI_BYTE, 0, comm), "MPI_Bcast");
  int error = made.error;
  if (error == 0) {
    const int fd = shm_open(made.name, O_RDWR, 0);
    void* at = fd < 0 ? MAP_FAILED : mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED) error = errno;
    else base = static_cast<std::byte*>(at);
    if (fd >= 0) close(fd);
  }
  // Every member has mapped it (or failed): the name can go, the memory stays until the
  // last member unmaps it.
  int worst = error;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  if (me == 0 && made.error == 0) shm_unlink(made.name);
  if (worst != 0) {
    if (base != nullptr) munmap(base, size);
    base = nullptr;
    throw Error("shared window: rank " + std::to_string(me) + " of the node: cannot " +
                (made.error != 0 ? "create" : "map") + " a shared-memory segment of " + std::to_string(size) +
                " bytes (/dev/shm): " + std::strerror(worst));
  }
}

SharedWindow::~SharedWindow() {
  if (base != nullptr) munmap(base, size);
}

std::shared_ptr<PlanState> program_plan(const Comm& comm, StepProgram program, std::string reason,
                                        bool own_scratch, std::vector<MPI_Comm> channels,
                                        std::shared_ptr<const void> keep_alive) {
  require(channels.size() == program.channel_ranks.size(), [&] {
    return "executor: " + program.algorithm + ": rank " + std::to_string(comm.rank()) + ": the program uses " +
           std::to_string(program.channel_ranks.size()) + " sub-communicators, " + std::to_string(channels.size()) +
           " given";
  });
  auto s = new_plan(comm, program.algorithm, std::move(reason), comm.internal());
  s->channels.insert(s->channels.end(), channels.begin(), channels.end());
  for (MPI_Comm c : s->channels) {
    int n = 0;
    check_mpi(MPI_Comm_size(c, &n), "MPI_Comm_size");
    s->channel_sizes.push_back(static_cast<std::size_t>(n));
  }
  s->keep_alive = std::move(keep_alive);
  if (own_scratch) s->own_scratch.resize(program.scratch_bytes);
  if (program.shared_bytes > 0) {
    require(program.shared_channel != 0 && program.shared_channel < s->channels.size(), [&] {
      return "executor: " + program.algorithm + ": rank " + std::to_string(comm.rank()) +
             ": the shared window's channel " + std::to_string(program.shared_channel) + " does not exist";
    });
    s->window = std::make_shared<SharedWindow>(s->channels[program.shared_channel], program.shared_bytes);
  }
  if (sim::cold_copies_differ()) mark_cold_copies(program);
  s->program = std::make_shared<const StepProgram>(std::move(program));
  return s;
}

std::shared_ptr<PlanState> deferred_program_plan(const Comm& comm, std::string algorithm, std::string reason,
                                                 StepProgram prelude, std::size_t gathered_bytes,
                                                 std::function<StepProgram(std::span<const std::byte>)> build) {
  auto s = new_plan(comm, std::move(algorithm), std::move(reason), comm.internal());
  s->channel_sizes = {static_cast<std::size_t>(comm.size())};
  s->prelude = std::make_shared<const StepProgram>(std::move(prelude));
  s->gathered.resize(gathered_bytes);
  s->build = std::move(build);
  return s;
}

std::shared_ptr<PlanState> native_plan(
    const Comm& comm, std::string algorithm, std::string reason,
    std::function<void(const void*, void*, MPI_Request*)> start_fn) {
  auto s = new_plan(comm, std::move(algorithm), std::move(reason), comm.mpi());
  s->native_start = std::move(start_fn);
  return s;
}

void wait_all(int count, MPI_Request* requests) {
#ifdef LIBCOMM_SIMGRID
  for (int i = 0; i < count; ++i) check_mpi(MPI_Wait(&requests[i], MPI_STATUS_IGNORE), "MPI_Wait");
#else
  check_mpi(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE), "MPI_Waitall");
#endif
}

void run_agreement(MPI_Comm comm, std::string_view algorithm, std::string_view where, const char* name,
                   const std::function<int()>& blocking, const std::function<int(MPI_Request*)>& start) {
  const double limit = wait_timeout();
  if (limit <= 0) return check_mpi(blocking(), name);
  std::vector<MPI_Request> req(1, MPI_REQUEST_NULL);
  check_mpi(start(req.data()), name);
  if (wait_until_stalled(req, limit)) return;
  int me = 0, p = 1;  // (every other rank takes part: any may be the one that stopped)
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  std::vector<int> others;
  for (int r = 0; r < p; ++r)
    if (r != me) others.push_back(r);
  throw stall_error(comm, algorithm, where, others, others, limit);
}

void ProbedMessages::send(const std::byte* data, std::size_t bytes, int to, int tag, PostedSends& posted) const {
  const MpiBytes n(bytes);
  posted.reqs.push_back(MPI_REQUEST_NULL);
  posted.to.push_back(to);
  check_mpi(MPI_Isend(data, n.count(), n.type(), to, tag, comm_, &posted.reqs.back()), "MPI_Isend");
}

void ProbedMessages::wait(PostedSends& posted) const {
  if (const double limit = wait_timeout(); limit <= 0) {
    wait_all(static_cast<int>(posted.reqs.size()), posted.reqs.data());
  } else if (!wait_until_stalled(posted.reqs, limit)) {
    std::vector<int> to;
    for (std::size_t k = 0; k < posted.reqs.size(); ++k)
      if (posted.reqs[k] != MPI_REQUEST_NULL) to.push_back(posted.to[k]);
    throw stall_error(comm_, algorithm_, where(), {}, to, limit);
  }
  posted.reqs.clear();
  posted.to.clear();
}

// A matched probe (MPI_Mprobe + MPI_Mrecv) learns the length and receives exactly the message
// it saw; with LIBCOMM_TIMEOUT, MPI_Improbe polled until the deadline. SimGrid's SMPI
// (3.32) implements neither, and its blocking MPI_Probe is a polling loop that injects
// simulated time at each turn (distorting the timings, and slow at 100 ranks). So in a
// SimGrid build (no timeout there) the message is received into kSimulatedReceiveCap bytes
// (placed, never touched beyond the message) with the same source (or any) and tag, then
// cut to its length. Equivalent here: one thread per rank, and MPI's non-overtaking order
// makes the receive take the very message a probe would have seen.
#ifdef LIBCOMM_SIMGRID
constexpr int kSimulatedReceiveCap = 1 << 28;
int ProbedMessages::receive(int from, int tag, const std::function<std::byte*(std::size_t)>& place,
                            std::span<const int>) const {
  MPI_Status got;
  const int rc = MPI_Recv(place(kSimulatedReceiveCap), kSimulatedReceiveCap, MPI_BYTE, from, tag, comm_, &got);
  if (rc != MPI_SUCCESS)
    throw Error(algorithm_ + ": a message from rank " + std::to_string(from) +
                " exceeds the SimGrid build's receive cap of " + std::to_string(kSimulatedReceiveCap) +
                " bytes (kSimulatedReceiveCap)");
  int n = 0;
  check_mpi(MPI_Get_count(&got, MPI_BYTE, &n), "MPI_Get_count");
  place(static_cast<std::size_t>(n));
  return got.MPI_SOURCE;
}
#else
int ProbedMessages::receive(int from, int tag, const std::function<std::byte*(std::size_t)>& place,
                            std::span<const int> expected) const {
  MPI_Message msg = MPI_MESSAGE_NULL;
  MPI_Status status{};
  const double limit = wait_timeout();
  if (limit > 0) {
    int found = 0;
    for (const double since = MPI_Wtime(); !found;) {
      check_mpi(MPI_Improbe(from, tag, comm_, &found, &msg, &status), "MPI_Improbe");
      if (!found && MPI_Wtime() - since > limit)
        throw stall_error(comm_, algorithm_, where(), {expected.begin(), expected.end()}, {}, limit);
    }
  } else {
    check_mpi(MPI_Mprobe(from, tag, comm_, &msg, &status), "MPI_Mprobe");
  }
  MPI_Count n = 0;
  check_mpi(MPI_Get_elements_x(&status, MPI_BYTE, &n), "MPI_Get_elements_x");
  const MpiBytes t(static_cast<std::size_t>(n));
  if (limit > 0) {
    // The probe saw the message's start; the rest may never come (its sender stopped).
    std::vector<MPI_Request> req(1, MPI_REQUEST_NULL);
    check_mpi(MPI_Imrecv(place(static_cast<std::size_t>(n)), t.count(), t.type(), &msg, req.data()), "MPI_Imrecv");
    if (!wait_until_stalled(req, limit)) throw stall_error(comm_, algorithm_, where(), {status.MPI_SOURCE}, {}, limit);
  } else {
    check_mpi(MPI_Mrecv(place(static_cast<std::size_t>(n)), t.count(), t.type(), &msg, MPI_STATUS_IGNORE),
              "MPI_Mrecv");
  }
  return status.MPI_SOURCE;
}
#endif

void run_blocking(PlanState& s, const void* send, void* recv, const Comm& comm) {
  // (No scratch, no trip through the Comm's lock: most programs of whole blocks need none.)
  const std::size_t scratch = s.program ? s.program->scratch_bytes : 0;
  start(s, send, recv, scratch ? comm.scratch(0, scratch) : nullptr, false);
  progress(s, true, true);
}

void timing_barrier(const Comm& comm) {
  const int p = comm.size(), me = comm.rank();
  std::byte none{};
  run_cached(comm, kTimingBarrier, {}, &none, &none, [&] {
    ProgramBuilder pb("timing_barrier", me, p);
    pb.barrier(0);
    pb.set_extents(0, 0);
    return program_plan(comm, std::move(pb).program(), "barrier", false);
  });
}

}  // namespace detail

bool Request::test() {
  return !state_ || detail::progress(*state_, false);
}
void Request::wait() {
  if (state_) detail::progress(*state_, true);
}
bool Request::active() const {
  return state_ && state_->active;
}
std::string_view Request::algorithm() const {
  return state_ ? std::string_view(state_->algorithm) : std::string_view();
}
const std::string& Request::reason() const {
  static const std::string none;
  return state_ ? state_->reason : none;
}
const StepProgram* Request::program() const {
  return state_ ? state_->program.get() : nullptr;
}

Plan plan_program(const Comm& comm, StepProgram program) {
  require(
      program.rank == comm.rank() && program.nprocs == comm.size() && program.channel_ranks.empty(),
      "plan_program: rank " + std::to_string(comm.rank()) + ": the program is for rank " +
          std::to_string(program.rank) + " of " + std::to_string(program.nprocs) +
          (program.channel_ranks.empty() ? "" : " and uses sub-communicators"));
  return Plan(detail::program_plan(comm, std::move(program), "step program", true));
}

void Plan::start(const void* send, void* recv) {
  require(state_ != nullptr, "Plan::start: the plan is empty (default-constructed)");
  detail::start(*state_, send, recv, nullptr, true);
}

}  // namespace libcomm
