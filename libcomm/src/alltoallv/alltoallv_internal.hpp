// Internal interface of the irregular all-to-all: the staged-algorithm description shared
// by the MPI engine (staged_engine.cpp) and the MPI-free simulation (simulate.cpp), and
// the algorithm files, one per algorithm.
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../algorithm/operation.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/program.hpp"

namespace libcomm::detail {

// The irregular all-to-all as an operation of the one driver (driver/algorithm.hpp): its
// traits, defined in alltoallv.cpp; its algorithms one per file, each exporting its
// descriptor (A1 direct.cpp, A2 two_stage.cpp, A3 mesh.cpp, A4 four_stage.cpp).
class StagedAlgorithm;
struct AlltoallvOp : OperationBase<AlltoallvAlgo, AlltoallvOptions, Setting::Alltoallv, "alltoallv"> {
  struct Args {
    const void* send = nullptr;
    std::span<const std::int64_t> sc, sd;
    void* recv = nullptr;
    std::span<const std::int64_t> rc, rd;
  };
  // Decided per site (AlltoallvOptions::site, ShapeBase::key_bytes) and the size class its
  // ranks agreed on: no rank knows the others' sizes without a collective. agree() sets
  // the decision figures (decision_bytes: the longest message; spread).
  struct Shape : ShapeBase {
    std::span<const std::int64_t> sc, sd, rc, rd;
    const Options* opts = nullptr;
    AlltoallvCountStats stats;  // agreed over the ranks once global
    bool global = false;
  };
  // A staged algorithm's router (A2-A4): the blocking engine, the request programs and the
  // MPI-free simulation all route with it.
  struct Extra {
    std::unique_ptr<StagedAlgorithm> (*staged)(int p) = nullptr;
  };
  static std::span<const Algorithm<AlltoallvOp>> algorithms();
  static Shape shape(const Args& a, const Comm& comm, const Options& o);
  // A shape for P ranks on `nodes` whose statistics are agreed already (no Comm).
  static Shape shape(int p, const NodeMap& nodes, const AlltoallvCountStats& stats, const Options& o);
  static std::uint64_t options(const Shape& s);
  static ArgumentCheck argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo, const Options& o,
                                      bool have_buffers);
  static std::string sizes_differ(const Args&, std::uint64_t, std::uint64_t) { return "counts differ"; }
  static std::string modes_differ(Algo algo, const Options& o);
  static void check_agreement(const Args& a, const Comm& comm, const Options& o);
  // Hooks (OpHooks below).
  static void agree(Shape& s, const Comm& comm);
  static std::optional<Choice<Algo>> unmeasured_default(const Shape& s);
  static std::optional<Choice<Algo>> nothing_to_exchange(const Shape& s);
  static void after_check(Shape& s, std::uint64_t extra) { s.plan_variant = extra != 0; }
  static void on_run(const Args& a, const Shape& s, const Comm& comm, Algo ran);
};
using AlltoallvAlgorithm = Algorithm<AlltoallvOp>;

template <>
inline constexpr OpHooks<AlltoallvOp> hooks_of<AlltoallvOp>{
    .per_site = true, .agree = AlltoallvOp::agree, .unmeasured_default = AlltoallvOp::unmeasured_default,
    .nothing_to_exchange = AlltoallvOp::nothing_to_exchange, .after_check = AlltoallvOp::after_check,
    .on_run = AlltoallvOp::on_run};

// native's path for counts beyond int (ShapeBase::plan_variant, decided by the check).
inline bool beyond_int(const AlltoallvOp::Shape& s) { return s.plan_variant != 0; }

