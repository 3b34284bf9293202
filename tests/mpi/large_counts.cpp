// Memory-heavy test of the count-taking collectives (registered only with
// -DLIBCOMM_LARGE_TESTS=ON, label "large"): more than 2^31 elements in one call.
//
//   alltoallv   1 rank: one count of 2^31 + 16 one-byte elements (a count beyond INT_MAX);
//               2 ranks: counts of 0.6 G elements per pair, 2.4 G elements in the call
//   allgatherv  2 ranks: blocks of 1.1 G bytes, 2.2 G bytes gathered on every rank
//   reduce_scatter  2 ranks: 0.3 G floats per block, 2.4 GB send buffers (elements beyond
//               2^31 would need 2 x 8.6 GB on one rank: not on a 23 GB machine shared
//               with other jobs; this run covers byte offsets beyond 2^31)
//
// Every algorithm that applies runs once; every byte or element is checked. Needs about
// 9 GB at 2 ranks. Usage: large_counts [SCALE] (SCALE < 1 shrinks every size, e.g. 0.001
// for a smoke run).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "libcomm/allgather.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/reduce_scatter.hpp"

namespace {

using Bytes = std::unique_ptr<std::byte[], decltype(&std::free)>;

// Untouched until filled: malloc'ed memory, not value-initialised vectors.
Bytes allocate(std::size_t n, int me) {
  Bytes b(static_cast<std::byte*>(std::malloc(n == 0 ? 1 : n)), &std::free);
  if (!b) {
    std::fprintf(stderr, "rank %d: cannot allocate %zu bytes\n", me, n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return b;
}

int me = 0, p = 1;
int failures = 0;

// Prints one result line on rank 0; `bad` is this rank's count of wrong blocks.
void report(const std::string& what, long long bad, const std::string& error, double t) {
  if (!error.empty()) {
    std::fprintf(stderr, "rank %d: %s: error: %s\n", me, what.c_str(), error.c_str());
    bad += 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (me == 0) std::printf("  %-34s %8.2f s  %s\n", what.c_str(), t, bad ? "FAIL" : "PASS");
  std::fflush(stdout);
  failures += bad ? 1 : 0;
}

template <class F>
void timed(const std::string& what, F&& run, const std::function<long long()>& check) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  std::string error;
  try {
    run();
  } catch (const libcomm::Error& e) {
    error = e.what();
  }
  const double t = MPI_Wtime() - t0;
  report(what, error.empty() ? check() : 0, error, t);
}

void alltoallv_large(double scale) {
  // counts[i][j]: one count beyond INT_MAX at 1 rank; 0.6 G (+ i + 2j, so no two agree)
  // elsewhere.
  auto count = [&](int i, int j) -> std::int64_t {
    if (p == 1) return static_cast<std::int64_t>(((std::int64_t{1} << 31) + 16) * scale);
    return static_cast<std::int64_t>(600'000'000 * scale) + i + 2 * j;
  };
  const auto up = static_cast<std::size_t>(p);
  std::vector<std::int64_t> sc(up), sd(up), rc(up), rd(up);
  std::int64_t stotal = 0, rtotal = 0, call_total = 0;
  for (int j = 0; j < p; ++j) {
    sc[j] = count(me, j), sd[j] = stotal, stotal += sc[j];
    rc[j] = count(j, me), rd[j] = rtotal, rtotal += rc[j];
    for (int i = 0; i < p; ++i) call_total += count(i, j);
  }
  if (me == 0)
    std::printf("alltoallv: %lld elements of 1 B in the call, %lld sent by rank 0\n",
                static_cast<long long>(call_total), static_cast<long long>(stotal));
  Bytes send = allocate(static_cast<std::size_t>(stotal), me);
  Bytes recv = allocate(static_cast<std::size_t>(rtotal), me);
  for (int j = 0; j < p; ++j)
    apps::fill_pattern(send.get() + sd[j], me, j, static_cast<std::size_t>(sc[j]));
  using A = libcomm::AlltoallvAlgo;
  for (A algo : {A::Native, A::Direct, A::TwoStage, A::FourStage}) {
    const libcomm::Comm comm(MPI_COMM_WORLD, "flat");  // scratch freed per algorithm
    std::memset(recv.get(), 0xA5, static_cast<std::size_t>(rtotal));
    timed("alltoallv " + std::string(libcomm::alltoallv_algo_name(algo)),
          [&] {
            libcomm::alltoallv(send.get(), sc, sd, recv.get(), rc, rd, comm, algo);
          },
          [&] {
            long long bad = 0;
            for (int i = 0; i < p; ++i) {
              const auto n = static_cast<std::size_t>(rc[i]);
              const std::size_t at = apps::check_pattern(recv.get() + rd[i], i, me, n);
              if (at != n) {
                std::fprintf(stderr, "rank %d: block from %d differs at element %zu of %zu\n",
                             me, i, at, n);
                ++bad;
              }
            }
            return bad;
          });
  }
}

void allgatherv_large(double scale) {
  const auto block = [&](int i) { return static_cast<std::size_t>(1.1e9 * scale) + 3 * i; };
  std::vector<std::size_t> counts;
  std::size_t total = 0;
  for (int i = 0; i < p; ++i) counts.push_back(block(i)), total += block(i);
  std::vector<std::size_t> count_bytes(counts);  // libcomm counts bytes
  for (auto& c : count_bytes) c *= sizeof(float);
  if (me == 0) std::printf("allgatherv: %zu bytes gathered on every rank\n", total);
  Bytes send = allocate(block(me), me);
  Bytes recv = allocate(total, me);
  apps::fill_pattern(send.get(), me, 0, block(me));
  using A = libcomm::AllgatherAlgo;
  // Not native: MPI_Allgatherv's int displacements cannot address 2.2 GB of unequal
  // blocks, and libcomm refuses it with an Error naming the alternatives (seen in the
  // full-size run).
  for (A algo : {A::Ring, A::SendSpread, A::Butterfly, A::DCycles}) {
    if (algo == A::DCycles && (p & (p - 1)) != 0) continue;
    const libcomm::Comm comm(MPI_COMM_WORLD, "flat");
    std::memset(recv.get(), 0xA5, total);
    timed("allgatherv " + std::string(libcomm::allgather_algo_name(algo)),
          [&] { libcomm::allgatherv(send.get(), block(me), recv.get(), counts, comm, algo); },
          [&] {
            long long bad = 0;
            std::size_t off = 0;
            for (int i = 0; i < p; ++i) {
              if (apps::check_pattern(recv.get() + off, i, 0, counts[i]) != counts[i]) ++bad;
              off += counts[i];
            }
            return bad;
          });
  }
}

void reduce_scatter_large(double scale) {
  const auto block = [&](int i) { return static_cast<std::size_t>(3e8 * scale) + 5 * i; };
  std::vector<std::size_t> counts;
  std::size_t total = 0;
  for (int i = 0; i < p; ++i) counts.push_back(block(i)), total += block(i);
  std::vector<std::size_t> count_bytes(counts);  // libcomm counts bytes
  for (auto& c : count_bytes) c *= sizeof(float);
  if (me == 0)
    std::printf("reduce_scatter: %zu floats (%zu B) in each send buffer\n", total,
                total * sizeof(float));
  // Small integers, so every float sum is exact: rank r contributes (r + 1) * (k % 7 + 1).
  Bytes sendb = allocate(total * sizeof(float), me);
  Bytes recvb = allocate(block(me) * sizeof(float), me);
  auto* send = reinterpret_cast<float*>(sendb.get());
  auto* recv = reinterpret_cast<float*>(recvb.get());
  for (std::size_t k = 0; k < total; ++k) send[k] = static_cast<float>((me + 1) * (k % 7 + 1));
  std::size_t mine = 0;
  for (int i = 0; i < me; ++i) mine += counts[i];
  const float ranks_sum = static_cast<float>(p * (p + 1) / 2);
  using A = libcomm::ReduceScatterAlgo;
  for (A algo : {A::Native, A::Ring, A::ReduceSpread, A::DCycles}) {
    if (algo == A::DCycles && (p & (p - 1)) != 0) continue;
    const libcomm::Comm comm(MPI_COMM_WORLD, "flat");
    std::memset(recv, 0, block(me) * sizeof(float));
    timed("reduce_scatter " + std::string(libcomm::reduce_scatter_algo_name(algo)),
          [&] {
            libcomm::reduce_scatter(send, recv, count_bytes, libcomm::ElemType::Float,
                                    libcomm::ReduceOp::Sum, comm, algo);
          },
          [&] {
            for (std::size_t k = 0; k < block(me); ++k)
              if (recv[k] != ranks_sum * static_cast<float>((mine + k) % 7 + 1)) {
                std::fprintf(stderr, "rank %d: element %zu of %zu is %g\n", me, k, block(me),
                             static_cast<double>(recv[k]));
                return 1LL;
              }
            return 0LL;
          });
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int code = 1;
  try {
    const double scale = argc > 1 ? std::atof(argv[1]) : 1.0;
    if (!(scale > 0 && scale <= 1)) throw libcomm::Error("SCALE must be in (0, 1]");
    alltoallv_large(scale);
    if (p > 1) {
      allgatherv_large(scale);
      reduce_scatter_large(scale);
    }
    if (me == 0) std::printf("validation: %s\n", failures ? "FAIL" : "PASS");
    code = failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "large_counts: error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return code;
}
