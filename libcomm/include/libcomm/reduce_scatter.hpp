// All-to-all reduction (MPI_Reduce_scatter semantics): every rank holds a vector of
// sum(counts) elements split into P consecutive blocks; block j, combined element-wise
// over all ranks, ends on rank j. Paper 004, sections 4.1 (Fig. 6), 4.2.2-4.2.4
// (Figs. 12-20) and 5 (reduce-and-spread, Fig. 21).
#pragma once

#include <complex>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "libcomm/allgather.hpp"
#include "libcomm/choice.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/error.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"
#include "libcomm/reduction.hpp"

namespace libcomm {

enum class ReduceScatterAlgo {
  Auto,          // the Auto policy (libcomm/auto_policy.hpp): online, model or table
  Native,        // MPI_Reduce_scatter: the reference
  Ring,          // single Hamiltonian cycle (s. 4.1, Fig. 6)
  DCycles,       // d Hamiltonian cycles, xor translation per block (s. 4.2.2, Figs. 12-19)
  ReduceSpread,  // butterfly reduce-and-spread, then subselection (s. 5, Fig. 21), any P
  SharedWindow,  // every rank on one node: each copies its vector into the node's shared
                 // window, a node barrier, each combines its block from all P copies
};



using ReduceScatterAlgoInfo = AlgoInfo<ReduceScatterAlgo>;
const std::vector<ReduceScatterAlgoInfo>& reduce_scatter_algorithms();
std::string_view reduce_scatter_algo_name(ReduceScatterAlgo a);
ReduceScatterAlgo reduce_scatter_algo_from_name(std::string_view name);
ReduceScatterAlgo reduce_scatter_algo_from_env(ReduceScatterAlgo fallback = ReduceScatterAlgo::Auto);  // LIBCOMM_REDUCE_SCATTER

struct ReduceScatterOptions {
  bool check_args = true;
  // d_cycles on P not a power of two: true (default, as for every operation) = run ring
  // instead and say why (the choice's reason); false = Error on every rank. Auto never
  // picks d_cycles there.
  bool allow_fallback = true;
  NodeOrder order = NodeOrder::Binary;  // ring only (see allgather.hpp)
};

using ReduceScatterChoice = Choice<ReduceScatterAlgo>;
ReduceScatterChoice choose_reduce_scatter(ReduceScatterAlgo requested, int nprocs,
                                          const ReduceScatterOptions& opts = {});
// What reduce_scatter() runs on comm: Auto asks the active tuning table
// (libcomm/tuning.hpp) with P, ranks per node and the largest block in bytes; without a
// row, or when the row's algorithm cannot run here, the rule above.
ReduceScatterChoice choose_reduce_scatter(ReduceScatterAlgo requested, std::size_t block_bytes,
                                          const Comm& comm, const ReduceScatterOptions& opts = {});

// counts[r]: the bytes of rank r's block (whole elements of `type`), the same on every
// rank; send holds sum(counts) bytes, recv at least counts[rank]. Bytes, as in every
// operation's untyped form; the typed forms below count elements of T. Returns what ran
// and why.
ReduceScatterChoice reduce_scatter(const void* send, void* recv, std::span<const std::size_t> counts,
                                   ElemType type, ReduceOp op, const Comm& comm,
                                   ReduceScatterAlgo algo = ReduceScatterAlgo::Auto,
                                   const ReduceScatterOptions& opts = {});

// Non-blocking form (libcomm/plan.hpp): progresses on test() / wait(); no collective
// argument check (check mode still compares counts, type and operation).
Request ireduce_scatter(const void* send, void* recv, std::span<const std::size_t> counts, ElemType type,
                        ReduceOp op, const Comm& comm, ReduceScatterAlgo algo = ReduceScatterAlgo::Auto,
                        const ReduceScatterOptions& opts = {});
// Persistent plan (MPI_Reduce_scatter_init): built once, collective, the argument check
// runs here; then plan.start(send, recv) and plan.wait() as often as needed.
Plan plan_reduce_scatter(const Comm& comm, std::span<const std::size_t> counts, ElemType type, ReduceOp op,
                         ReduceScatterAlgo algo = ReduceScatterAlgo::Auto, const ReduceScatterOptions& opts = {});
// Rank `rank`'s step program for counts.size() ranks, counts in bytes (no MPI; Auto and fallbacks resolved
// as choose_reduce_scatter(requested, P) does; not for native).
StepProgram reduce_scatter_program(ReduceScatterAlgo algo, std::span<const std::size_t> counts, ElemType type,
                                   ReduceOp op, int rank, const ReduceScatterOptions& opts = {});

// Typed form: counts in elements of T.
template <class T>
ReduceScatterChoice reduce_scatter(std::span<const T> send, std::span<T> recv,
                                   std::span<const std::size_t> counts, ReduceOp op, const Comm& comm,
                                   ReduceScatterAlgo algo = ReduceScatterAlgo::Auto,
                                   const ReduceScatterOptions& opts = {}) {
  std::size_t total = 0;
  std::vector<std::size_t> bytes(counts.size());
  for (std::size_t k = 0; k < counts.size(); ++k) {
    total += counts[k];
    bytes[k] = counts[k] * sizeof(T);
  }
  const auto me = static_cast<std::size_t>(comm.rank());
  require(counts.size() == static_cast<std::size_t>(comm.size()),
          "reduce_scatter: rank " + std::to_string(me) + ": counts has " +
              std::to_string(counts.size()) + " entries, P = " + std::to_string(comm.size()));
  require(send.size() >= total && recv.size() >= counts[me],
          "reduce_scatter: rank " + std::to_string(me) + ": send holds " +
              std::to_string(send.size()) + " (need " + std::to_string(total) + "), recv " +
              std::to_string(recv.size()) + " (need " + std::to_string(counts[me]) + ") elements");
  return reduce_scatter(send.data(), recv.data(), bytes, elem_type_of<T>(), op, comm, algo, opts);
}

// Equal blocks (MPI_Reduce_scatter_block): send holds P * recv.size() elements.
template <class T>
ReduceScatterChoice reduce_scatter_block(std::span<const T> send, std::span<T> recv, ReduceOp op,
                                       const Comm& comm, ReduceScatterAlgo algo = ReduceScatterAlgo::Auto,
                                       const ReduceScatterOptions& opts = {}) {
  const std::vector<std::size_t> counts(static_cast<std::size_t>(comm.size()), recv.size());
  return reduce_scatter<T>(send, recv, counts, op, comm, algo, opts);
}

}  // namespace libcomm
