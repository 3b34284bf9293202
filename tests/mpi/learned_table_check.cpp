// A learned tuning table applies only to a run like the one it was learned on
// (libcomm/tuning.hpp, active_tuning_table). Run by tests/mpi/CMakeLists.txt in steps:
//
//   learned_table_check save FILE [NODES]  online learns the all-to-all at 8 and 1000 B on a
//                                          Comm of MPI_COMM_WORLD and saves what it learned
//   learned_table_check use [NODES]        with LIBCOMM_TUNING=FILE: one all-to-all of 1000 B
//                                          under online and one under table; rank 0 prints
//                                          what ran and why, and the active table
//
// NODES is the Comm's node map spec (default shared). Every call's bytes are checked; a
// wrong byte or an error exits 1. What the table did is for the test's expectations:
// "online: ALGO (auto (online): ALGO from FILE line N (learned for this shape, ...))" when
// it applied, the model's reason and "active table: none" after one warning when refused.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "libcomm/libcomm.hpp"

namespace {

using namespace libcomm;

int failures = 0;

// One all-to-all of b bytes per block with Auto, checked: block d of rank r holds r*1000+d.
AlltoallChoice checked_alltoall(std::size_t b, const Comm& comm) {
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<unsigned char> send(b * p), recv(b * p, 0xA5);
  for (std::size_t d = 0; d < p; ++d)
    for (std::size_t k = 0; k < b; ++k)
      send[d * b + k] = static_cast<unsigned char>(comm.rank() * 31 + d * 7 + k);
  const AlltoallChoice c = alltoall(send.data(), recv.data(), b, comm, AlltoallAlgo::Auto);
  for (std::size_t s = 0; s < p; ++s)
    for (std::size_t k = 0; k < b; ++k)
      if (recv[s * b + k] !=
          static_cast<unsigned char>(static_cast<std::size_t>(s) * 31 + comm.rank() * 7 + k)) {
        std::fprintf(stderr, "rank %d: wrong byte %zu from rank %zu (%s)\n", comm.rank(), k, s,
                     c.reason().c_str());
        ++failures;
        return c;
      }
  return c;
}

// Online's decision for blocks of b bytes once it is made.
AlltoallChoice settle(std::size_t b, const Comm& comm) {
  for (int k = 0; k < 1000; ++k) {
    const AlltoallChoice c = checked_alltoall(b, comm);
    if (!c.measuring()) return c;
  }
  std::fprintf(stderr, "online never settled at %zu B\n", b);
  ++failures;
  return {};
}

int run(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "save" && argc > 2) {
    const std::string file = argv[2];
    const Comm comm(MPI_COMM_WORLD, argc > 3 ? argv[3] : "shared");
    set_auto_policy(AutoPolicy::Online);
    const AlltoallChoice small = settle(8, comm), large = settle(1000, comm);
    save_learned_tuning_table(file, comm);
    if (comm.rank() == 0) {
      std::printf("learned: 8 B %s, 1000 B %s\n", std::string(alltoall_algo_name(small)).c_str(),
                  std::string(alltoall_algo_name(large)).c_str());
      std::ifstream in(file);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("# learned-on", 0) == 0) std::printf("saved %s\n", line.c_str());
    }
  } else if (mode == "use") {
    const Comm comm(MPI_COMM_WORLD, argc > 2 ? argv[2] : "shared");
    set_auto_policy(AutoPolicy::Online);
    const AlltoallChoice online = checked_alltoall(1000, comm);
    set_auto_policy(AutoPolicy::Table);
    const AlltoallChoice table = checked_alltoall(1000, comm);
    const auto active = active_tuning_table();
    if (comm.rank() == 0) {
      std::printf("online: %s (%s)\n", std::string(alltoall_algo_name(online)).c_str(),
                  online.reason().c_str());
      std::printf("table: %s (%s)\n", std::string(alltoall_algo_name(table)).c_str(),
                  table.reason().c_str());
      std::printf("active table: %s\n", active ? active->source().c_str() : "none");
    }
  } else {
    std::fprintf(stderr, "usage: learned_table_check save FILE [NODES] | use [NODES]\n");
    return 2;
  }
  int mine = failures, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("learned_table_check: %s\n", all == 0 ? "PASS" : "FAIL");
  return all == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 1;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "learned_table_check: error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::fflush(stdout);
  MPI_Finalize();
  return rc;
}
