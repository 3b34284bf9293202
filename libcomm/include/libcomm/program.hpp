// Step programs: one rank's part of a collective algorithm as data (DESIGN.md, core idea 1).
//
// A builder per algorithm turns (algorithm, sizes, P, rank) into a StepProgram: sends and
// receives of byte ranges of the user's send buffer, receive buffer or the plan's scratch
// area, and local copy / reduce steps, each tagged with the stage it starts in. Stages
// are the dependencies: a stage begins when every communication step that must be complete
// by the end of the previous stages has completed. Rounds of a schedule, the pairwise
// synchronisations of the switch-tree algorithm and the stages of Bruck or the ring
// reduction are all written this way. Nothing but the one executor (runtime/executor.cpp)
// touches MPI for a program, and verify_programs() follows every byte through the programs
// of all P ranks without MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "libcomm/cost_params.hpp"
#include "libcomm/node_map.hpp"
#include "libcomm/schedule.hpp"

namespace libcomm {

enum class ElemType;
enum class ReduceOp;

// Where a byte range lives. Const is the program's own read-only data
// (StepProgram::constants), for what an algorithm sends besides the user's data (the moved
// indices of paper 004's index motion). Shared is the node's shared-memory window (a POSIX
// shared-memory segment of the channel StepProgram::shared_channel): every member of that
// channel addresses the same bytes at the same offsets, so one process writes what another
// reads, ordered by messages between them (a node barrier). How paper 002's SA / RD / leader
// aggregate on a node (s. 5) without intra-node messages.
enum class Area : std::uint8_t { Send, Recv, Scratch, Const, Shared };

struct ByteRange {
  Area area = Area::Send;
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

enum class StepKind : std::uint8_t {
  Send,    // `from` to `peer`
  Recv,    // from `peer` into `to`
  Copy,    // `from` -> `to` (same length)
  Reduce,  // to[k] = from[k] op to[k], element-wise (StepProgram::elem, op)
  Check,   // `to` must equal `from` byte for byte, else the run fails (a corrupt message)
  // The MPI library's all-to-all over the channel's communicator: `from` holds one block
  // per member (from.bytes / members each) and `to` receives one from each, in member
  // order. Posted and completed like a message (MPI_Ialltoall; a blocking run's stage of
  // this one step calls MPI_Alltoall). How the hierarchical schemes of paper 002 keep the
  // library's own intra-node exchange, and how any scheme runs native inside.
  Alltoall,
};

namespace detail {
// A step its rank runs alone, without a message.
inline bool is_local(StepKind k) { return k == StepKind::Copy || k == StepKind::Reduce || k == StepKind::Check; }
}  // namespace detail

// Message tags of a step program (the tag registry: runtime/tags.hpp adds a per-call sequence
// number so that several collectives can be in flight on one communicator).
enum class TagKind : std::uint8_t { Data = 0, Sync = 1 };

struct Step {
  StepKind kind = StepKind::Copy;
  std::uint32_t stage = 0;     // the stage in which the step is posted (or run)
  std::uint32_t complete = 0;  // Send/Recv: must have completed when this stage ends
  int peer = -1;               // Send/Recv: rank in the channel's communicator
  std::uint8_t channel = 0;    // communicator: 0 is the Comm's own (internal duplicate)
  TagKind tag = TagKind::Data;
  // Copy/Reduce: run after the stage's sends and receives are posted (overlapping them)
  // instead of before.
  bool overlap = false;
  // Send: synchronous (MPI_Issend): it completes only once the receiver has matched it,
  // never from a copy into the library's buffer. For a schedule whose synchronisation
  // messages must follow the message itself off the network (tree_scheduled: an eager
  // send completes at once, and the next sender on the link would start beside it).
  bool synchronous = false;
  // Copy: its source was written by the network (a receive), not by this core, so it is not
  // in this core's cache. The copy model charges it at the cold rate (libcomm/sim.hpp): paper
  // 002, s. 3, Fig. 5, receive-side distribution costs more than send-side aggregation.
  // A builder marks the copies out of what another process received into the shared
  // window; in a simulation that charges cold copies the executor marks those out of the
  // program's own receives.
  bool cold = false;
  ByteRange from, to;
};

// Within a stage the executor runs, in this order: the local steps without `overlap` (in
// program order), posts every receive, then every send (program order), runs the local
// steps with `overlap`, then waits for the communication steps whose `complete` is this
// stage. A program whose sends read what its receives write in the same stage is wrong;
// verify_programs() reports it.
struct StepProgram {
  std::string algorithm;
  int rank = 0;
  int nprocs = 1;
  std::uint32_t stages = 0;
  std::size_t send_bytes = 0, recv_bytes = 0, scratch_bytes = 0;  // extents the steps use
  // For Reduce steps.
  ElemType elem{};
  ReduceOp op{};
  std::size_t elem_bytes = 1;
  std::vector<std::byte> constants;  // Area::Const
  // Channels beyond 0: the ranks (in channel 0) of each sub-communicator's members, in
  // that communicator's rank order, and its name, the same on every member (a rank's
  // channel numbers are its own: channel 2 of one rank may be channel 3 of another).
  // channel_ranks[c - 1] and channel_names[c - 1] for channel c.
  std::vector<std::vector<int>> channel_ranks;
  std::vector<std::string> channel_names;
  // Area::Shared: `shared_bytes` of one window per member set of channel `shared_channel`
  // (never 0: channel 0 is the whole communicator, which need not share memory), the same
  // size on every member. The executor keeps two and alternates them between runs, so a run
  // never writes what the previous run's slower processes may still read.
  std::uint8_t shared_channel = 0;
  std::size_t shared_bytes = 0;
  std::vector<Step> steps;  // sorted by stage

