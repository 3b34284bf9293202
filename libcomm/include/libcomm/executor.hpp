// The executor: runs one rank's part of an AAPC schedule over MPI.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string_view>

#include "libcomm/schedule.hpp"

namespace libcomm {

enum class ExecMode {
  // Per round one MPI_Sendrecv (the plan must be single-ported): tightly coupled, the
  // form of pairwise exchange and of the factor algorithm (paper 000, Fig. 1).
  Blocking,
  // Per round post every receive and send, then wait for the round to finish.
  RoundNonblocking,
  // Post every receive, then every send of the whole schedule in schedule order, and
  // wait once (LAM's linear routine and MPICH's medium-message ring).
  AllAtOnce,
};

std::string_view exec_mode_name(ExecMode m);

// Transfer (src, dst) moves `block_bytes` bytes from send + dst * block_bytes on rank src
// to recv + src * block_bytes on rank dst. Works for blocks beyond INT_MAX bytes.
void execute_aapc(const RankPlan& plan, const std::byte* send, std::byte* recv,
                  std::size_t block_bytes, MPI_Comm comm, ExecMode mode);

}  // namespace libcomm
