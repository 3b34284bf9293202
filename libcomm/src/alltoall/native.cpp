// native: the MPI library's own MPI_Alltoall, the reference every test and benchmark
// compares with. Its cost formula is what that library runs (Open MPI's fixed decision,
// MPICH's size rule).
#include <limits>

#include "../runtime/mpi_bytes.hpp"
#include "../runtime/plan_state.hpp"
#include "alltoall_internal.hpp"

namespace libcomm::detail {

namespace {

// Open MPI's fixed alltoall decision (coll/tuned's decision function, also SMPI's default
// selector): the algorithm it runs for P ranks and b-byte blocks. 1 linear, 2 pairwise,
// 3 modified Bruck, 4 linear with a bounded window of requests, 5 two-process exchange.
struct Threshold {
  std::uint64_t below;  // block bytes
  int algo;
};
struct SizeRule {
  int ranks_below;
  Threshold rules[11];
};
constexpr std::uint64_t kAll = std::numeric_limits<std::uint64_t>::max();
constexpr SizeRule kOpenMpiAlltoall[] = {
    {3, {{2, 2}, {4, 5}, {16, 2}, {64, 5}, {256, 2}, {4096, 5}, {32768, 2}, {262144, 4}, {1048576, 5}, {kAll, 2}}},
    {8, {{8192, 4}, {16384, 1}, {65536, 4}, {524288, 1}, {1048576, 2}, {kAll, 1}}},
    {16, {{262144, 4}, {kAll, 1}}},
    {32, {{4, 4}, {512, 3}, {8192, 4}, {32768, 1}, {262144, 4}, {524288, 1}, {kAll, 4}}},
    {64, {{512, 3}, {524288, 1}, {kAll, 4}}},
    {128, {{1024, 3}, {2048, 1}, {4096, 4}, {262144, 1}, {kAll, 2}}},
    {256, {{1024, 3}, {2048, 4}, {262144, 1}, {kAll, 2}}},
    {512, {{1024, 3}, {8192, 4}, {32768, 1}, {kAll, 2}}},
    {1024, {{512, 3}, {8192, 4}, {16384, 1}, {131072, 4}, {262144, 1}, {kAll, 2}}},
    {2048, {{512, 3}, {1024, 4}, {2048, 1}, {16384, 4}, {262144, 1}, {kAll, 4}}},
    {4096, {{1024, 3}, {4096, 4}, {8192, 1}, {131072, 4}, {kAll, 1}}},
    {std::numeric_limits<int>::max(), {{2048, 3}, {8192, 4}, {16384, 1}, {32768, 4}, {65536, 1}, {kAll, 4}}},
};

int open_mpi_alltoall_algorithm(int p, std::uint64_t b) {
  for (const SizeRule& r : kOpenMpiAlltoall) {
    if (p >= r.ranks_below) continue;
    for (const Threshold& t : r.rules)
      if (b < t.below) return t.algo;
  }
  return 1;
}

// Open MPI's fixed decision (SMPI's default selector copies it, running its linear variants
// as the basic linear algorithm), MPICH's size rule (the log-rounds algorithm up to 256 B on
// 8 ranks or more, isend/irecv up to 32 KiB, pairwise beyond), else the cheapest of those.
double predicted_time(const AlltoallOp::Shape& s, const CostParams& c) {
  const Layout l = layout_of(s);
  const double b = static_cast<double>(s.block);
  const double linear = cost::all_at_once(l, c, b), pairs = cost::one_exchange_per_round(l, c, b);
  const double log_rounds = cost::log_rounds_alltoall(l, c, b);
#ifdef LIBCOMM_SIMGRID
  // SMPI's copy of Open MPI's decision (smpi/coll-selector:ompi, SimGrid 3.32) is the table
  // above, with linear_sync and two_proc run as the basic linear algorithm and pairwise as
  // SMPI's XOR pairs (partners on the node first).
  if (cost::mpi_library() == cost::MpiLibrary::OpenMpi) {
    const int algo = open_mpi_alltoall_algorithm(s.p, s.block);
    return algo == 3 ? log_rounds : algo == 2 ? cost::xor_exchange_rounds(l, c, b) : linear;
  }
#endif
  switch (cost::mpi_library()) {
    case cost::MpiLibrary::Smpi:
    case cost::MpiLibrary::OpenMpi:
      switch (open_mpi_alltoall_algorithm(s.p, s.block)) {
        case 2: return cost::is_power_of_two(s.p) ? cost::xor_exchange_rounds(l, c, b) : pairs;
        case 5: return pairs;
        case 3: return log_rounds;
        default: return linear;
      }
    case cost::MpiLibrary::Mpich:
      if (s.block <= 256 && s.p >= 8) return log_rounds;
      return s.block <= 32768 ? linear : pairs;
    case cost::MpiLibrary::Other: break;
  }
  return std::min({linear, pairs, log_rounds});
}

void run(const AlltoallOp::Args& a, const AlltoallOp::Shape& s, const Comm& comm) {
  const MpiBytes block(s.block);
  check_mpi(MPI_Alltoall(a.send, block.count(), block.type(), a.recv, block.count(), block.type(), comm.mpi()),
            "MPI_Alltoall");
}

std::shared_ptr<PlanState> plan(const PlanCall<AlltoallOp>& call) {
  const std::size_t b = call.shape.block;
  const MPI_Comm mc = call.comm.mpi();
  return native_plan(call.comm, "native", call.choice.reason(), [b, mc](const void* sp, void* rp, MPI_Request* q) {
    const MpiBytes block(b);
    check_mpi(MPI_Ialltoall(sp, block.count(), block.type(), rp, block.count(), block.type(), mc, q), "MPI_Ialltoall");
  });
}

}  // namespace

extern const AlltoallAlgorithm native_alltoall{.algo = AlltoallAlgo::Native, .name = "native",
                                               .summary = "the MPI library's MPI_Alltoall (reference)",
                                               .paper = "", .cost = predicted_time, .plan = plan, .run = run};

}  // namespace libcomm::detail
