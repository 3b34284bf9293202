// The victim of tests/faults/kill_rank.sh and stop_rank.sh: runs one libcomm collective
// over and over on every rank, after the first run writing DIR/rank.N.pid (its process
// id) so that a script can kill or stop one rank in the middle of a collective.
//   fault_victim OP ALGO DIR
//     OP: alltoall, alltoallv, allgather, reduce_scatter (blocking calls), or ialltoallv
//         (the non-blocking form, waited for at once)
//   FAULT_VICTIM_MODE=b|n1|n2: alltoallv's and ialltoallv's mode (paper 001, s. 3.4; default b)
//   FAULT_VICTIM_STOP_AT_CALL=N: see below
//   FAULT_VICTIM_CHECK_EVERY_CALL=1: every call checks its arguments (the default: the first)
//   FAULT_VICTIM_STOP_IN_ONLINE_AGREEMENT=1: see MPI_Iallreduce below
// Only the first run checks its arguments (check_args), so that a stop lands in the
// algorithm's own messages, not in the check's collective (faults.stop_at_check tests
// that one). The program runs in apps::mpi_main, as the mini-apps do, so an Error
// (LIBCOMM_TIMEOUT's) ends it as it ends them: one "fault_victim: error: ..." line per
// rank, then the job.
#include <mpi.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/allgather.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/error.hpp"
#include "libcomm/reduce_scatter.hpp"

namespace {

bool stop_in_online_agreement = false;
std::string pid_dir;

// Writes DIR/rank.N.pid (what fault.sh waits for); with `stop`, rank 1 then stops itself.
void write_pid(int rank, bool stop) {
  std::ofstream(pid_dir + "/rank." + std::to_string(rank) + ".pid") << getpid() << "\n";
  if (stop && rank == 1) raise(SIGSTOP);
}

}  // namespace

// FAULT_VICTIM_STOP_IN_ONLINE_AGREEMENT=1: every rank writes its pid, and rank 1 stops
// itself, as it enters auto's online agreement on a winner: the one MPI_Iallreduce of
// doubles under MPI_MAX that libcomm makes (the candidates' times, after the last
// candidate's run and within the same call, where no call boundary is to stop at), started
// non-blocking because LIBCOMM_TIMEOUT is set. Every other call goes straight to MPI.
extern "C" int MPI_Iallreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  if (stop_in_online_agreement && type == MPI_DOUBLE && op == MPI_MAX) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    write_pid(rank, true);
  }
  return PMPI_Iallreduce(send, recv, count, type, op, comm, request);
}

namespace {

int run(int argc, char** argv) {
  libcomm::require(argc == 4, "usage: fault_victim OP ALGO DIR (OP: alltoall, alltoallv, ialltoallv, allgather, "
                              "reduce_scatter)");
  const std::string op = argv[1], algo = argv[2];
  pid_dir = argv[3];
  const char* agreement_text = std::getenv("FAULT_VICTIM_STOP_IN_ONLINE_AGREEMENT");
  stop_in_online_agreement = agreement_text && std::string(agreement_text) == "1";
  const libcomm::Comm comm(MPI_COMM_WORLD);
  const auto p = static_cast<std::size_t>(comm.size());
  const std::size_t block = 64 * 1024;  // long enough that a kill lands inside a collective
  std::vector<std::byte> send(block * p, std::byte{1}), recv(block * p);
  std::vector<std::int64_t> counts(p, static_cast<std::int64_t>(block)), displs(p);
  for (std::size_t r = 0; r < p; ++r) displs[r] = static_cast<std::int64_t>(r * block);
  const std::vector<std::size_t> blocks(p, block);
  bool first = true;
  const char* check_text = std::getenv("FAULT_VICTIM_CHECK_EVERY_CALL");
  const bool check_every_call = check_text && std::string(check_text) == "1";
  const auto once = [&] {
    libcomm::AlltoallOptions a2a;
    libcomm::AlltoallvOptions a2av;
    libcomm::AllgatherOptions ag;
    libcomm::ReduceScatterOptions rs;
    a2a.check_args = a2av.check_args = ag.check_args = rs.check_args = first || check_every_call;
    if (const char* mode = std::getenv("FAULT_VICTIM_MODE")) a2av.mode = libcomm::alltoallv_mode_from_name(mode);
    first = false;
    if (op == "alltoall")
      libcomm::alltoall(send.data(), recv.data(), block, comm, libcomm::alltoall_algo_from_name(algo), a2a);
    else if (op == "alltoallv")
      libcomm::alltoallv(send.data(), counts, displs, recv.data(), counts, displs, comm,
                         libcomm::alltoallv_algo_from_name(algo), a2av);
    else if (op == "ialltoallv")
      libcomm::ialltoallv(send.data(), counts, displs, recv.data(), counts, displs, comm,
                          libcomm::alltoallv_algo_from_name(algo), a2av)
          .wait();
    else if (op == "allgather")
      libcomm::allgather(send.data(), recv.data(), block, comm, libcomm::allgather_algo_from_name(algo), ag);
    else if (op == "reduce_scatter")
      libcomm::reduce_scatter(send.data(), recv.data(), blocks, libcomm::ElemType::Double, libcomm::ReduceOp::Sum,
                              comm, libcomm::reduce_scatter_algo_from_name(algo), rs);
    else
      throw libcomm::Error("unknown OP '" + op + "'");
  };
  // FAULT_VICTIM_STOP_AT_CALL=N (N >= 2): every rank writes its pid after call N - 1, and
  // rank 1 then stops itself, before call N starts, so that the hit lands at the start of
  // a chosen call (the count exchange a staged ialltoallv starts with; auto's agreement at
  // a site's 65th call) rather than anywhere. Unset: the pids after the first call.
  const char* stop_text = std::getenv("FAULT_VICTIM_STOP_AT_CALL");
  const int stop_at = stop_text ? std::stoi(stop_text) : 0;
  libcomm::require(stop_text == nullptr || stop_at >= 2, "FAULT_VICTIM_STOP_AT_CALL must be 2 or more");
  for (int call = 1;; ++call) {  // until a script kills or stops a rank and the job ends
    once();
    if (stop_in_online_agreement || call != (stop_at ? stop_at - 1 : 1)) continue;
    write_pid(comm.rank(), stop_at != 0);
  }
}

}  // namespace

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "fault_victim", run); }
