// The victim of tests/faults/kill_rank.sh: runs one libcomm collective over and over on
// every rank, after the first run writing DIR/rank.N.pid (its process id) so that the
// script can kill one rank in the middle of a collective.
//   fault_victim OP ALGO DIR      OP: alltoall, alltoallv, allgather or reduce_scatter
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "libcomm/allgather.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/reduce_scatter.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 4) {
    if (rank == 0) std::fprintf(stderr, "usage: fault_victim OP ALGO DIR (OP: alltoall, alltoallv, allgather, reduce_scatter)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::string op = argv[1], algo = argv[2], dir = argv[3];
  const libcomm::Comm comm(MPI_COMM_WORLD);
  const auto p = static_cast<std::size_t>(comm.size());
  const std::size_t block = 64 * 1024;  // long enough that a kill lands inside a collective
  std::vector<std::byte> send(block * p, std::byte{1}), recv(block * p);
  std::vector<std::int64_t> counts(p, static_cast<std::int64_t>(block)), displs(p);
  for (std::size_t r = 0; r < p; ++r) displs[r] = static_cast<std::int64_t>(r * block);
  const std::vector<std::size_t> blocks(p, block);
  const auto run = [&] {
    if (op == "alltoall") {
      libcomm::alltoall(send.data(), recv.data(), block, comm, libcomm::alltoall_algo_from_name(algo));
    } else if (op == "alltoallv") {
      libcomm::alltoallv(send.data(), counts, displs, recv.data(), counts, displs, comm,
                         libcomm::alltoallv_algo_from_name(algo));
    } else if (op == "allgather") {
      libcomm::allgather(send.data(), recv.data(), block, comm, libcomm::allgather_algo_from_name(algo));
    } else if (op == "reduce_scatter") {
      libcomm::reduce_scatter(send.data(), recv.data(), blocks, libcomm::ElemType::Double, libcomm::ReduceOp::Sum,
                              comm, libcomm::reduce_scatter_algo_from_name(algo));
    } else {
      if (rank == 0) std::fprintf(stderr, "fault_victim: unknown OP '%s'\n", op.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  };
  run();
  std::ofstream(dir + "/rank." + std::to_string(rank) + ".pid") << getpid() << "\n";
  for (;;) run();  // until the script kills a rank and mpiexec ends the job
}
