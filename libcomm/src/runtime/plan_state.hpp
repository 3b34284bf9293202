// Internal: what a Plan / Request holds, and how the operations make one.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "libcomm/buffer.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"

namespace libcomm::detail {

// A node's shared-memory window (Area::Shared): a POSIX shared-memory segment of twice the
// program's shared_bytes (alternate runs use alternate halves), created by the channel's
// first member and mapped by every member at `base`. Making it is collective over the
// channel (every rank builds the plan at the same call); freeing it is local (munmap), so a
// plan may die on each rank at its own time (a persistent request freed, a request plan
// dropped) where an MPI window's collective MPI_Win_free would wait for the others.
struct SharedWindow {
  std::size_t size = 0;
  std::byte* base = nullptr;
  SharedWindow(MPI_Comm comm, std::size_t bytes);
  SharedWindow(const SharedWindow&) = delete;
  SharedWindow& operator=(const SharedWindow&) = delete;
  ~SharedWindow();
};

struct PlanState {
  std::string algorithm, reason;
  // The step program of this rank, or null for a native plan (native_start posts the MPI
  // library's non-blocking collective into its one request).
  std::shared_ptr<const StepProgram> program;
  std::function<void(const void* send, void* recv, MPI_Request* req)> native_start;
  // A request whose program needs data from every rank first (the staged alltoallv's
  // count matrix): the step program `prelude` gathers it into `gathered` (the prelude's
  // receive area; its messages carry the prelude's tag), then `build` makes the program
  // from it, run like any other. Progressed by test / wait.
  std::shared_ptr<const StepProgram> prelude;
  std::vector<std::byte> gathered;
  std::function<StepProgram(std::span<const std::byte> gathered)> build;
  bool prelude_pending = false;
  std::byte* user_recv = nullptr;  // the run's receive buffer while the prelude runs
  // Channel c's communicator (0: the Comm's internal duplicate) and its size.
  std::vector<MPI_Comm> channels;
  std::vector<std::size_t> channel_sizes;
  // Keeps what the channels and program refer to alive (sub-communicators).
  std::shared_ptr<const void> keep_alive;
  // The program's shared window (null without Area::Shared); destroyed before keep_alive's
  // communicators. `shared` is the half this run uses.
  std::shared_ptr<SharedWindow> window;
  std::byte* shared = nullptr;
  std::uint64_t shared_runs = 0;
  // The Comm's sequence counter (tags.hpp); shared with every copy of the Comm.
  std::shared_ptr<std::uint64_t> sequence;
  // Scratch owned by the plan (non-blocking and persistent plans); the plans the blocking
  // calls keep borrow the Comm's scratch slot 0 instead (one blocking call at a time).
  ByteBuffer own_scratch;
  // The block sizes a cached plan of unequal blocks was built for (empty otherwise): its
  // PlanKey holds only their hash.
  std::vector<std::size_t> shape;

