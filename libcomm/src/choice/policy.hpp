// The Auto policies over an operation's candidates (libcomm/auto_policy.hpp): what they
// see of a call, and what each answers. Generic: an algorithm is an int and a name here,
// so nothing in this layer depends on an operation (the driver, choice/driver.hpp, turns an
// operation's registry into candidates).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/comm.hpp"
#include "libcomm/cost_params.hpp"

namespace libcomm::detail {

// An algorithm Auto may run here: it applies to the shape and has a cost formula.
struct Candidate {
  int algo = 0;
  std::string_view name;
  double predicted = 0;  // seconds, the cost formula with active_cost_params()
  bool node_memory = false;  // moves data through the node's shared-memory window
};

// What a policy sees of one decision; the same on every rank.
struct AutoQuestion {
  std::string_view op;
  const Comm* comm = nullptr;
  std::uint64_t bytes = 0;  // the size the decision keys on (block, largest block, longest message)
  double spread = 1.0;      // alltoallv: longest / mean message
  bool topology = false;    // a switch tree is attached
  std::vector<Candidate> candidates;  // in registry order, native among them
  int native = 0;
};

struct AutoAnswer {
  int algo = 0;
  std::string reason;
};

// The cheapest predicted candidate (ties: native, then registry order); the reason names
// it, its prediction and the runner-up's.
AutoAnswer model_answer(const AutoQuestion& q);
// The active tuning table's row, when it has one for the question and its algorithm is a
// candidate here; else nullopt and `why_not` says why ("no tuning table row", ...).
std::optional<AutoAnswer> table_answer(const AutoQuestion& q, std::string& why_not);
// The table's row only for exactly this shape (ranks, ranks per node, switch tree):
// where `online` starts without measuring (a table it learned earlier).
std::optional<AutoAnswer> exact_table_answer(const AutoQuestion& q);

// Size classes of the online policy: (2^(k-1), 2^k] for k >= 1, class 0 holds 0 and 1.
int size_class(std::uint64_t bytes);
std::uint64_t size_class_first(int k);  // smallest size of class k
std::uint64_t size_class_last(int k);   // largest size of class k

// One decision of the online policy (STAR-MPI, Faraj, Yuan and Lowenthal, ICS 2006): the
// candidates are run in turn on the site's first calls, `reps` times each, interleaved;
// each rank keeps the fastest of its own timings per candidate; one MPI_Allreduce (MAX)
// gives every rank the same vector (the slowest rank's figure: a collective takes as long
// as its slowest rank) and so the same winner, which every later call runs.
//
// A site first runs native for online_after() calls (a size class called only a few times
// never pays for measuring: the MPI library's own collective is the safe choice until
// measured), and a candidate other than native wins only when it is faster by more than
// online_margin() (the measurements are noisy; native is never slower than itself).
class OnlineSite {
 public:
  OnlineSite(std::vector<Candidate> candidates, int reps, int wait, int native);
  // A site that only counts its first `wait` calls: its candidates come later (prepare),
  // so that a size class called only a few times never pays for predicting them.
  explicit OnlineSite(int wait) : wait_(wait) {}
  bool prepared() const { return !candidates_.empty(); }
  void prepare(std::vector<Candidate> candidates, int reps, int native);
  bool settled() const { return winner_ >= 0; }
  // Counts a call made before measuring starts; false once the site measures.
  bool waiting() {
    if (waited_ >= wait_) return false;
    ++waited_;
    return true;
  }
  // The candidate the next call runs while measuring.
  const Candidate& next() const { return candidates_[calls_ % candidates_.size()]; }
  // The time this rank measured for the call next() named; true when every candidate has
  // been run once untimed and then `reps` times timed (the next step is agree()). The first
  // round is not timed: a candidate's first call builds its plan, windows and
  // sub-communicators, which later calls reuse.
  bool record(double seconds);
  // Collective over `comm`: one MPI_Allreduce; afterwards settled().
  void agree(MPI_Comm comm);
  void settle(int algo, std::string reason);  // a winner from elsewhere (a learned table)
  int winner() const { return winner_; }
  const std::string& reason() const { return reason_; }
  const std::vector<Candidate>& candidates() const { return candidates_; }
  int calls_needed() const { return static_cast<int>(candidates_.size()) * (reps_ + 1); }

 private:
  std::vector<Candidate> candidates_;
  int reps_ = 1;
  int wait_ = 0, waited_ = 0;
  int native_ = 0;
  int calls_ = 0;
  std::vector<double> best_;    // this rank's fastest timing per candidate
  std::vector<double> agreed_;  // after agree(): the max over ranks
  int winner_ = -1;
  std::string reason_;
};

// The online policy's settings, read once: LIBCOMM_ONLINE_REPS (timings per candidate,
// default 3), LIBCOMM_ONLINE_CANDIDATES ("all", or the number of cheapest predicted
// candidates tried besides native and the node's shared-memory ones; default 6).
int online_reps();
// The timings per candidate for a decision on `bytes` (the size every rank decides on):
// LIBCOMM_ONLINE_REPS when set, else 3, and 4 times that up to kSmallDecisionBytes, where a
// call takes microseconds and the scheduler's jitter is as large as the differences
// measured (the extra runs cost little there).
constexpr std::uint64_t kSmallDecisionBytes = 1024;
int online_reps_for(std::uint64_t bytes);
// LIBCOMM_ONLINE_AFTER: calls of a size class that run native before measuring (default 16).
int online_after();
// LIBCOMM_ONLINE_MARGIN: how much faster than native (a fraction) another candidate must
// measure to win (default 0.03).
double online_margin();

// The candidates `online` measures: native, the shared-memory ones where the ranks share a
// node, and the cheapest predicted of the rest up to LIBCOMM_ONLINE_CANDIDATES of them, in
// predicted order (native first).
std::vector<Candidate> online_candidates(const AutoQuestion& q, bool one_node);

// What the online policy learned in this process, as tuning-table rows (libcomm/tuning.hpp),
// one per settled site of a communicator's rank 0: the learned table that a later run can
// start from (LIBCOMM_TUNING). Thread-safe.
struct LearnedRow {
  std::string op;
  int ranks = 0, ppn = 1;
  bool topology = false;
  std::uint64_t from = 0, to = 0;
  std::string algo;
  std::string comment;  // the agreed timings
};
void record_learned(LearnedRow row);

}  // namespace libcomm::detail
