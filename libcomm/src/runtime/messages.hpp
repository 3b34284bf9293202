// Internal: messages whose length the receiver learns only when one arrives (the staged
// alltoallv's buckets, paper 001 s. 3.4: their sizes depend on other ranks' counts). Part
// of the executor (executor.cpp), the one place that makes point-to-point MPI calls.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>

namespace libcomm::detail {

class ProbedMessages {
 public:
  explicit ProbedMessages(MPI_Comm comm) : comm_(comm) {}
  // Posts `bytes` of `data` to rank `to` with `tag`; the request completes the send.
  MPI_Request send(const std::byte* data, std::size_t bytes, int to, int tag) const;
  // Blocks for the next message from `from` (MPI_ANY_SOURCE: any sender) with `tag`, and
  // receives it where `place(n)` says, n being its length; returns its sender.
  int receive(int from, int tag, const std::function<std::byte*(std::size_t n)>& place) const;

 private:
  MPI_Comm comm_;
};

// MPI_Waitall on `count` requests, raising Error on failure. In a SimGrid build it waits
// for them one by one in order instead: SMPI's MPI_Waitall runs one MPI_Waitany over all
// requests per completion, O(count^2) simulator work (with 2(P-1) requests per rank that
// dominated runs of 512 simulated ranks). The simulated time is the same, since the
// transfers progress in the simulated network whether or not the rank waits on them.
void wait_all(int count, MPI_Request* requests);

}  // namespace libcomm::detail
