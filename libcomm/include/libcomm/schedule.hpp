// Schedules are data (DESIGN.md, core idea 1).
//
// A Schedule is a sequence of rounds; each round is a set of transfers (src, dst, block):
// rank `src` sends block `block` to rank `dst`. For an all-to-all personalised exchange
// (AAPC) the block of a transfer is the message m_{src,dst}, numbered src * P + dst. A
// transfer with src == dst is a local copy. Building a schedule is separate from running
// it: the same value is verified without MPI, executed by one executor, printed, priced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace libcomm {

struct Transfer {
  int src = 0;
  int dst = 0;
  std::int64_t block = 0;
  bool operator==(const Transfer&) const = default;
};

struct Round {
  std::vector<Transfer> transfers;
};

struct Schedule {
  std::string name;
  int nprocs = 0;
  // Ports of the communication model: how many messages (excluding local copies) one
  // rank may send and receive in one round. 1 is the single-ported model of paper 000;
  // schedules that post everything at once (linear, ring) declare nprocs.
  int ports = 1;
  std::vector<Round> rounds;

  std::size_t num_rounds() const { return rounds.size(); }
  std::size_t num_transfers() const;
  // One line per round: "round 3: 0->3 1->2 2->1 3->0".
  std::string to_string() const;
};

// Message number of m_{src,dst} in an AAPC schedule of P ranks.
inline std::int64_t aapc_block(int src, int dst, int nprocs) {
  return static_cast<std::int64_t>(src) * nprocs + dst;
}

struct VerifyResult {
  bool ok = true;
  std::vector<std::string> problems;  // empty when ok; the first kMostProblems found
  static constexpr std::size_t kMostProblems = 32;
  explicit operator bool() const { return ok; }
  std::string summary() const;
  // Marks the result failed, keeping `what` while fewer than kMostProblems are kept.
  void fail(std::string what);
  bool full() const { return problems.size() >= kMostProblems; }
};

// Checks an AAPC schedule without MPI: ranks in range; every ordered pair (src, dst),
// self pairs included, appears exactly once with block aapc_block(src, dst, P); in every
// round each rank sends at most `ports` and receives at most `ports` non-local messages.
VerifyResult verify_aapc_schedule(const Schedule& s);

// How the rounds of a schedule of whole blocks run as a step program (libcomm/program.hpp).
enum class ScheduleRun {
  // One stage per round: post the round's receives and sends, wait for them, then the next
  // round. Single-ported schedules become one send-receive per round: the tightly coupled
  // form of pairwise exchange and of the factor algorithm (paper 000, Fig. 1).
  PerRound,
  // Everything in one stage: every receive, then every send in schedule order, the local
  // copies while the network works, one wait (LAM's linear routine, MPICH's medium ring).
  AllAtOnce,
};

struct StepProgram;

// Rank `rank`'s part of an AAPC schedule with blocks of `block_bytes`: transfer (src, dst)
// moves send[dst * b, +b) of rank src to recv[src * b, +b) of rank dst; a transfer with
// src == dst is a local copy.
StepProgram schedule_program(const Schedule& s, int rank, std::size_t block_bytes, ScheduleRun run);

}  // namespace libcomm
