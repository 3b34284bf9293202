// Internal: messages whose length the receiver learns only when one arrives (the staged
// alltoallv's buckets, paper 001 s. 3.4: their sizes depend on other ranks' counts). Part
// of the executor (executor.cpp), the one place that makes point-to-point MPI calls; its
// waits are bounded by LIBCOMM_TIMEOUT as the executor's are, and a wait that stalls
// throws the executor's error naming the ranks it waits for.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <span>
#include <string>
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
  void at_stage(int stage, int stages) { where_ = "stage " + std::to_string(stage) + " of " + std::to_string(stages); }
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
  MPI_Comm comm_;
  std::string algorithm_, where_ = "stage 0 of 1";
};

// MPI_Waitall on `count` requests, raising Error on failure. In a SimGrid build it waits
// for them one by one in order instead: SMPI's MPI_Waitall runs one MPI_Waitany over all
// requests per completion, O(count^2) simulator work (with 2(P-1) requests per rank that
// dominated runs of 512 simulated ranks). The simulated time is the same, since the
// transfers progress in the simulated network whether or not the rank waits on them.
void wait_all(int count, MPI_Request* requests);

}  // namespace libcomm::detail