  // One run in flight.
  bool active = false;
  const std::byte* send = nullptr;
  std::byte* recv = nullptr;
  std::byte* scratch = nullptr;
  std::uint32_t stage = 0;
  bool stage_posted = false;
  std::size_t next_step = 0;
  int tag_data = 0, tag_sync = 0;
  std::uint64_t run_sequence = 0;  // the tags' sequence number of this run
  std::vector<MPI_Request> reqs;
  std::vector<std::uint32_t> req_complete;
  std::vector<MPI_Request> waitset;
  // LIBCOMM_TRACE_STAGES (executor.cpp): this run's stage times, {posted, done} per stage.
  std::vector<std::pair<double, double>> stage_times;
  std::uint64_t traced_runs = 0;
};

// A plan state for `program` on `comm` (channel 0 = comm.internal()); with `own_scratch`
// it allocates the program's scratch memory. For a program on sub-communicators,
// channels[c - 1] is the communicator of the program's channel c (its members in
// program.channel_ranks[c - 1]); `keep_alive` owns them.
std::shared_ptr<PlanState> program_plan(const Comm& comm, StepProgram program, std::string reason,
                                        bool own_scratch, std::vector<MPI_Comm> channels = {},
                                        std::shared_ptr<const void> keep_alive = nullptr);
// A plan state that runs the MPI library's collective.
std::shared_ptr<PlanState> native_plan(const Comm& comm, std::string algorithm, std::string reason,
                                       std::function<void(const void*, void*, MPI_Request*)> start);

// A request whose program is built from what `prelude` gathers (`gathered_bytes`).
std::shared_ptr<PlanState> deferred_program_plan(const Comm& comm, std::string algorithm, std::string reason,
                                                 StepProgram prelude, std::size_t gathered_bytes,
                                                 std::function<StepProgram(std::span<const std::byte>)> build);

// Starts a run and drives it to completion (the blocking calls), with scratch from the
// Comm's slot 0.
void run_blocking(PlanState& s, const void* send, void* recv, const Comm& comm);

// The barrier online times its candidates from: ProgramBuilder::barrier over all ranks.
// MPI_Barrier may be a tree whose root leaves rounds before its leaves (SMPI's Open MPI
// barrier at 256 ranks let them go 2.3 ms apart on tree16x16, and online credited the early
// ranks' wait to the algorithms that made them wait). Where P is not a power of two, its
// dissemination rounds cross nodes for some ranks and not others, which lets them go a few
// inter-node latencies apart (with P = 16 on 2 nodes of 8 it had, before the power-of-two
// case exchanged with rank XOR 2^k, and online measured the hierarchical alltoalls at 8 B
// twice their time). Its plan is kept in the Comm under kTimingBarrier while a site
// measures: a measuring call builds nothing.
inline constexpr PlanKey kTimingBarrier{"timing_barrier", 0, 0, 0};
void timing_barrier(const Comm& comm);

// FNV-1a of a list of block sizes (the PlanKey of unequal blocks).
inline std::uint64_t hash_sizes(std::span<const std::size_t> sizes) {
  std::uint64_t h = 1469598103934665603ULL;
  for (auto c : sizes) h = (h ^ (static_cast<std::uint64_t>(c) + 0x9e3779b97f4a7c15ULL)) * 1099511628211ULL;
  return h;
}

// The same hash of `n` sizes all equal to `size` (a regular call, without the vector).
inline std::uint64_t hash_repeated(std::size_t size, std::size_t n) {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t k = 0; k < n; ++k) h = (h ^ (static_cast<std::uint64_t>(size) + 0x9e3779b97f4a7c15ULL)) * 1099511628211ULL;
  return h;
}

// The blocking calls: runs the plan kept in comm under `key`, built by `build` when there
// is none or when its shape (unequal block sizes, hashed into the key) is not `shape`.
template <class Build>
void run_cached(const Comm& comm, const PlanKey& key, std::span<const std::size_t> shape, const void* send,
                void* recv, Build&& build) {
  PlanState* plan = comm.cached_plan(key);
  if (plan && !std::equal(shape.begin(), shape.end(), plan->shape.begin(), plan->shape.end())) {
    const std::shared_ptr<PlanState> fresh = build();  // a hash collision: run this one uncached
    run_blocking(*fresh, send, recv, comm);
    return;
  }
  if (!plan) {
    std::shared_ptr<PlanState> fresh = build();
    fresh->shape.assign(shape.begin(), shape.end());
    plan = fresh.get();
    comm.store_plan(key, std::move(fresh));  // (kept: store_plan drops only older plans)
  }
  run_blocking(*plan, send, recv, comm);
}

// The non-blocking calls: the plan kept in comm under `key` when no request holds it any
// more, else a new one from `build` (own scratch), kept for the next call. A repeated
// MPI_Ialltoall then costs no step-program build, as a repeated blocking call does not.
// Whether the kept plan is idle is this rank's own state (another rank may still hold its
// request), so making a plan here must involve no other rank: the shared-window algorithms,
// whose plans are made collectively, never reach here (Driver::for_request).
template <class Build>
std::shared_ptr<PlanState> request_plan(const Comm& comm, const PlanKey& key, std::span<const std::size_t> shape,
                                        Build&& build) {
  if (auto kept = comm.idle_request_plan(key);
      kept && std::equal(shape.begin(), shape.end(), kept->shape.begin(), kept->shape.end()))
    return kept;
  std::shared_ptr<PlanState> fresh = build();
  fresh->shape.assign(shape.begin(), shape.end());
  comm.store_request_plan(key, fresh);
  return fresh;
}

}  // namespace libcomm::detail