  std::size_t messages_sent() const;
  std::size_t bytes_sent() const;
  std::string to_string() const;  // one line per step, for tests and schedgen-like dumps
};

// Appends steps in any order; program() sorts them by stage (stable) and fills `stages`.
class ProgramBuilder {
 public:
  ProgramBuilder(std::string algorithm, int rank, int nprocs);
  void send(std::uint32_t stage, int peer, ByteRange from, std::uint32_t complete,
            TagKind tag = TagKind::Data, std::uint8_t channel = 0);
  void recv(std::uint32_t stage, int peer, ByteRange to, std::uint32_t complete,
            TagKind tag = TagKind::Data, std::uint8_t channel = 0);
  // A data send that completes only once the receiver has matched it (Step::synchronous).
  void send_synchronous(std::uint32_t stage, int peer, ByteRange from, std::uint32_t complete);
  // A data message of zero bytes is not posted at all (sender and receiver compute the
  // same length, so both skip it); Sync messages always are.
  // Same-stage send + receive that complete in that stage (one blocking exchange).
  void exchange(std::uint32_t stage, int to, ByteRange out, int from, ByteRange in,
                std::uint8_t channel = 0);
  void copy(std::uint32_t stage, ByteRange from, ByteRange to, bool overlap = false);
  // A copy out of data another process received (Step::cold).
  void copy_cold(std::uint32_t stage, ByteRange from, ByteRange to);
  void reduce(std::uint32_t stage, ByteRange from, ByteRange to);
  void check(std::uint32_t stage, ByteRange expected, ByteRange got);
  // Appends `bytes` of read-only program data; returns its range (Area::Const).
  ByteRange constant(const void* data, std::size_t bytes);
  // A barrier of all P ranks from zero-byte messages, one stage a round from `stage`: where
  // P is a power of two, recursive doubling (round k with rank XOR 2^k, so that where nodes
  // hold aligned blocks of ranks every rank's round k crosses nodes or none does), else
  // dissemination (send to rank + 2^k, receive from rank - 2^k); returns the first
  // stage after it. Point to point with the program's own tag, so that it never matches a
  // barrier of another collective in flight (an MPI_Ibarrier would, in posting order).
  // On a channel: the same among its members (a node barrier on the node's channel).
  std::uint32_t barrier(std::uint32_t stage, std::uint8_t channel = 0);
  // The program uses `bytes` of shared window (Area::Shared) on `channel` (its members
  // must compute the same size and layout).
  void set_shared(std::uint8_t channel, std::size_t bytes);
  void set_reduction(ElemType elem, ReduceOp op, std::size_t elem_bytes);
  void set_extents(std::size_t send_bytes, std::size_t recv_bytes);
  // Reserves `bytes` of scratch and returns its offset.
  std::size_t scratch(std::size_t bytes);
  int add_channel(std::string name, std::vector<int> ranks);  // returns the channel number
  // An MPI library all-to-all of `from` into `to` over `channel` (StepKind::Alltoall).
  void alltoall(std::uint32_t stage, std::uint8_t channel, ByteRange from, ByteRange to, std::uint32_t complete);
  // Appends `inner`, a program of the ranks of `channel` (its rank = this rank's index
  // there), shifted by `stage` stages, its messages on `channel`, its send and receive
  // areas mapped to `send` and `recv` and its scratch to new scratch. Returns the first
  // stage after it.
  std::uint32_t embed(const StepProgram& inner, std::uint32_t stage, std::uint8_t channel, ByteRange send,
                      ByteRange recv);
  int rank() const { return p_.rank; }
  int nprocs() const { return p_.nprocs; }
  StepProgram program() &&;

