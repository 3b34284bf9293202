// Contention-free all-to-all on an Ethernet switch tree (paper 003, sections 4 and 5).
//
//   schedule_tree_aapc      root identification (4.1), extended ring global scheduling
//                           (4.2), global and local message assignment with the broadcast
//                           and rotate patterns, the six steps of Fig. 4 (4.3): every
//                           message of AAPC in |M0| x (|M| - |M0|) contention-free phases
//   verify_contention_free  no two messages of a round share a directed edge of the tree
//   plan_synchronisation    section 5: a synchronisation message from the earlier sender
//                           to the later one for every pair of contending messages in
//                           different phases, redundant ones removed (transitive reduction)
//   tree_program            one rank's part as a step program, with those pairwise
//                           synchronisations, a barrier per phase, or no separation at all
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "libcomm/schedule.hpp"
#include "libcomm/topology.hpp"

namespace libcomm {

// The phase of every message, on machines (not ranks).
struct TreeAapcSchedule {
  int num_machines = 0;
  int root = -1;                              // node id of the root switch (4.1)
  std::vector<int> subtree_node;              // node next to the root for t0, t1, ...
  std::vector<std::vector<int>> subtrees;     // t_{i,x}: machine numbers, t0 the largest
  std::int64_t num_phases = 0;                // |M0| x (|M| - |M0|)
  // First phase of the |Mi| x |Mj| phases of t_i -> t_j (4.2); -1 for i == j. Computed
  // from the subtree sizes (a k x k table is 134 MB for 4096 machines on one switch).
  std::int64_t group_start(std::size_t i, std::size_t j) const;
  // subtree_prefix[i] = |M0| + ... + |M(i-1)| (k + 1 entries).
  std::vector<std::int64_t> subtree_prefix;
  // phase_of[src * M + dst] for machines src != dst; -1 on the diagonal.
  std::vector<std::int32_t> phase_of;
  // subtree_of[m]: the subtree (0 .. k-1) of machine m; index_in_subtree[m]: its x in t_{i,x}.
  std::vector<int> subtree_of, index_in_subtree;

  std::int32_t phase(int src, int dst) const {
    return phase_of[static_cast<std::size_t>(src) * static_cast<std::size_t>(num_machines) + dst];
  }
  bool is_global(int src, int dst) const { return subtree_of[src] != subtree_of[dst]; }

  // The messages of every phase as (src, dst) machine pairs: messages[offset[p] ..
  // offset[p + 1]) are the messages of phase p, in source order.
  struct Phases {
    std::vector<std::int64_t> offset;
    std::vector<std::pair<int, int>> messages;
  };
  Phases phases() const;
};

// Schedules AAPC on the machines of `t` (section 4). Throws Error if the tree has fewer
// than 3 machines (Topology already refuses those). Internal consistency (every message
// placed exactly once by Fig. 4) is checked and reported as an Error.
TreeAapcSchedule schedule_tree_aapc(const Topology& t);

// The rank-level Schedule: round p holds the messages of phase p, rank r standing for
// machine t.machine_of_rank()[r]; every rank's local copy sits in round 0. Exactly
// num_phases rounds, ports = 1.
Schedule tree_rank_schedule(const TreeAapcSchedule& s, const Topology& t);

// How verify_contention_free looks at a round: by walking every message's path, or by
// comparing the vertical segments of the paths in DFS order (O(1) a message after a sort;
// contention_check.cpp). Automatic picks walking when paths average up to 3 links.
enum class ContentionCheck { Automatic, WalkPaths, Segments };

// True when no two messages of one round of `s` share a directed edge of `t` (ranks mapped
// to machines by t.machine_of_rank()); problems name the round, both messages and the edge.
VerifyResult verify_contention_free(const Schedule& s, const Topology& t,
                                    ContentionCheck how = ContentionCheck::Automatic);
// The same on the machine-level phases (no Schedule needed; used for large trees).
VerifyResult verify_contention_free(const TreeAapcSchedule& s, const Topology& t,
                                    ContentionCheck how = ContentionCheck::Automatic);

// Section 5. Messages are identified by (round, sender): one send per rank and round.
struct SyncMessage {
  int from = 0;         // rank that sends the synchronisation, after its message of round `after`
  int to = 0;           // rank that waits for it before its message of round `before`
  std::int32_t after = 0;
  std::int32_t before = 0;
  bool operator==(const SyncMessage&) const = default;
};

struct SyncPlan {
  // The remaining synchronisations, sorted by (before, to, after, from); empty unless
  // SyncPlanOptions::keep_syncs.
  std::vector<SyncMessage> syncs;
  // How many synchronisations remain (syncs.size() when they are kept).
  std::int64_t synchronisations = 0;
  // Pairs of messages in different rounds that share a directed edge (every such pair
  // needs ordering before any reduction).
  std::int64_t contending_pairs = 0;
  // Of those, pairs that are consecutive users of some edge: the others follow from them.
  std::int64_t consecutive_pairs = 0;
  // Consecutive pairs whose two messages have the same sender: a rank's own sends run in
  // round order, so no message is needed.
  std::int64_t same_sender_pairs = 0;
  // Dependences removed as redundant by the transitive reduction.
  std::int64_t redundant = 0;
  // Wall-clock seconds of each stage of the computation, in order (for reports).
  std::vector<std::pair<std::string, double>> seconds;
};

struct SyncPlanOptions {
  // Keep the synchronisations themselves (SyncPlan::syncs), not only their counts. At 4096
  // machines they take 250-300 MB.
  bool keep_syncs = true;
  // Threads for the plan: the sweep over the phases is cut into this many chunks, and the
  // transitive reduction shares its work out. Same plan for any number.
  int threads = 1;
  // Steps a search for another path may take before its question is left to the sweep that
  // answers the rest all at once (sync_plan.cpp, step 2). Same plan for any value; tests
  // set 0 to send every question there.
  int search_budget = 4096;
};

// Builds the synchronisation plan of a contention-free single-ported schedule on `t`
// (ranks mapped to machines by t.machine_of_rank()). Throws Error when a round has
// contention or a rank sends twice in one round.
SyncPlan plan_synchronisation(const Schedule& s, const Topology& t, const SyncPlanOptions& options = {});
// The same plan straight from the machine-level phases (no Schedule with one round object
// per phase; what schedgen uses at 4096 machines). Ranks as in tree_rank_schedule.
SyncPlan plan_synchronisation(const TreeAapcSchedule& s, const Topology& t, const SyncPlanOptions& options = {});

// How phases are kept apart at run time.
enum class TreeSync {
  Pairwise,  // section 5: point-to-point synchronisation messages, no barriers
  Barrier,   // an MPI_Barrier after every phase
  None,      // no separation: every rank sends its messages in phase order, back to back
};

struct StepProgram;

// One rank's part of a tree schedule as a step program (libcomm/program.hpp), MPI_Alltoall
// semantics with blocks of block_bytes, the phases kept apart by `mode`:
//   Pairwise  every receive posted first; then per phase with a send of mine: wait for the
//             synchronisations the plan names, send, then notify the later senders;
//   Barrier   per phase its messages, then a barrier;
//   None      every receive, then every send in phase order, one wait.
StepProgram tree_program(const Schedule& s, const SyncPlan& sync, int rank, std::size_t block_bytes,
                         TreeSync mode);

}  // namespace libcomm