// The terms of the cost formulas (alltoallv.cpp; docs/algorithms.md, "Cost formulas"), from
// the agreed count statistics: paper 001, s. 2 (a message costs Ts + bytes (tc + td), a copy
// tm per byte).
namespace alltoallv_cost {
double mean(const AlltoallvOp::Shape& s);
// What the longest message costs beyond a mean one, once (a spike delays its own step).
double spike(const AlltoallvOp::Shape& s, const CostParams& c);
// How many spikes delay a blocking run of P - 1 steps of one exchange (paper 001, s. 2.3:
// node contention, Eq. 3's f_nc_b). A long message holds up its step's two ranks; each
// later step passes the delay on to their partners, so it reaches every rank in about
// log2 P steps, and a long message that many steps later adds its own delay to it. Of the
// long messages (P^2 / spread, were the others empty) one in every log2 P steps chains:
// min(P^2 / spread, (P - 1) / ceil(log2 P)), at least 1.
double chained_spikes(const AlltoallvOp::Shape& s);
// P - 1 steps of one exchange in ring order, step k to (me + k) % P, the long messages
// chained (direct's blocking run; Open MPI's pairwise), with the local copy.
double ring_order_steps(const AlltoallvOp::Shape& s, const CostParams& c);
// Every message posted at once, one long message's delay (direct's n1 and n2; the MPI
// libraries' linear alltoallv), with the local copy.
double posted_at_once(const AlltoallvOp::Shape& s, const CostParams& c);
// One stage of a staged algorithm: `steps` exchanges moving the rank's `bytes`, every run
// with its header, composed into buckets and taken apart again (two copies per byte).
double stage(const Layout& l, const CostParams& c, double steps, double bytes, double runs);
// Runs per stage: a message of m bytes cut into at most `parts` pieces (whole elements).
double pieces(const AlltoallvOp::Shape& s, double parts);
}  // namespace alltoallv_cost

// A staged algorithm's blocking run (staged_engine.cpp) and its plan for requests and
// persistent calls (staged_program.cpp).
void run_staged_call(AlltoallvAlgo algo, const AlltoallvOp::Args& a, const AlltoallvOp::Shape& s, const Comm& comm);
template <AlltoallvAlgo algo>
void run_staged_as(const AlltoallvOp::Args& a, const AlltoallvOp::Shape& s, const Comm& comm) {
  run_staged_call(algo, a, s, comm);
}
std::shared_ptr<PlanState> staged_plan(const PlanCall<AlltoallvOp>& call);

// Integer square roots of a rank count: the mesh (A3) needs P = q^2, the four-stage
// algorithm (A4) lays P out on ceil(sqrt P) or floor(sqrt P) columns, and Auto compares
// A4's 4 ceil(sqrt P) + 2 start-ups with P.
// (std::sqrt gives the estimate; the loops correct its rounding.) p >= 1.
inline int floor_sqrt(int p) {
  int f = static_cast<int>(std::sqrt(static_cast<double>(p)));
  while (f * f > p) --f;
  while ((f + 1) * (f + 1) <= p) ++f;
  return f;
}
inline int ceil_sqrt(int p) {
  const int f = floor_sqrt(p);
  return f * f < p ? f + 1 : f;
}
// q with q * q == p, or 0 when p is not a perfect square.
inline int exact_sqrt(int p) {
  const int f = floor_sqrt(p);
  return f * f == p ? f : 0;
}

// A run: elements [first, first + n) of the message m(src, dst). Elements of a staged
// algorithm travel in runs; every run in a message is preceded by its 24-byte header, so
// an intermediate node knows where each element goes and the final receiver where it lands.
struct Run {
  std::int32_t src = 0;
  std::int32_t dst = 0;
  std::int64_t first = 0;
  std::int64_t n = 0;
};
constexpr std::size_t kRunHeaderBytes = 24;

// A piece of a run routed to a partner rank at the current stage.
struct Routed {
  int partner;
  Run run;
};