 private:
  void add_message(StepKind kind, std::uint32_t stage, int peer, ByteRange range, std::uint32_t complete,
                   TagKind tag, std::uint8_t channel);
  StepProgram p_;
};

// Marks the copies that read what one of the program's own receives (or library
// all-to-alls) wrote in an earlier stage as cold (Step::cold). The executor does it for a
// simulation whose copy model charges cold copies at a rate of their own.
void mark_cold_copies(StepProgram& program);

// ---- Symbolic verification (no MPI) -----------------------------------------------------

// What a result byte must hold. For a personalised or broadcast operation: byte `offset`
// of rank `rank`'s send buffer. For a reduction: the combination over every rank of the
// element at `offset` of each rank's send buffer (rank = -1).
struct ByteOrigin {
  int rank = 0;
  std::size_t offset = 0;
};
using ExpectedResult = std::function<ByteOrigin(int rank, std::size_t recv_offset)>;

// Runs the programs of all P ranks on symbols: every send buffer byte is its own symbol,
// messages match in posting order per (sender, receiver, channel, tag) as MPI matches
// them, and stages advance as the executor advances them. Reports: a step outside its
// area, a send and its receive of different lengths, a read of a receive or scratch byte
// before it was written, a reduction that combines a contribution twice or elements of
// different offsets, ranks that can never finish (a deadlock), messages never received,
// and every result byte (recv[0, result_bytes(rank))) that differs from `expected`.
VerifyResult verify_programs(const std::vector<StepProgram>& programs,
                             const std::function<std::size_t(int rank)>& result_bytes,
                             const ExpectedResult& expected);

// ---- Timing without MPI ------------------------------------------------------------------

// The time the programs of all P ranks take on the cost model (libcomm/cost_params.hpp):
// stages as the executor runs them, local steps at `copy` / `gamma` per byte, the k-th send
// of a stage posted k x `overhead` later, each message through its resources (the nodes'
// links, or a node's memory channel) one at a time in posting order, arriving alpha after.
// The cost formulas of docs/algorithms.md are checked against it (unit test CostFormulas.*).
// Library all-to-all steps are not simulated (Error).
double simulate_program_time(const std::vector<StepProgram>& programs, const NodeMap& nodes, const CostParams& c);

}  // namespace libcomm
