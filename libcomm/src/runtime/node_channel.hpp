// The node of a Comm's node map as a communicator of its own (a step program's channel
// for node barriers and the node's shared-memory window, Area::Shared), made once per Comm
// (collectively, by the first call that needs it) and kept in its cache.
#pragma once

#include <mpi.h>

#include <memory>

#include <string>

#include "libcomm/comm.hpp"
#include "libcomm/program.hpp"

namespace libcomm::detail {

// A communicator split off the user's, freed with its owner.
struct OwnedComm {
  MPI_Comm comm = MPI_COMM_NULL;
  OwnedComm() = default;
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
  ~OwnedComm();
};

struct NodeChannel {
  OwnedComm node;              // the ranks of this rank's node, in local-index order
  bool shared_memory = false;  // every node's processes share memory (all ranks agree)
};

std::shared_ptr<const NodeChannel> node_channel_of(const Comm& comm);

struct PlanState;
// The plan of a one-node program whose channel 1 is the node (every rank of comm, in rank
// order): its shared window and node barriers. Error on every rank when the ranks do not
// share memory (a node map that spans machines).
std::shared_ptr<PlanState> node_program_plan(const Comm& comm, StepProgram program, std::string reason,
                                             bool own_scratch);

}  // namespace libcomm::detail
