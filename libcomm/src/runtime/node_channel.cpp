#include "node_channel.hpp"

#include "comm_cache.hpp"
#include "libcomm/error.hpp"
#include "mpi_bytes.hpp"
#include "plan_state.hpp"

namespace libcomm::detail {

OwnedComm::~OwnedComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

namespace {

// Whether the processes of `node` share memory, agreed on over `all` (one node that does
// not makes every node use messages). Under SimGrid every simulated process is a thread of
// one OS process, so they always do (and the copies are charged by the copy model).
bool node_shares_memory(MPI_Comm node, MPI_Comm all) {
  int ok = 1;
#ifndef LIBCOMM_SIMGRID
  ok = shared_memory_node_map(node).num_nodes() == 1 ? 1 : 0;
#else
  (void)node;
#endif
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, all), "MPI_Allreduce");
  return ok != 0;
}

}  // namespace

std::shared_ptr<const NodeChannel> node_channel_of(const Comm& comm) {
  CommCache& cache = comm.cache();
  if (cache.node_channel) return cache.node_channel;
  auto n = std::make_shared<NodeChannel>();
  const NodeMap& nm = comm.nodes();
  check_mpi(MPI_Comm_split(comm.internal(), nm.node_of(comm.rank()), nm.local_index(comm.rank()), &n->node.comm),
            "MPI_Comm_split");
  n->shared_memory = node_shares_memory(n->node.comm, comm.internal());
  cache.node_channel = n;
  return n;
}

std::shared_ptr<PlanState> node_program_plan(const Comm& comm, StepProgram program, std::string reason,
                                             bool own_scratch) {
  const auto node = node_channel_of(comm);
  require(node->shared_memory && comm.nodes().num_nodes() == 1, [&] {
    return program.algorithm + ": rank " + std::to_string(comm.rank()) +
           ": needs every rank on one node whose processes share memory (node map: " + comm.nodes().describe() + ")";
  });
  return program_plan(comm, std::move(program), std::move(reason), own_scratch, {node->node.comm}, node);
}

}  // namespace libcomm::detail
