// What one blocking call costs libcomm beyond the MPI library's own collective: every
// operation's native path (libcomm's dispatch to MPI) against named algorithms, at one
// block size, in two ways, side by side in one run:
//
//   loop  N calls back to back, the mean per call (at 1 rank: the bookkeeping alone, the
//         "message" being a local copy);
//   cold  single calls, each after a memset of the receive buffer, a 256 KiB memset that
//         pushes the call's data out of L1/L2, and a barrier, as commbench times them: the
//         median over N of the slowest rank.
//
// Not a test (a smoke run at 8 B keeps it working). Usage:
//   mpirun -np P build/tests/mpi/mpi_call_overhead [BYTES [N]]        (default 8 B, 20000 calls)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "libcomm/libcomm.hpp"

namespace {

struct Case {
  std::string name;
  std::function<void()> call;
};

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    const libcomm::Comm comm(MPI_COMM_WORLD);
    const std::size_t b = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 8;
    const int n = argc > 2 ? std::atoi(argv[2]) : 20000;
    libcomm::require(b % 8 == 0 && n > 0, "bench_call_overhead: BYTES must be a multiple of 8, N positive");
    const int p = comm.size();
    const auto up = static_cast<std::size_t>(p);
    std::vector<std::byte> send(b * up, std::byte{1}), recv(b * up), junk(256 * 1024);
    const std::vector<std::size_t> blocks(up, b);
    std::vector<std::int64_t> counts(up, static_cast<std::int64_t>(b)), displs(up);
    for (std::size_t k = 0; k < up; ++k) displs[k] = static_cast<std::int64_t>(k * b);
    libcomm::AlltoallOptions a2a;
    libcomm::AllgatherOptions ag;
    libcomm::ReduceScatterOptions rs;
    libcomm::AlltoallvOptions a2av;
    a2a.check_args = ag.check_args = rs.check_args = a2av.check_args = false;
    using libcomm::AlltoallAlgo, libcomm::AllgatherAlgo, libcomm::ReduceScatterAlgo, libcomm::AlltoallvAlgo;
    const auto alltoall = [&](AlltoallAlgo a) {
      return [&, a] { libcomm::alltoall(send.data(), recv.data(), b, comm, a, a2a); };
    };
    const auto allgather = [&](AllgatherAlgo a) {
      return [&, a] { libcomm::allgather(send.data(), recv.data(), b, comm, a, ag); };
    };
    const auto reduce_scatter = [&](ReduceScatterAlgo a) {
      return [&, a] {
        libcomm::reduce_scatter(send.data(), recv.data(), blocks, libcomm::ElemType::Double, libcomm::ReduceOp::Sum,
                                comm, a, rs);
      };
    };
    const auto alltoallv = [&](AlltoallvAlgo a) {
      return [&, a] { libcomm::alltoallv(send.data(), counts, displs, recv.data(), counts, displs, comm, a, a2av); };
    };
    const std::vector<std::vector<Case>> ops = {
        {{"alltoall native", alltoall(AlltoallAlgo::Native)},
         {"alltoall linear", alltoall(AlltoallAlgo::Linear)},
         {"alltoall bruck", alltoall(AlltoallAlgo::Bruck)},
         {"alltoall auto", alltoall(AlltoallAlgo::Auto)}},
        {{"allgather native", allgather(AllgatherAlgo::Native)},
         {"allgather ring", allgather(AllgatherAlgo::Ring)},
         {"allgather auto", allgather(AllgatherAlgo::Auto)}},
        {{"reduce_scatter native", reduce_scatter(ReduceScatterAlgo::Native)},
         {"reduce_scatter ring", reduce_scatter(ReduceScatterAlgo::Ring)}},
        {{"alltoallv native", alltoallv(AlltoallvAlgo::Native)},
         {"alltoallv direct", alltoallv(AlltoallvAlgo::Direct)},
         {"alltoallv auto", alltoallv(AlltoallvAlgo::Auto)}}};
    if (comm.rank() == 0)
      std::printf("%d ranks, %zu B blocks, %d calls; ratios against the operation's native\n\n"
                  "%-24s %10s %7s %10s %7s\n", p, b, n, "call", "loop_ns", "ratio", "cold_ns", "ratio");
    for (const auto& cases : ops) {
      std::vector<double> loop(cases.size()), cold(cases.size());
      for (std::size_t k = 0; k < cases.size(); ++k) {
        cases[k].call();  // builds the plan, makes the decision
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < n; ++i) cases[k].call();
        double t = (MPI_Wtime() - t0) / n;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        loop[k] = t;
      }
      std::vector<std::vector<double>> single(cases.size());
      for (int i = 0; i < n; ++i)
        for (std::size_t k = 0; k < cases.size(); ++k) {  // interleaved: the machine drifts alike
          std::memset(recv.data(), 0xA5, recv.size());
          std::memset(junk.data(), i & 0xFF, junk.size());
          MPI_Barrier(MPI_COMM_WORLD);
          const double t0 = MPI_Wtime();
          cases[k].call();
          double t = MPI_Wtime() - t0;
          MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          single[k].push_back(t);
        }
      for (std::size_t k = 0; k < cases.size(); ++k) cold[k] = median(single[k]);
      if (comm.rank() == 0)
        for (std::size_t k = 0; k < cases.size(); ++k)
          std::printf("%-24s %10.0f %7.2f %10.0f %7.2f\n", cases[k].name.c_str(), loop[k] * 1e9, loop[k] / loop[0],
                      cold[k] * 1e9, cold[k] / cold[0]);
    }
  } catch (const libcomm::Error& e) {
    std::fprintf(stderr, "bench_call_overhead: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
