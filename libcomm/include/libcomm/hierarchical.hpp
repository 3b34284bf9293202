// Hierarchical all-to-all for clusters of SMP / multi-core nodes.
//
//   clustered_factor  paper 000, section 3, Fig. 2 (ClusteredAllToAll), Theorem 1
//   leader / send_aggregate / recv_distribute   paper 002, section 5
//
// The algorithms themselves are reached through libcomm::alltoall (AlltoallAlgo::
// ClusteredFactor, ...); this header exposes the schedule so it can be checked without MPI.
#pragma once

#include <cstdint>
#include <vector>

#include "libcomm/node_map.hpp"
#include "libcomm/program.hpp"
#include "libcomm/schedule.hpp"

namespace libcomm {

// The clustered factor algorithm as data. Each Round of `schedule` is one *step* of
// Fig. 2: in a step each paired node pair (U, V) moves one (u, v) exchange, or, when a
// node is paired with itself, one unidirectional send u -> v (a local copy when u == v).
struct ClusteredFactorSchedule {
  Schedule schedule;
  int phases = 0;
  std::vector<int> rounds_per_phase;  // |A| of each phase (rounds that ended up empty removed)
  std::vector<int> phase_of_step;     // per schedule round (-1: the round of local copies)
  std::vector<int> round_of_step;     // per schedule round: global round number (-1: copies)
  int steps = 0;                      // schedule rounds other than the round of local copies
};

struct ClusteredFactorOptions {
  // The paper's formulation includes the self-message m_uu among the messages a process
  // sends, and Theorem 1's proof counts it as a step ("our algorithm performs pn steps");
  // with copies_take_a_step the copy u -> u occupies a step of its self-paired round and
  // the step count equals max_U size(U) * P for every node map. Without it (default, the
  // executed form) all local copies are done in one round before the first step, and a
  // self-paired node only spends steps on messages between different processes; this is
  // how Fig. 3's caption counts (sizes 1,2,3: 15 steps, not 18).
  bool copies_take_a_step = false;
  // Paper 000, section 4: "doing more (intra-node) work in rounds where a node is paired
  // with itself". In every step of such a round, processes of the node that are idle
  // also send intra-node messages that later phases would otherwise send.
  bool intra_fill = false;
  // How the steps run (the schedule is the same either way). Without it every process
  // starts its next step as soon as its own partner is there, so several processes of a
  // node can be in exchanges with other nodes at once (steps of different rounds overlap).
  // With it the execution keeps the paper's machine model, "at most one processor per node
  // can communicate with a processor on another node at a time": a node's exchanges with
  // other nodes run one after the other in step order, each process handing the node's
  // port to the next one with a zero-byte message inside the node once its exchange has
  // completed. At every moment the exchanges between nodes in flight form a matching of
  // the nodes. Steps inside a node (self-paired rounds) are not held back.
  bool one_matching_per_step = false;
};

ClusteredFactorSchedule clustered_factor_schedule(const NodeMap& nodes,
                                                  const ClusteredFactorOptions& opts = {});

// One rank's step program of the clustered factor algorithm: one stage per step it takes
// part in (ScheduleRun::PerRound), and with `one_matching_per_step` the hand-overs of the
// node's port before and after its steps with other nodes.
StepProgram clustered_factor_program(const NodeMap& nodes, int rank, std::size_t block_bytes,
                                     const ClusteredFactorOptions& opts = {});

// Theorem 1's step count: the largest number of messages the processes of one node send,
// self-messages included as in the paper's formulation: max_U size(U) * P. (Leaving the
// self-messages out gives max_U size(U) * (P - 1), a lower bound for any schedule in the
// single-port node model where copies are free.)
std::int64_t clustered_factor_theorem_steps(const NodeMap& nodes);

// The single-port node model: in every round, at most one process of each node sends to
// another node and at most one receives from another node.
VerifyResult verify_node_single_port(const Schedule& s, const NodeMap& nodes);

}  // namespace libcomm
