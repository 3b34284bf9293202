// The measurement loop shared by commbench and tune: for every size, each repetition runs
// every selected algorithm once in turn (noise hits all alike), one run is timed from a
// barrier to the return on the slowest rank, and a row keeps the median over repetitions.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "libcomm/comm.hpp"
#include "operation.hpp"

namespace commbench {

struct Row {
  std::string algo, ran, note;
  std::size_t block = 0;
  std::vector<double> times;
  std::vector<double> local_work;  // charged in a simulation (libcomm/sim.hpp), slowest rank
  long long bad = 0;  // wrong blocks over all ranks (0 when not validated)
  double median = 0, min = 0, ratio = 0;
  double model_us = -1;  // --predict (operations with a cost model)
  double mean_message = -1;  // alltoallv: the pattern's mean message (bytes) at this size
  // auto: the calls its online policy took to decide (its warm-up, run before the timed
  // repetitions; the last one ran the winner) and their summed time; 0 when it decided at once.
  int warmup_calls = 0;
  double warmup_s = 0;
};

// The options of commbench and tune that say what to time where: block sizes (--min,
// --max, --sizes), repetitions (--reps, --warmup) and the node map (--nodes).
struct SizeOptions {
  std::string min = "8", max = "4MiB", sizes;  // --sizes, when given, overrides --min/--max
  int reps = 5, warmup = 1;
  std::string nodes = "shared";
  std::vector<double> arrival_skew;  // --arrival-skew SEED,US (below)
  bool synchronized_start = false;   // --synchronized-start (below)
};
// Adds them to app, their defaults the values `o` holds; reps_help says what the median is for.
void add_size_options(CLI::App& app, SizeOptions& o, const std::string& reps_help);

// The block sizes of --sizes A,B,.. or else --min .. --max doubling. Throws Error naming
// the option.
std::vector<std::size_t> block_sizes(const std::string& min_s, const std::string& max_s,
                                     const std::string& sizes_list);
inline std::vector<std::size_t> block_sizes(const SizeOptions& o) { return block_sizes(o.min, o.max, o.sizes); }

// The sizes of a comma list such as "8,1K,64K" (for --sizes and --calibrate).
std::vector<std::size_t> size_list(const std::string& text);

// Times `algos` (reference first: ratios are to algos[0]) at every size. Collective; every
// rank returns the same rows, size by size in the order of `algos`. Auto is first run until
// its online policy has decided (Row::warmup_calls), then timed like every other algorithm. Validates every run
// unless `simulated` (simulated payload: nothing to check). Repetitions interleave the
// algorithms, each (after the first) in its own shuffled order, the same on every rank.
// With `progress`, rank 0 writes one line there per size as soon as it is timed (the
// medians in us), so a long run that is stopped still leaves what it measured.
std::vector<Row> time_algorithms(Operation& op, const libcomm::Comm& comm,
                                 const std::vector<std::string>& algos,
                                 const std::vector<std::size_t>& sizes, int reps, int warmup,
                                 bool simulated, std::ostream* progress = nullptr);

// --model-copy GBS, shared by commbench and tune. In a SimGrid build without --host-speed
// the algorithms' local block copies (staging in the hierarchical schemes, Bruck's
// rotations, a schedule's self-copies) cost no simulated time; with it they are charged
// at GBS GB/s (libcomm::sim::set_copy_rate), the copy model of fft3d --model-copy, so a
// tuning table can be measured under the application's own model. 0 (the default) = off.
void add_copy_model_option(CLI::App& app, double& gbs);
// Applies the option; throws Error when it cannot apply (not a SimGrid build, or SMPI
// already charges the measured computation).
void apply_copy_model(double gbs);
// "local copies charged at GBS GB/s (--model-copy)", or "" when the model is off.
std::string describe_copy_model(double gbs);

// --arrival-skew SEED,US, shared by commbench and tune: the ranks do not reach a call
// together (as an application's do not; a platform whose every host runs a rank has no room
// for --cross-traffic, and this is its variability). After the barrier that starts every
// timed call, each rank waits a time drawn uniform in [0, 2 US] microseconds from its own
// generator (seeded by SEED and the rank, one draw per call), then starts its clock: a
// call's time is still the slowest rank's from its own arrival to its return, so what an
// algorithm makes early ranks wait for late ones is in it. Simulated time in a SimGrid build
// (without --host-speed), a busy wait on a real machine. One seed repeats its run exactly in
// a simulation. add_size_options adds the option; this applies it on this rank (empty: no
// skew) and throws Error when it cannot apply.
void apply_arrival_skew(const std::vector<double>& seed_us, int rank);
// "arrival skew: ...", or "" without it.
std::string describe_arrival_skew(const std::vector<double>& seed_us);

// --synchronized-start, shared by commbench and tune (a SimGrid build, without --host-speed):
// every rank starts each timed call's clock at one simulated instant instead of when it
// leaves the barrier. A barrier lets ranks go apart (SMPI's Open MPI barrier at 256 ranks
// on flat512: 2.4 ms, more than the 8 rounds of a butterfly allgather of 8 B), and an
// algorithm's time from the barrier then holds that skew in proportion to how early ranks
// wait for late ones: a property of the barrier, not of the algorithm. The ranks agree on
// the last one out (an MPI_MAX allreduce), then on how long such an agreement takes (a
// second), and wait in simulated time until the last one out plus three agreements; a rank
// that is past that instant starts at once and counts a late start (late_starts(), which
// the record keeps). --arrival-skew still adds its own seeded wait after that instant.
// Applies the option on this rank; throws Error when it cannot apply.
void apply_synchronized_start(bool on);
// "synchronized start: ..." (the header line of a run with the option).
std::string describe_synchronized_start();
// The timed calls whose agreed start a rank reached too late to wait for it, summed over
// the ranks of comm (collective).
long long late_starts(MPI_Comm comm);

}  // namespace commbench
