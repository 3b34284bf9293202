// Irregular all-to-all personalised communication (MPI_Alltoallv semantics with 64-bit
// counts): rank i sends sendcounts[j] elements of `element_bytes` bytes, starting at
// element sdispls[j] of its send buffer, to rank j, which stores them at element
// rdispls[i] of its receive buffer (recvcounts[i] elements).
//
// Algorithms of paper 001 ("Portable and scalable algorithm for irregular all-to-all
// communication"): A1 direct, A2 two-stage (Ranka / Bader), A3 mesh (Hambrusch), A4 the
// four-stage algorithm for any P. Each runs in the three modes of the paper's section 3.4.
// See docs/algorithms/irregular.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/choice.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"
#include "libcomm/error.hpp"
#include "libcomm/schedule.hpp"

namespace libcomm {

enum class AlltoallvAlgo {
  Auto,       // tuning table, else four_stage when 4 ceil(sqrt P) + 2 start-ups < P, else direct
  Native,     // the MPI library's MPI_Alltoallv (reference)
  Direct,     // A1: P steps, step k sends to (me + k) % P (paper 001, s. 3.1.1)
  TwoStage,   // A2: every message sliced into P parts, two all-to-all stages (s. 3.1.2)
  Mesh,       // A3: row then column of a sqrt(P) x sqrt(P) mesh; perfect squares (s. 3.1.3)
  FourStage,  // A4: four stages on a ceil(sqrt P)-column array, any P (s. 3.2)
};

// Communication mode (paper 001, section 3.4 and Fig. 13).
enum class AlltoallvMode {
  Blocking,           // "b": per step send + receive, the next step after both finished
  NonblockingSingle,  // "n1": per stage post every send, receive as messages arrive
  NonblockingDual,    // "n2": n1 with two send buffers: a message is distributed into the
                      //       next stage's buckets as soon as it arrives
};

using AlltoallvAlgoInfo = AlgoInfo<AlltoallvAlgo>;
const std::vector<AlltoallvAlgoInfo>& alltoallv_algorithms();
std::string_view alltoallv_algo_name(AlltoallvAlgo a);
// Throws Error naming the bad value and listing the valid names.
AlltoallvAlgo alltoallv_algo_from_name(std::string_view name);
// LIBCOMM_ALLTOALLV from the environment, or `fallback` when unset.
AlltoallvAlgo alltoallv_algo_from_env(AlltoallvAlgo fallback = AlltoallvAlgo::Auto);

// "blocking" / "b", "nonblocking_single" / "n1", "nonblocking_dual" / "n2".
std::string_view alltoallv_mode_name(AlltoallvMode m);  // "b", "n1", "n2"
AlltoallvMode alltoallv_mode_from_name(std::string_view name);

// What one rank saw in one stage of one call (instrumentation, issue 5 item 2). Payload
// bytes exclude the 24-byte run headers that the staged algorithms put in front of every
// run of elements (header_bytes counts those).
struct AlltoallvStageStats {
  std::string name;                     // "I R-Comm", "II C-Comm", ...
  int steps = 0;                        // communication steps of the stage's schedule
  int messages_received = 0;            // including the message to itself (Lemma 1 counts it)
  int messages_sent = 0;                // excluding the message to itself: start-ups
  std::uint64_t longest_message = 0;    // payload bytes of the longest message received
  std::uint64_t received_bytes = 0;     // payload bytes received, self included
  std::uint64_t sent_bytes = 0;         // payload bytes sent to other ranks
  std::uint64_t header_bytes = 0;       // run-header bytes received
  std::uint64_t send_buffer_bytes = 0;  // sBUF: payload in the stage's send buckets
  std::uint64_t recv_buffer_bytes = 0;  // rBUF: payload received in the stage
  std::uint64_t peak_buffer_bytes = 0;  // largest sBUF + rBUF payload held at once
};

struct AlltoallvStats {
  AlltoallvAlgo algo = AlltoallvAlgo::Native;
  AlltoallvMode mode = AlltoallvMode::Blocking;
  std::vector<AlltoallvStageStats> stages;
  int startups() const;                     // messages sent to other ranks, all stages
  std::uint64_t peak_buffer_bytes() const;  // max over stages
  std::uint64_t max_send_buffer() const;
  std::uint64_t max_recv_buffer() const;
};

struct AlltoallvOptions {
  // Check the arguments collectively (one MPI_Alltoall of the counts and one small
  // MPI_Allreduce): every rank gets the same clear Error when any rank passed a bad
  // count, displacement or buffer, when sendcounts and recvcounts do not match, or when
  // the ranks disagree on element size, algorithm or mode. Native also needs it to pick,
  // on every rank alike, its path for counts beyond INT_MAX.
  bool check_args = true;
  // mesh (A3) on P not a perfect square: true (default) = run four_stage (A4, which lays
  // any P out on a mesh of pseudo-nodes) and say so; false = Error on every rank. The
  // same switch, with the same default, as every other operation's.
  bool allow_fallback = true;
  AlltoallvMode mode = AlltoallvMode::Blocking;
  // The element the staged algorithms (two_stage, mesh, four_stage) deal out: paper 001
  // divides messages among nodes element by element, so a piece never cuts an element, and
  // counts and displacements must be multiples of it. 1 deals bytes, which cuts small
  // messages into many more pieces (each run carries a 24-byte header): give the record
  // size (the typed form passes sizeof(T)).
  std::size_t element_bytes = 1;
  // When set, filled with this rank's per-stage figures.
  AlltoallvStats* stats = nullptr;
  // Auto decides per site and the size class of the longest message, which the ranks agree
  // on (one MPI_Allreduce of the count statistics) at the site's first call and every 64
  // calls after: calls with the same site share a decision until their agreed class
  // changes; calls whose sizes alternate deserve sites of their own (any number, the same
  // on every rank; STAR-MPI's call site). Default: one site per communicator.
  std::uint64_t site = 0;
};

// The built-in rule for P ranks (Auto: the start-up count of paper 001 Table 3).
AlltoallvAlgo choose_alltoallv(AlltoallvAlgo requested, int nprocs);

// The count statistics Auto decides on, the same on every rank: the longest message and
// the mean message over all P x P pairs, in bytes; spread = longest / mean (>= 1).
struct AlltoallvCountStats {
  std::uint64_t max_bytes = 0;
  double mean_bytes = 0;
  double spread() const { return mean_bytes > 0 ? static_cast<double>(max_bytes) / mean_bytes : 1.0; }
};
// From the whole count matrix (counts[i * P + j]: bytes from i to j), no MPI.
AlltoallvCountStats alltoallv_count_stats(std::span<const std::int64_t> counts, int nprocs);
// From every rank's sendcounts (bytes): one MPI_Allreduce over comm (a user operation
// taking the max and the sum at once). Collective.
AlltoallvCountStats alltoallv_count_stats(std::span<const std::int64_t> sendcounts, const Comm& comm);

using AlltoallvChoice = Choice<AlltoallvAlgo>;
// What alltoallv() would run for these statistics: the requested algorithm or its fallback;
// for Auto the decision remembered for the default site, else the policy's answer (the
// table's row for P, ranks per node, the longest message and the spread; the model).
// alltoallv() itself agrees on the statistics with one MPI_Allreduce at the first call of a
// site (AlltoallvOptions::site) and every 64 calls after it.
AlltoallvChoice choose_alltoallv(AlltoallvAlgo requested, const AlltoallvCountStats& counts,
                                 const Comm& comm);
// The same rule with the documented fallback applied (mesh on P not a perfect square:
// four_stage, or an Error naming P when opts.allow_fallback is false), and why.
AlltoallvChoice choose_alltoallv(AlltoallvAlgo requested, int nprocs, const AlltoallvOptions& opts);

// Runs the irregular all-to-all; returns what ran and why. Collective over comm.
// Spans hold comm.size() entries; counts and displacements are bytes, as in every
// operation's untyped form (signed 64-bit, like MPI_Count, so that MPI's int counts pass
// unchanged and a negative one is reported, not wrapped); the typed form below counts
// elements of T.
AlltoallvChoice alltoallv(const void* send, std::span<const std::int64_t> sendcounts,
                          std::span<const std::int64_t> sdispls, void* recv, std::span<const std::int64_t> recvcounts,
                          std::span<const std::int64_t> rdispls, const Comm& comm,
                          AlltoallvAlgo algo = AlltoallvAlgo::Auto, const AlltoallvOptions& opts = {});

// Non-blocking and persistent forms (libcomm/plan.hpp) of every algorithm. The staged
// A2-A4 run as step programs routed ahead of time, from the whole count matrix:
// plan_alltoallv gathers it when the plan is made (MPI_Allgather), ialltoallv at start
// (each rank's row sent point-to-point to every rank, progressed by test / wait, the
// program built when every row is there).
// Auto picks direct, which needs no gather. ialltoallv runs no collective check (native
// takes MPI_Ialltoallw only when this rank's counts exceed int: pass such counts through
// plan_alltoallv, whose check decides for all ranks); plan_alltoallv checks once, when
// the plan is made.
Request ialltoallv(const void* send, std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> sdispls,
                   void* recv, std::span<const std::int64_t> recvcounts, std::span<const std::int64_t> rdispls,
                   const Comm& comm, AlltoallvAlgo algo = AlltoallvAlgo::Auto, const AlltoallvOptions& opts = {});
// Rank `rank`'s step program of direct or a staged algorithm for the count matrix m
// (m[i * P + j]: bytes from rank i to rank j) and this rank's displacements (no MPI).
StepProgram alltoallv_program(AlltoallvAlgo algo, int nprocs, int rank, std::span<const std::int64_t> m,
                              std::span<const std::int64_t> sdispls, std::span<const std::int64_t> rdispls,
                              AlltoallvMode mode = AlltoallvMode::NonblockingSingle, std::size_t element_bytes = 1);
Plan plan_alltoallv(const Comm& comm, std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> sdispls,
                    std::span<const std::int64_t> recvcounts, std::span<const std::int64_t> rdispls,
                    AlltoallvAlgo algo = AlltoallvAlgo::Auto, const AlltoallvOptions& opts = {});

// Typed form: counts and displacements in elements of T.
template <class T>
AlltoallvChoice alltoallv(std::span<const T> send, std::span<const std::int64_t> sendcounts,
                          std::span<const std::int64_t> sdispls, std::span<T> recv,
                          std::span<const std::int64_t> recvcounts, std::span<const std::int64_t> rdispls,
                          const Comm& comm, AlltoallvAlgo algo = AlltoallvAlgo::Auto,
                          const AlltoallvOptions& opts = {}) {
  const auto fits = [](std::span<const std::int64_t> c, std::span<const std::int64_t> d, std::size_t n) {
    for (std::size_t k = 0; k < c.size() && k < d.size(); ++k)  // d + c <= n, without overflowing
      if (c[k] > 0 && (d[k] < 0 || static_cast<std::size_t>(d[k]) > n ||
                       static_cast<std::size_t>(c[k]) > n - static_cast<std::size_t>(d[k])))
        return false;
    return true;
  };
  require(fits(sendcounts, sdispls, send.size()) && fits(recvcounts, rdispls, recv.size()),
          "alltoallv: rank " + std::to_string(comm.rank()) +
              ": a count + displacement reaches beyond the send or recv span");
  const auto bytes = [](std::span<const std::int64_t> v) {
    std::vector<std::int64_t> b(v.begin(), v.end());
    for (auto& x : b) x *= static_cast<std::int64_t>(sizeof(T));
    return b;
  };
  AlltoallvOptions o = opts;  // the staged algorithms deal whole Ts
  if (o.element_bytes == 1) o.element_bytes = sizeof(T);
  return alltoallv(send.data(), bytes(sendcounts), bytes(sdispls), recv.data(), bytes(recvcounts), bytes(rdispls),
                   comm, algo, o);
}

// ---------------------------------------------------------------------------------------
// Schedule level (no MPI): the stage schedules as data, and a simulation of the routing
// on element counts, used by the bound tests of paper 001 (Lemmas 1 and 3, Theorem 1,
// Tables 3 and 4).

// Layout of the four-stage algorithm (paper 001, s. 3.2, 3.2.2 A): C columns, R rows,
// r nodes in the incomplete row (0 when C divides P). C = ceil(sqrt P), except when
// P = ceil(sqrt P) * floor(sqrt P) - 1, where C = floor(sqrt P) ("rearranged") so that the
// r nodes of the incomplete row find r complete rows for their pseudo-node messages.
struct FourStageGeometry {
  int nprocs = 0, columns = 0, rows = 0, incomplete = 0;  // P, C, R, r
  bool rearranged = false;
  int row_of(int rank) const { return rank / columns; }
  int column_of(int rank) const { return rank % columns; }
  bool complete_column(int c) const { return incomplete == 0 || c < incomplete; }
  int column_height(int c) const { return complete_column(c) ? rows : rows - 1; }
  // Node that receives what `rank` sends to column c in a row stage: its row peer, or
  // for the incomplete row and a pseudo-node column, node (column_of(rank), c) (3.2.2 A).
  int row_partner(int rank, int c) const;
};
FourStageGeometry four_stage_geometry(int nprocs);

// The communication steps of a multi-stage algorithm, one Schedule per stage (each round
// a step; a transfer with src == dst is the message a node keeps for itself).
struct StagedSchedule {
  std::string name;
  int nprocs = 0;
  std::vector<std::string> stage_names;
  std::vector<Schedule> stages;
  int total_steps() const;
};
// Throws Error when the algorithm does not apply to P (mesh on a non-square) or is Native.
StagedSchedule alltoallv_schedule(AlltoallvAlgo algo, int nprocs);

// Checks every stage: in each step each rank sends at most one and receives at most one
// message (self included), and no ordered pair appears twice in a stage.
VerifyResult verify_staged_schedule(const StagedSchedule& s);

// Runs the algorithm's routing (the same code the MPI path runs) on a P x P matrix of
// element counts (counts[i * P + j]: elements rank i sends to rank j), in blocking order,
// and returns every rank's stats. Throws Error if an element is lost, duplicated, misrouted
// or sent to a rank the stage's schedule does not pair it with.
std::vector<AlltoallvStats> simulate_alltoallv(AlltoallvAlgo algo, int nprocs,
                                               std::span<const std::int64_t> counts,
                                               std::size_t element_bytes = 1);

}  // namespace libcomm
