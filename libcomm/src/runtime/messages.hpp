// Internal: the executor's (executor.cpp) communication outside step programs, its waits
// bounded by LIBCOMM_TIMEOUT as a program's are (a wait that stalls throws the executor's
// error): messages whose length the receiver learns only when one arrives (the staged
// alltoallv's buckets, paper 001 s. 3.4: their sizes depend on other ranks' counts), and
// libcomm's own agreements (small MPI library collectives every rank calls).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace libcomm::detail {

// Sends in flight and their receivers (named if a wait for them stalls).
struct PostedSends {
  std::vector<MPI_Request> reqs;
  std::vector<int> to;
};

class ProbedMessages {
 public:
  // `algorithm` names the collective in errors.
  ProbedMessages(MPI_Comm comm, std::string algorithm) : comm_(comm), algorithm_(std::move(algorithm)) {}
  // Where the run is, for errors ("stage 1 of 4").
  void at_stage(int stage, int stages) { stage_ = stage, stages_ = stages; }
  // Posts `bytes` of `data` to rank `to` with `tag`, into `posted`.
  void send(const std::byte* data, std::size_t bytes, int to, int tag, PostedSends& posted) const;
  // Blocks for the next message from `from` (MPI_ANY_SOURCE: any sender; `expected` lists
  // the ranks it may come from) with `tag`, and receives it where `place(n)` says, n being
  // its length; returns its sender.
  int receive(int from, int tag, const std::function<std::byte*(std::size_t n)>& place,
              std::span<const int> expected) const;
  // Waits for every send of `posted` to complete, then empties it.
  void wait(PostedSends& posted) const;

 private:
  std::string where() const { return "stage " + std::to_string(stage_) + " of " + std::to_string(stages_); }
  MPI_Comm comm_;
  std::string algorithm_;
  int stage_ = 0, stages_ = 1;
};

// One of libcomm's own agreements on `comm` (auto's count statistics, online's winner):
// `blocking()` (an MPI collective call, returning its error code), or with LIBCOMM_TIMEOUT
// `start(&request)` (its non-blocking form) waited for with the executor's deadline, so
// that a stopped peer ends it with an Error ("ALGORITHM: rank R: no message completed for
// T s (LIBCOMM_TIMEOUT) in WHERE: waiting for rank ..." naming every other
// rank, as the executor names a library all-to-all's members) instead of a hang. `name` is
// the MPI call's, for errors. (Which of the two runs follows LIBCOMM_TIMEOUT, a setting
// every rank of a Comm shares, compared when the Comm is made: MPI does not match a
// blocking collective with a non-blocking one.)
void run_agreement(MPI_Comm comm, std::string_view algorithm, std::string_view where, const char* name,
                   const std::function<int()>& blocking, const std::function<int(MPI_Request*)>& start);

// MPI_Waitall on `count` requests, raising Error on failure. In a SimGrid build it waits
// for them one by one in order instead: SMPI's MPI_Waitall runs one MPI_Waitany over all
// requests per completion, O(count^2) simulator work (with 2(P-1) requests per rank that
// dominated runs of 512 simulated ranks). The simulated time is the same, since the
// transfers progress in the simulated network whether or not the rank waits on them.
void wait_all(int count, MPI_Request* requests);

}  // namespace libcomm::detail