// A multi-stage algorithm for P ranks: stage schedules plus the router that splits the
// runs a rank holds at the start of a stage into the buckets of that stage's partners.
class StagedAlgorithm {
 public:
  virtual ~StagedAlgorithm() = default;
  const StagedSchedule& schedule() const { return schedule_; }
  int num_stages() const { return static_cast<int>(schedule_.stages.size()); }
  // Called once per rank and stage before the first route(): resets counters.
  virtual void begin_stage(int stage, int me) = 0;
  // Appends the pieces of `run` (held by `me` at the start of `stage`) to `out`. Counts are
  // bytes; the algorithm deals out units of set_unit() bytes (AlltoallvOptions::
  // element_bytes: paper 001 deals elements, and a piece never cuts one).
  void route(int stage, int me, const Run& run, std::vector<Routed>& out) {
    if (unit_ == 1) return route_units(stage, me, run, out);
    const std::size_t from = out.size();
    route_units(stage, me, {run.src, run.dst, run.first / unit_, run.n / unit_}, out);
    for (std::size_t k = from; k < out.size(); ++k) out[k].run.first *= unit_, out[k].run.n *= unit_;
  }
  // The unit of the routing, in bytes (every count and displacement a multiple of it).
  void set_unit(std::int64_t bytes) { unit_ = bytes > 0 ? bytes : 1; }

 protected:
  // route() in units: `run` counts units.
  virtual void route_units(int stage, int me, const Run& run, std::vector<Routed>& out) = 0;
  StagedSchedule schedule_;
  std::int64_t unit_ = 1;
};

// The router of a staged algorithm (its descriptor's Extra::staged); an Error for others.
std::unique_ptr<StagedAlgorithm> make_staged(AlltoallvAlgo algo, int nprocs);

StagedSchedule direct_schedule(int nprocs);  // direct.cpp
// Shift schedule inside groups: in step k (1..size) member g sends to member (g + k) % size
// (the self message last, as in Fig. 9 of paper 001). `groups` lists each group's ranks.
Schedule shift_schedule(int nprocs, const std::vector<std::vector<int>>& groups,
                        const std::string& name);

// Splits `run` into pieces for `buckets` buckets the way a counter scan distributes
// elements (paper 001, Fig. 11 with F(x) = x % buckets): the element scanned at counter
// value x goes to bucket x % buckets. `counter` is the counter of run.dst and advances by
// run.n. The elements of one bucket are taken as one contiguous slice of the run (the
// counts per bucket are those of the scan; see docs/algorithms/irregular.md).
template <class NodeOfBucket>
void split_by_counter(const Run& run, std::int64_t& counter, std::int64_t buckets,
                      NodeOfBucket node_of_bucket, std::vector<Routed>& out) {
  const std::int64_t start = counter;
  counter += run.n;
  std::int64_t offset = 0;
  const std::int64_t parts = run.n < buckets ? run.n : buckets;
  for (std::int64_t k = 0; k < parts; ++k) {
    const std::int64_t count = (run.n - k + buckets - 1) / buckets;  // x = start+k, +buckets, ...
    const auto bucket = static_cast<int>((start + k) % buckets);
    out.push_back({node_of_bucket(bucket), {run.src, run.dst, run.first + offset, count}});
    offset += count;
  }
}

// The one routing of a staged algorithm's runs, for the blocking engine, the request
// programs and the MPI-free simulation: routes `run`, held by rank r at the start of
// stage s (after alg.begin_stage(s, r)), and hands each piece to on_piece(b, piece) with
// its bucket, bucket_of[partner] (-1: the stage does not pair r with that rank). Throws
// Error, prefixed by `who`, when a piece goes to an unpaired rank or is not part of its
// run, or when the pieces lose or duplicate elements. `routed` is scratch. (A template:
// the engine calls it for every run of every call.)
[[noreturn]] void routing_error(const std::string& who, int s, int r, const Routed* unpaired, const char* what);
template <class OnPiece>
void route_run(StagedAlgorithm& alg, int s, int r, const Run& run, std::span<const int> bucket_of,
               std::vector<Routed>& routed, const std::string& who, OnPiece&& on_piece) {
  routed.clear();
  alg.route(s, r, run, routed);
  std::int64_t total = 0;
  for (const Routed& piece : routed) {
    const int b = piece.partner >= 0 && static_cast<std::size_t>(piece.partner) < bucket_of.size()
                      ? bucket_of[static_cast<std::size_t>(piece.partner)]
                      : -1;
    if (!(b >= 0)) routing_error(who, s, r, &piece, nullptr);
    if (!(piece.run.src == run.src && piece.run.dst == run.dst && piece.run.first >= run.first &&
          piece.run.first + piece.run.n <= run.first + run.n))
      routing_error(who, s, r, nullptr, "a routed piece is not part of its run");
    total += piece.run.n;
    on_piece(static_cast<std::size_t>(b), piece.run);
  }
  if (!(total == run.n)) routing_error(who, s, r, nullptr, "the router lost or duplicated elements");
}

