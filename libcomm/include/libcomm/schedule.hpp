// Schedules are data (DESIGN.md, core idea 1).
//
// A Schedule is a sequence of rounds; each round is a set of transfers (src, dst, block):
// rank `src` sends block `block` to rank `dst`. For an all-to-all personalised exchange
// (AAPC) the block of a transfer is the message m_{src,dst}, numbered src * P + dst. A
// transfer with src == dst is a local copy. Building a schedule is separate from running
// it: the same value is verified without MPI, executed by one executor, printed, priced.
#pragma once

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
  std::vector<std::string> problems;  // empty when ok; capped at a few dozen entries
  explicit operator bool() const { return ok; }
  std::string summary() const;
};

// Checks an AAPC schedule without MPI: ranks in range; every ordered pair (src, dst),
// self pairs included, appears exactly once with block aapc_block(src, dst, P); in every
// round each rank sends at most `ports` and receives at most `ports` non-local messages.
VerifyResult verify_aapc_schedule(const Schedule& s);

// The part of a schedule one rank executes: per round, whom it sends to and receives from.
struct RankStep {
  std::vector<Transfer> sends;     // transfers with src == rank, dst != rank
  std::vector<Transfer> recvs;     // transfers with dst == rank, src != rank
  std::vector<Transfer> local;     // src == dst == rank
};

class RankPlan {
 public:
  RankPlan() = default;
  RankPlan(const Schedule& s, int rank);
  int rank() const { return rank_; }
  int nprocs() const { return nprocs_; }
  const std::vector<RankStep>& steps() const { return steps_; }
  bool single_ported() const { return single_ported_; }

 private:
  int rank_ = 0;
  int nprocs_ = 0;
  bool single_ported_ = true;
  std::vector<RankStep> steps_;
};

}  // namespace libcomm
