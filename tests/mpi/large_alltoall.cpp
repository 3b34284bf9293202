// Memory-heavy all-to-all test (registered only with -DLIBCOMM_LARGE_TESTS=ON, label
// "large"): counts beyond INT_MAX bytes must work (DESIGN.md, core idea 4).
//
//   1 rank:  one block of 2^31 + 16 bytes (send and recv 2 GiB + 16 B each)
//   2 ranks: blocks of 1.1 GiB, so each buffer holds 2.2 GiB > 2^31 bytes
//
// for native, ring_sendrecv, pairwise, factor, linear and bruck, checking every byte with
// apps::check_pattern. Needs about 4 x P x block bytes plus Bruck's scratch (about 16 GiB
// at 2 ranks). Usage: large_alltoall [BLOCK_BYTES] (default as above).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/alltoall.hpp"

namespace {

int run(int argc, char** argv) {
  int me = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  std::size_t b = p == 1 ? (std::size_t{1} << 31) + 16 : static_cast<std::size_t>(1.1 * (1 << 30));
  if (argc > 1) b = apps::parse_size(argv[1], "BLOCK_BYTES");
  const std::size_t total = b * static_cast<std::size_t>(p);
  if (me == 0)
    std::printf("large_alltoall: P = %d, block %zu B (%s), buffers %zu B (%s) each\n", p, b,
                apps::format_size(b).c_str(), total, apps::format_size(total).c_str());

  // Untouched until filled: malloc'ed memory, not value-initialised vectors.
  std::unique_ptr<std::byte[], decltype(&std::free)> send(
      static_cast<std::byte*>(std::malloc(total)), &std::free);
  std::unique_ptr<std::byte[], decltype(&std::free)> recv(
      static_cast<std::byte*>(std::malloc(total)), &std::free);
  if (!send || !recv) {
    std::fprintf(stderr, "rank %d: cannot allocate 2 x %zu bytes\n", me, total);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int d = 0; d < p; ++d) apps::fill_pattern(send.get() + d * b, me, d, b);

  const std::vector<libcomm::AlltoallAlgo> algos = {
      libcomm::AlltoallAlgo::Native, libcomm::AlltoallAlgo::RingSendrecv,
      libcomm::AlltoallAlgo::Pairwise, libcomm::AlltoallAlgo::Factor,
      libcomm::AlltoallAlgo::Linear, libcomm::AlltoallAlgo::Bruck};
  int failures = 0;
  for (const auto algo : algos) {
    // A Comm per algorithm, so Bruck's scratch buffers go away with it.
    const libcomm::Comm comm(MPI_COMM_WORLD, "flat");
    std::memset(recv.get(), 0xA5, total);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    std::string error;
    libcomm::AlltoallAlgo ran = algo;
    try {
      ran = libcomm::alltoall(send.get(), recv.get(), b, comm, algo);
    } catch (const libcomm::Error& e) {
      error = e.what();
    }
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long long bad = 0;
    if (!error.empty()) {
      std::fprintf(stderr, "rank %d: %s: error: %s\n", me,
                   std::string(libcomm::alltoall_algo_name(algo)).c_str(), error.c_str());
      bad = 1;
    } else {
      for (int s = 0; s < p; ++s) {
        const std::size_t at = apps::check_pattern(recv.get() + s * b, s, me, b);
        if (at != b) {
          std::fprintf(stderr, "rank %d: %s: block from rank %d differs at byte %zu of %zu\n",
                       me, std::string(libcomm::alltoall_algo_name(algo)).c_str(), s, at, b);
          ++bad;
        }
      }
      // The send buffer is unchanged.
      for (int d = 0; d < p; ++d)
        if (apps::check_pattern(send.get() + d * b, me, d, b) != b) {
          std::fprintf(stderr, "rank %d: %s: send block %d was modified\n", me,
                       std::string(libcomm::alltoall_algo_name(algo)).c_str(), d);
          ++bad;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
      std::printf("  %-14s ran %-14s %8.2f s  %s\n",
                  std::string(libcomm::alltoall_algo_name(algo)).c_str(),
                  std::string(libcomm::alltoall_algo_name(ran)).c_str(), t,
                  bad ? "FAIL" : "PASS");
    std::fflush(stdout);
    failures += bad ? 1 : 0;
  }
  if (me == 0)
    std::printf("validation: %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 1;
  try {
    code = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "large_alltoall: error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return code;
}