// One stage `s` of a staged algorithm for all P ranks, without MPI (simulate.cpp): every
// rank's held runs are routed into its send buckets, bucket b going to the b-th partner of
// the stage's rounds, then every scheduled transfer is delivered in schedule step order,
// its runs appended to the receiver's held list (route_run for every rank, the run headers
// taken away); simulate_alltoallv (statistics) and staged_alltoallv_program are built on it.
struct StageRouting {
  // Piece `piece` of held run k of rank r goes into r's bucket b.
  std::function<void(int r, std::size_t k, std::size_t b, const Run& piece)> on_piece;
  // Rank r has routed all its held runs into its `buckets` buckets (called before the
  // next rank routes).
  std::function<void(int r, std::size_t buckets)> on_routed;
  // Transfer src -> dst of round `round`, carrying bucket b of src.
  std::function<void(std::size_t round, int src, int dst, std::size_t b, const std::vector<Run>& runs)> on_message;
};
// Throws Error, prefixed by `who`, when a router sends to a rank the stage does not pair
// or loses or duplicates elements.
void route_stage(StagedAlgorithm& alg, int s, std::vector<std::vector<Run>>& held, const StageRouting& cb,
                 const std::string& who);

// A1 (direct.cpp): rank `me`'s step program (no run headers, sizes known from the counts):
// Blocking = one exchange per step, the other modes post everything at once.
StepProgram direct_alltoallv_program(std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> sdispls,
                                     std::span<const std::int64_t> recvcounts, std::span<const std::int64_t> rdispls,
                                     int me, AlltoallvMode mode);
// A2-A4 (staged_program.cpp): rank `me`'s step program, given the whole count matrix m
// (m[i * P + j]: elements from i to j) and this rank's displacements.
StepProgram staged_alltoallv_program(AlltoallvAlgo algo, int nprocs, int me, std::span<const std::int64_t> m,
                                     std::span<const std::int64_t> sdispls, std::span<const std::int64_t> rdispls,
                                     AlltoallvMode mode, std::int64_t unit);
AlltoallvStageStats direct_stats(std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> recvcounts,
                                 int me);
// `large`: some count or displacement on some rank does not fit an int (decided
// collectively by the caller); then MPI_Alltoallw with one 64-bit-addressed type per peer.
void native_alltoallv(const std::byte* send, std::span<const std::int64_t> sendcounts,
                      std::span<const std::int64_t> sdispls, std::byte* recv,
                      std::span<const std::int64_t> recvcounts,
                      std::span<const std::int64_t> rdispls, MPI_Comm comm,
                      bool large);
// The start of the same as MPI_Ialltoallv / MPI_Ialltoallw, for a plan (the arguments live in it).
std::function<void(const void*, void*, MPI_Request*)> native_ialltoallv(
    std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> sdispls,
    std::span<const std::int64_t> recvcounts, std::span<const std::int64_t> rdispls, MPI_Comm comm, bool large);
// True when this rank's counts and displacements fit MPI_Alltoallv's int arguments.
bool native_fits_int(std::span<const std::int64_t> sendcounts,
                     std::span<const std::int64_t> sdispls,
                     std::span<const std::int64_t> recvcounts,
                     std::span<const std::int64_t> rdispls);

}  // namespace libcomm::detail
