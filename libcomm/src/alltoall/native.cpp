// native: the MPI library's own MPI_Alltoall, the reference every test and benchmark
// compares with. Its cost formula is what that library runs (Open MPI's fixed decision,
// MPICH's size rule).
#include <limits>

#include "../algorithm/decision_table.hpp"
#include "../runtime/mpi_bytes.hpp"
#include "../runtime/plan_state.hpp"
#include "alltoall_internal.hpp"

namespace libcomm::detail {

namespace {

// Open MPI's fixed alltoall decision (coll/tuned's decision function, also SMPI's default
// selector): the algorithm it runs for P ranks and b-byte blocks.
enum OpenMpiAlltoall { Linear, Pairwise, ModifiedBruck, LinearSync, TwoProc };
const cost::DecisionBand<OpenMpiAlltoall> kOpenMpiAlltoall[] = {
    {3, {{2, Pairwise}, {4, TwoProc}, {16, Pairwise}, {64, TwoProc}, {256, Pairwise}, {4096, TwoProc},
         {32768, Pairwise}, {262144, LinearSync}, {1048576, TwoProc}, {cost::kAnySize, Pairwise}}},
    {8, {{8192, LinearSync}, {16384, Linear}, {65536, LinearSync}, {524288, Linear}, {1048576, Pairwise},
         {cost::kAnySize, Linear}}},
    {16, {{262144, LinearSync}, {cost::kAnySize, Linear}}},
    {32, {{4, LinearSync}, {512, ModifiedBruck}, {8192, LinearSync}, {32768, Linear}, {262144, LinearSync},
          {524288, Linear}, {cost::kAnySize, LinearSync}}},
    {64, {{512, ModifiedBruck}, {524288, Linear}, {cost::kAnySize, LinearSync}}},
    {128, {{1024, ModifiedBruck}, {2048, Linear}, {4096, LinearSync}, {262144, Linear}, {cost::kAnySize, Pairwise}}},
    {256, {{1024, ModifiedBruck}, {2048, LinearSync}, {262144, Linear}, {cost::kAnySize, Pairwise}}},
    {512, {{1024, ModifiedBruck}, {8192, LinearSync}, {32768, Linear}, {cost::kAnySize, Pairwise}}},
    {1024, {{512, ModifiedBruck}, {8192, LinearSync}, {16384, Linear}, {131072, LinearSync}, {262144, Linear},
            {cost::kAnySize, Pairwise}}},
    {2048, {{512, ModifiedBruck}, {1024, LinearSync}, {2048, Linear}, {16384, LinearSync}, {262144, Linear},
            {cost::kAnySize, LinearSync}}},
    {4096, {{1024, ModifiedBruck}, {4096, LinearSync}, {8192, Linear}, {131072, LinearSync}, {cost::kAnySize, Linear}}},
    {std::numeric_limits<int>::max(), {{2048, ModifiedBruck}, {8192, LinearSync}, {16384, Linear}, {32768, LinearSync},
                                       {65536, Linear}, {cost::kAnySize, LinearSync}}},
};

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
    const auto algo = cost::decide(kOpenMpiAlltoall, s.p, b, Linear);
    return algo == ModifiedBruck ? log_rounds : algo == Pairwise ? cost::xor_exchange_rounds(l, c, b) : linear;
  }
#endif
  switch (cost::mpi_library()) {
    case cost::MpiLibrary::Smpi:
    case cost::MpiLibrary::OpenMpi:
      switch (cost::decide(kOpenMpiAlltoall, s.p, b, Linear)) {
        case Pairwise: return cost::is_power_of_two(s.p) ? cost::xor_exchange_rounds(l, c, b) : pairs;
        case TwoProc: return pairs;
        case ModifiedBruck: return log_rounds;
        case Linear:
        case LinearSync: return linear;
      }
      break;
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
