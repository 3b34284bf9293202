// Bandwidth of the fft3d pack/unpack kernels against memcpy of the same bytes on this
// machine (Google Benchmark; bytes_per_second counts the bytes moved once).
//   fft3d_bench_kernels [--benchmark_filter=...]
// Arguments: grid edge n (an n^3 complex grid) and the peers P of the transpose.
//   slab:      the x <-> y transpose of one rank of a slab decomposition over P ranks:
//              n/P rows of n*n elements, pieces of n/P * n elements (long runs)
//   pencil_z:  the y <-> z transpose of a pencil over a P x P grid: (n/P)^2 rows of n
//              elements, pieces of n/P elements (short runs)
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "kernels/fft_pack.hpp"
#include "kernels/fft_plan.hpp"

namespace {

using kernels::cplx;
using kernels::RowPieces;

RowPieces layout(std::size_t rows, std::size_t row_len, std::size_t peers) {
  RowPieces l;
  l.rows = rows;
  l.row_len = row_len;
  for (std::size_t d = 0; d < peers; ++d) {
    l.piece_offset.push_back(d * (row_len / peers));
    l.piece_len.push_back(row_len / peers);
    l.block_offset.push_back(d * rows * (row_len / peers));
  }
  return l;
}

RowPieces slab(std::size_t n, std::size_t p) { return layout(n / p, n * n, p); }
RowPieces pencil_z(std::size_t n, std::size_t p) { return layout((n / p) * (n / p), n, p); }

template <RowPieces (*Make)(std::size_t, std::size_t), bool Pack>
void BM_kernel(benchmark::State& state) {
  const auto l = Make(static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)));
  const std::size_t count = l.rows * l.row_len;
  kernels::FftBuffer<cplx> a(count), b(count);
  for (std::size_t i = 0; i < count; ++i) a[i] = cplx(static_cast<double>(i), 1.0), b[i] = 0;
  for (auto _ : state) {
    if (Pack)
      kernels::pack_row_pieces(a.data(), b.data(), l);
    else
      kernels::unpack_row_pieces(a.data(), b.data(), l);
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(count * sizeof(cplx)));
}

void BM_memcpy(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::size_t count = n * n * n / static_cast<std::size_t>(state.range(1));
  kernels::FftBuffer<cplx> a(count), b(count);
  for (std::size_t i = 0; i < count; ++i) a[i] = cplx(static_cast<double>(i), 1.0), b[i] = 0;
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), count * sizeof(cplx));
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(count * sizeof(cplx)));
}

// memcpy of one slab's bytes (n^3 / P elements) is the bound for both layouts below.
BENCHMARK(BM_memcpy)->ArgsProduct({{64, 128}, {2, 8}})->ArgNames({"n", "P"});
BENCHMARK(BM_kernel<slab, true>)->Name("pack_slab")->ArgsProduct({{64, 128}, {2, 8}})->ArgNames({"n", "P"});
BENCHMARK(BM_kernel<slab, false>)->Name("unpack_slab")->ArgsProduct({{64, 128}, {2, 8}})->ArgNames({"n", "P"});
// pencil over a P x P grid holds n^3 / P^2 elements: compare with memcpy at P^2.
BENCHMARK(BM_kernel<pencil_z, true>)->Name("pack_pencil_z")->ArgsProduct({{64, 128}, {2, 4}})->ArgNames({"n", "P"});
BENCHMARK(BM_kernel<pencil_z, false>)->Name("unpack_pencil_z")->ArgsProduct({{64, 128}, {2, 4}})->ArgNames({"n", "P"});
BENCHMARK(BM_memcpy)->Name("memcpy_pencil")->ArgsProduct({{64, 128}, {4, 16}})->ArgNames({"n", "P2"});

}  // namespace

BENCHMARK_MAIN();
