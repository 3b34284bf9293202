// The all-to-all broadcast as an operation of the one driver (driver/algorithm.hpp): its
// traits, defined in allgather.cpp, and what its algorithm files share. Each algorithm (or
// family of variants) is one file exporting its descriptor; allgather.cpp lists them.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "../algorithm/operation.hpp"
#include "../cycles/cycles.hpp"
#include "libcomm/allgather.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/program.hpp"

namespace libcomm::detail {

// Block layout of an allgatherv: count[r] bytes from rank r at displ[r] (packed).
struct Blocks {
  std::vector<std::size_t> count, displ;
  std::size_t total = 0;
  std::size_t max = 0;
  bool equal = true;
  explicit Blocks(std::span<const std::size_t> counts);
};

struct AllgatherOp : OperationBase<AllgatherAlgo, AllgatherOptions, Setting::Allgather, "allgather"> {
  struct Args {
    const void* send = nullptr;
    std::size_t send_bytes = 0;
    void* recv = nullptr;
    std::span<const std::size_t> counts;  // empty: the regular form, P blocks of `block`
    std::size_t block = 0;
  };
  struct Shape : ShapeBase {
    const Options* opts = nullptr;
  };
  static std::span<const Algorithm<AllgatherOp>> algorithms();
  static Shape shape(const Args& a, const Comm& comm, const Options& o);
  // A shape without a Comm: blocks of `counts` on `nodes`.
  static Shape shape(std::span<const std::size_t> counts, const NodeMap& nodes, const Options& o);
  static std::uint64_t options(const Shape& s);
  static ArgumentCheck argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo, const Options& o,
                                      bool have_buffers);
  static std::string sizes_differ(const Args&, std::uint64_t, std::uint64_t) {
    return "counts (block sizes) differ across ranks";
  }
  static std::string modes_differ(Algo algo, const Options& o);
  static void check_agreement(const Args& a, const Comm& comm, const Options& o);
};

using AllgatherAlgorithm = Algorithm<AllgatherOp>;

// Rank `rank`'s step program of a builder over the shape's blocks (each algorithm file
// has one: send area the rank's own block, recv area all blocks packed in rank order).
template <StepProgram (*build)(const Blocks&, int, const AllgatherOptions&)>
StepProgram blocks_program(const AllgatherOp::Shape& s, int rank) {
  const std::vector<std::size_t> counts = s.block_sizes();
  return build(Blocks(counts), rank, *s.opts);
}

// Binomial-tree broadcast of `range` from rank 0, one stage per level from `stage`; returns
// the first stage after it (send_spread's spread).
std::uint32_t binomial_broadcast(ProgramBuilder& pb, std::uint32_t stage, ByteRange range);

// The one-node program the unit tests check by itself (shared_window.cpp).
StepProgram shared_window_allgather_program(const Blocks& b, int rank);

}  // namespace libcomm::detail
