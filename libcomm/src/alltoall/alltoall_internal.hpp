// The regular all-to-all as an operation of the one driver (driver/algorithm.hpp): its
// traits, defined in alltoall.cpp, and what its algorithm files share. Each algorithm (or
// family of variants) is one file exporting its descriptor; alltoall.cpp lists them.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <string>

#include "../algorithm/operation.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/program.hpp"
#include "libcomm/schedule.hpp"
#include "libcomm/topology.hpp"

namespace libcomm::detail {

// Paper 002, s. 5 (multicore.cpp, Extra::scheme): `inner` resolves the inter-node
// algorithm for a bundle size (native included); `library_collectives` lets the intra-node
// exchange (and a native inter-node one) be the MPI library's all-to-all, for blocking runs
// only.
using InnerChoice = std::function<AlltoallAlgo(std::size_t bundle_bytes)>;

struct AlltoallOp : OperationBase<AlltoallAlgo, AlltoallOptions, Setting::Alltoall, "alltoall", "all-to-all"> {
  struct Args {
    const void* send = nullptr;
    void* recv = nullptr;
    std::size_t block = 0;
  };
  struct Shape : ShapeBase {
    std::size_t block = 0;
    const Topology* tree = nullptr;  // the attached switch tree, or null (one switch)
    const Options* opts = nullptr;
  };
  // What a descriptor adds: the schedule of whole blocks it runs, when it is one
  // (alltoall_schedule), and a paper 002 scheme's program builder (multicore.cpp).
  struct Extra {
    Schedule (*schedule)(int p) = nullptr;
    ScheduleRun run = ScheduleRun::PerRound;  // how the schedule runs as the step program
    StepProgram (*scheme)(const NodeMap& nodes, int rank, std::size_t block_bytes, const InnerChoice& inner,
                          bool library_collectives, bool shared_memory) = nullptr;
  };
  static std::span<const Algorithm<AlltoallOp>> algorithms();
  static Shape shape(const Args& a, const Comm& comm, const Options& o);
  // A shape without a Comm: P ranks on `nodes`, `tree` attached or none.
  static Shape shape(int p, std::size_t block, const NodeMap& nodes, const Topology* tree, const Options& o);
  static std::uint64_t options(const Shape& s);
  static ArgumentCheck argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo, const Options& o,
                                      bool have_buffers);
  static std::string sizes_differ(const Args& a, std::uint64_t max, std::uint64_t min);
  static std::string modes_differ(Algo algo, const Options& o);
  static void check_agreement(const Args& a, const Comm& comm, const Options& o);
};

using AlltoallAlgorithm = Algorithm<AlltoallOp>;

// The schedule of whole blocks a descriptor runs as its step program (Extra::schedule, run).
template <const AlltoallAlgorithm& e>
StepProgram schedule_alltoall_program(const AlltoallOp::Shape& s, int rank) {
  return schedule_program(e.extra.schedule(s.p), rank, s.block, e.extra.run);
}
// P rounds; in round j every rank i sends its block to partner(j, i) (factor, pairwise, ring,
// linear).
template <class Partner>
Schedule partner_schedule(std::string name, int p, int ports, Partner partner) {
  Schedule s{std::move(name), p, ports, {}};
  s.rounds.resize(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < p; ++i) {
      const int dst = partner(j, i);
      s.rounds[j].transfers.push_back({i, dst, aapc_block(i, dst, p)});
    }
  return s;
}

// The schedules whose own refusals a test checks (pairwise.cpp, factor.cpp).
Schedule pairwise_schedule(int p);
Schedule factor_grouped_schedule(int p);

// One blocking exchange per round, P - 1 rounds (ring.cpp; the grouped 1-factor's too).
double one_exchange_per_round(const AlltoallOp::Shape& s, const CostParams& c);
// Every message posted at once (ring.cpp; linear's too).
double all_at_once(const AlltoallOp::Shape& s, const CostParams& c);

}  // namespace libcomm::detail
