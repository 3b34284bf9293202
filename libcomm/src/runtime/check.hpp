// Internal: the cross-rank agreement checks of check mode (libcomm/check.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "libcomm/check.hpp"
#include "libcomm/comm.hpp"

namespace libcomm::detail {

// One argument that every rank must pass alike: its name in messages and this rank's value.
struct SameField {
  std::string_view name;
  std::uint64_t value = 0;
  // Turns a value into text for the message (an enum's name); nullptr prints the number.
  std::string (*to_text)(std::uint64_t) = nullptr;
};

// Every field and every entry of `vec` (named `vec_name`, e.g. "counts") must be equal
// on all ranks. Throws on every rank the same Error("<op>: ranks 0 and 3 disagree on
// block_bytes: rank 0 passed 8, rank 3 passed 16") for the lowest rank that differs from
// rank 0. Collective: one MPI_Allgather, plus one MPI_Bcast when vec is given.
void check_same_on_all_ranks(const Comm& comm, std::string_view op,
                             std::span<const SameField> fields,
                             std::string_view vec_name = {},
                             std::span<const std::uint64_t> vec = {});

// Names of the two count arrays in messages: "sendcounts" is printed "sendcounts[j]";
// with indexed = false just the name ("send_bytes", one value sent to every rank).
struct CountsName {
  std::string_view name;
  bool indexed = true;
};

// Point-to-point agreement: what rank i sends to rank j (sendcounts[j] on rank i) must be
// what rank j expects from rank i (recvcounts[i] on rank j). `unit` names the count's
// unit ("elements", "bytes"). Throws on every rank the same Error naming both ranks, both
// counts and the arrays they come from ("alltoallv: rank 2 sends 5 elements to rank 3
// (its sendcounts[3]) but rank 3 expects 4 (its recvcounts[2])"), or naming the rank
// whose arrays do not hold comm.size() entries. Collective: one MPI_Alltoall and one
// MPI_Allgather.
void check_counts_match(const Comm& comm, std::string_view op, std::string_view unit,
                        std::span<const std::int64_t> sendcounts, CountsName send_name,
                        std::span<const std::int64_t> recvcounts, CountsName recv_name);

// The collective argument check of every operation (Options::check_args): one
// MPI_Allreduce through which every rank learns whether any rank found a local problem
// (null or overlapping buffers, a size that overflows) and whether the ranks agree on the
// sizes and on the algorithm and options, so that every rank throws an Error of the same
// kind instead of some ranks hanging in the exchange. Messages start "<op>: rank <me>: ".
struct ArgumentCheck {
  std::string_view op;
  std::string local;         // this rank's problem, "" when none
  std::uint64_t sizes = 0;   // what must agree: a size, or a hash of the sizes
  std::uint64_t mode = 0;    // the algorithm and the options that must agree
  std::uint64_t extra = 0;   // OR-ed over the ranks and returned (alltoallv: counts beyond int)
};
// `sizes_differ(max, min)` and `modes_differ()` make the text after "rank <me>: ".
std::uint64_t check_arguments(const Comm& comm, const ArgumentCheck& check,
                              const std::function<std::string(std::uint64_t, std::uint64_t)>& sizes_differ,
                              const std::function<std::string()>& modes_differ);

}  // namespace libcomm::detail
