// Dispatcher of the regular all-to-all: names, the Auto choice, argument checks and the
// plan cache. The algorithms live one family per file next to this one.
#include "../core/algorithm_table.hpp"
#include "libcomm/alltoall.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "../core/check.hpp"
#include "../core/mpi_bytes.hpp"
#include "../tuning/table_choice.hpp"
#include "alltoall_internal.hpp"
#include "../core/plan_state.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"
#include "libcomm/topology.hpp"
#include "libcomm/hierarchical.hpp"
#include "libcomm/tuning.hpp"

namespace libcomm {

using detail::is_power_of_two;

const std::vector<AlltoallAlgoInfo>& alltoall_algorithms() {
  static const std::vector<AlltoallAlgoInfo> all = {
      {AlltoallAlgo::Auto, "auto", "tuning table (LIBCOMM_TUNING), else size rule: bruck <= 256 B, ring <= 32 KiB, then pairwise (ring_sendrecv if P is not a power of two)"},
      {AlltoallAlgo::Native, "native", "the MPI library's MPI_Alltoall (reference)"},
      {AlltoallAlgo::Linear, "linear", "LAM/MPI: post all receives and sends, i -> 0, 1, ..., P-1"},
      {AlltoallAlgo::Ring, "ring", "MPICH medium: post all, i -> i+1, i+2, ..., non-blocking"},
      {AlltoallAlgo::RingSendrecv, "ring_sendrecv", "blocking ring: step j send to i+j, receive from i-j"},
      {AlltoallAlgo::Pairwise, "pairwise", "XOR exchange i ^ j, blocking; P a power of two (else ring_sendrecv)"},
      {AlltoallAlgo::Factor, "factor", "1-factor algorithm, partner (i - u) mod P, self-loops included (paper 000, Fig. 1)"},
      {AlltoallAlgo::FactorGrouped, "factor_grouped", "factor with all self-loops in one local round; even P (else factor)"},
      {AlltoallAlgo::Bruck, "bruck", "Bruck's algorithm, ceil(log2 P) rounds, any P"},
      {AlltoallAlgo::ClusteredFactor, "clustered_factor", "1-factor phases over nodes of different sizes, one inter-node exchange per node per step (paper 000, Fig. 2)"},
      {AlltoallAlgo::ClusteredFactorFill, "clustered_factor_fill", "clustered_factor plus extra intra-node work in self-paired rounds (paper 000, s. 4)"},
      {AlltoallAlgo::Leader, "leader", "gather to one leader per node, all-to-all among leaders, scatter (paper 002, s. 5)"},
      {AlltoallAlgo::SendAggregate, "send_aggregate", "SA: intra-node exchange, then all-to-all among equal local ranks (paper 002, s. 5)"},
      {AlltoallAlgo::RecvDistribute, "recv_distribute", "RD: all-to-all among equal local ranks, then intra-node distribution (paper 002, s. 5)"},
      {AlltoallAlgo::TreeScheduled, "tree_scheduled", "contention-free phases on the attached switch tree, pairwise synchronisation (paper 003, s. 4-5)"},
      {AlltoallAlgo::TreeScheduledBarrier, "tree_scheduled_barrier", "tree_scheduled phases separated by a barrier each (paper 003, s. 5)"},
  };
  return all;
}

std::string_view alltoall_algo_name(AlltoallAlgo a) { return detail::name_in(alltoall_algorithms(), a); }

AlltoallAlgo alltoall_algo_from_name(std::string_view name) {
  return detail::algorithm_in(alltoall_algorithms(), name, "all-to-all");
}

AlltoallAlgo alltoall_algo_from_env(AlltoallAlgo fallback) {
  return detail::algorithm_from_env(alltoall_algorithms(), "LIBCOMM_ALLTOALL", fallback, "all-to-all");
}

AlltoallChoice choose_alltoall(AlltoallAlgo requested, std::size_t block_bytes, int p,
                               const AlltoallOptions& opts) {
  const auto ps = [p] { return std::to_string(p); };  // only for the reasons that name P
  switch (requested) {
    case AlltoallAlgo::Auto:
      // Paper 002, section 2.4 / 6 (MVAPICH-PSM thresholds): Bruck up to 256 B, direct
      // Isend-Irecv up to 32 KiB, pairwise exchange beyond.
      if (block_bytes <= 256)
        return {AlltoallAlgo::Bruck, "auto: bruck for blocks <= 256 B (start-up bound)"};
      if (block_bytes <= 32768)
        return {AlltoallAlgo::Ring, "auto: ring (isend/irecv) for 256 B < blocks <= 32 KiB"};
      if (is_power_of_two(p))
        return {AlltoallAlgo::Pairwise, "auto: pairwise for blocks > 32 KiB, P = " + ps()};
      return {AlltoallAlgo::RingSendrecv,
              "auto: ring_sendrecv for blocks > 32 KiB (P = " + ps() + " is not a power of two)"};
    case AlltoallAlgo::Pairwise:
      if (is_power_of_two(p)) return AlltoallChoice::requested(requested);
      require(opts.allow_fallback, "pairwise: needs a power-of-two number of ranks, P = " + ps() +
                                       " (fallback disabled)");
      return {AlltoallAlgo::RingSendrecv,
              "pairwise needs a power of two, P = " + ps() + ": ran ring_sendrecv instead"};
    case AlltoallAlgo::FactorGrouped:
      if (p % 2 == 0) return AlltoallChoice::requested(requested);
      require(opts.allow_fallback, "factor_grouped: self-loops can be grouped only for even P, P = " +
                                       ps() + " (fallback disabled)");
      return {AlltoallAlgo::Factor,
              "factor_grouped needs an even P, P = " + ps() + ": ran factor instead"};
    default:
      return AlltoallChoice::requested(requested);
  }
}

AlltoallChoice choose_alltoall(AlltoallAlgo requested, std::size_t block_bytes, const Comm& comm,
                               const AlltoallOptions& opts) {
  if (requested != AlltoallAlgo::Auto) return choose_alltoall(requested, block_bytes, comm.size(), opts);
  const auto pick = tuned_choice(tuning_query("alltoall", comm, block_bytes));
  if (!pick) return choose_alltoall(requested, block_bytes, comm.size(), opts).note(" (no tuning table row)");
  const AlltoallAlgo tuned = alltoall_algo_from_name(pick->algo);
  // A hierarchical scheme runs its inter-node step (Auto by default) on a communicator of
  // one rank per node; taking a hierarchical row there would recurse, so such rows apply
  // only where a node holds several ranks and there are several nodes.
  const bool multi_rank_nodes = comm.nodes().num_nodes() > 1 && comm.nodes().num_nodes() < comm.size();
  if (is_hierarchical(tuned) && (is_hierarchical(opts.inter_node) || !multi_rank_nodes)) {
    return choose_alltoall(requested, block_bytes, comm.size(), opts)
        .note(" (the table's " + pick->algo + " needs several nodes of several ranks and a regular inter-node "
              "algorithm)");
  }
  // The table may come from another rank count: its algorithm's own fallback then applies.
  AlltoallOptions o = opts;
  o.allow_fallback = true;
  const AlltoallChoice c = choose_alltoall(tuned, block_bytes, comm.size(), o);
  return {c.algo, "auto: " + pick->algo + " from " + pick->reason +
                      (c.algo == tuned ? "" : "; " + c.reason())};
}

bool is_hierarchical(AlltoallAlgo a) {
  return a == AlltoallAlgo::ClusteredFactor || a == AlltoallAlgo::ClusteredFactorFill ||
         a == AlltoallAlgo::Leader || a == AlltoallAlgo::SendAggregate ||
         a == AlltoallAlgo::RecvDistribute;
}

Schedule alltoall_schedule(AlltoallAlgo a, int p) {
  require(p > 0, "alltoall_schedule: P must be positive, got " + std::to_string(p));
  switch (a) {
    case AlltoallAlgo::Linear: return detail::linear_schedule(p);
    case AlltoallAlgo::Ring: return detail::ring_schedule(p);
    case AlltoallAlgo::RingSendrecv: {
      auto s = detail::ring_schedule(p);
      s.name = "ring_sendrecv";
      return s;
    }
    case AlltoallAlgo::Pairwise: return detail::pairwise_schedule(p);
    case AlltoallAlgo::Factor: return detail::factor_schedule(p);
    case AlltoallAlgo::FactorGrouped: return detail::factor_grouped_schedule(p);
    case AlltoallAlgo::ClusteredFactor:
    case AlltoallAlgo::ClusteredFactorFill:
      // Without a node map: every rank a node of its own.
      return clustered_factor_schedule(NodeMap::one_rank_per_node(p),
                                       {.intra_fill = a == AlltoallAlgo::ClusteredFactorFill})
          .schedule;
    default:
      throw Error("alltoall_schedule: '" + std::string(alltoall_algo_name(a)) +
                  "' is not a schedule of whole blocks");
  }
}

namespace {

// Collective argument check: every rank learns about a problem on any rank, so all of
// them throw the same kind of Error instead of some hanging in the exchange.
// Without buffers (a plan made before them), only sizes and algorithms are compared.
void check_alltoall_args(const void* send, void* recv, std::size_t b, const Comm& comm,
                         AlltoallAlgo algo, AlltoallAlgo inter_node, bool have_buffers = true) {
  const int p = comm.size(), me = comm.rank();
  std::string local;
  const auto limit = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
  if (b > limit / static_cast<std::size_t>(p)) {
    local = "block_bytes " + std::to_string(b) + " x P " + std::to_string(p) +
            " overflows the address space";
  } else if (!have_buffers) {
  } else if (b > 0 && (send == nullptr || recv == nullptr)) {
    local = std::string(send == nullptr ? "send" : "recv") + " buffer is null";
  } else if (b > 0) {
    const auto* s = static_cast<const std::byte*>(send);
    const auto* r = static_cast<const std::byte*>(recv);
    const std::size_t n = b * static_cast<std::size_t>(p);
    if (s < r + n && r < s + n) local = "send and recv buffers overlap";
  }
  // max over ranks of: [bad rank marker, block, ~block, algo, ~algo]
  using u64 = unsigned long long;
  const u64 algos = static_cast<u64>(algo) * 1024 + static_cast<u64>(inter_node);
  std::array<u64, 5> v = {local.empty() ? 0ULL : static_cast<u64>(p - me), b, ~u64{b}, algos,
                          ~algos};
  detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, v.data(), 5, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                                  comm.internal()),
                    "MPI_Allreduce");
  const std::string where = "alltoall: rank " + std::to_string(me) + ": ";
  if (!local.empty()) throw Error(where + local);
  if (v[0] != 0)
    throw Error(where + "rank " + std::to_string(p - static_cast<int>(v[0])) +
                " reported an invalid argument (see its message)");
  if (v[1] != ~v[2])
    throw Error(where + "block_bytes differ across ranks (min " + std::to_string(~v[2]) +
                ", max " + std::to_string(v[1]) + "); this rank passed " + std::to_string(b));
  if (v[3] != ~v[4])
    throw Error(where + "ranks asked for different algorithms (this rank: " +
                std::string(alltoall_algo_name(algo)) + ", inter-node " +
                std::string(alltoall_algo_name(inter_node)) + ")");
}

ScheduleRun schedule_run_of(AlltoallAlgo a) {
  return a == AlltoallAlgo::Linear || a == AlltoallAlgo::Ring ? ScheduleRun::AllAtOnce
                                                              : ScheduleRun::PerRound;
}

// The plan state of a resolved choice; `blocking` for the plans the blocking calls keep
// (they borrow the Comm's scratch and may use library collectives inside, multicore.cpp).
std::shared_ptr<detail::PlanState> alltoall_state(const AlltoallChoice& c, std::size_t b, const Comm& comm,
                                                  const AlltoallOptions& opts, bool blocking) {
  if (c.algo == AlltoallAlgo::Leader || c.algo == AlltoallAlgo::SendAggregate ||
      c.algo == AlltoallAlgo::RecvDistribute)
    return detail::hierarchical_plan(c.algo, comm, b, opts, c.reason(), blocking);
  const MPI_Comm mc = comm.mpi();
  const auto native_start = [b, mc] {
    return [b, mc](const void* s, void* r, MPI_Request* q) {
      const detail::MpiBytes block(b);
      detail::check_mpi(MPI_Ialltoall(s, block.count(), block.type(), r, block.count(), block.type(), mc, q),
                        "MPI_Ialltoall");
    };
  };
  return detail::choice_state(
      comm, c.reason(), c.algo == AlltoallAlgo::Native, native_start,
      [&] {
        const auto topo = attached_topology(comm);
        return detail::build_alltoall_program(c.algo, comm.size(), comm.rank(), b, &comm.nodes(), topo.get());
      },
      !blocking);
}

// The key of a kept plan: what its step program depends on (the hierarchical schemes'
// inner choice depends on the inter-node algorithm too).
PlanKey plan_key(AlltoallAlgo ran, std::size_t block_bytes, const AlltoallOptions& opts) {
  return PlanKey{"alltoall", static_cast<int>(ran), block_bytes,
                 is_hierarchical(ran) ? static_cast<std::uint64_t>(opts.inter_node) * 2 + opts.node_shared_memory : 0};
}

AlltoallChoice resolve(AlltoallAlgo algo, std::size_t block_bytes, const Comm& comm, const AlltoallOptions& opts) {
  if (check_mode()) {
    const detail::SameField fields[] = {{"block_bytes", block_bytes}};
    detail::check_same_on_all_ranks(comm, "alltoall", fields);
  }
  // Auto's choice depends on the size, the inter-node algorithm and the fallback switch.
  const DecisionKey key{"alltoall", block_bytes, 1.0,
                        static_cast<std::uint64_t>(opts.inter_node) * 2 + opts.allow_fallback};
  const AlltoallChoice c =
      detail::decided_choice(algo, comm, key, [&] { return choose_alltoall(algo, block_bytes, comm, opts); });
  const bool scheme = c.algo == AlltoallAlgo::Leader || c.algo == AlltoallAlgo::SendAggregate ||
                      c.algo == AlltoallAlgo::RecvDistribute;
  require(!scheme || !is_hierarchical(opts.inter_node), [&] {
    return "alltoall: rank " + std::to_string(comm.rank()) + ": the inter-node algorithm of " +
           std::string(alltoall_algo_name(c.algo)) + " must be a regular one, not " +
           std::string(alltoall_algo_name(opts.inter_node));
  });
  return c;
}

}  // namespace

namespace detail {

StepProgram build_alltoall_program(AlltoallAlgo a, int p, int rank, std::size_t b, const NodeMap* nodes,
                                   const Topology* topology) {
  switch (a) {
    case AlltoallAlgo::Bruck: return bruck_program(p, rank, b);
    case AlltoallAlgo::TreeScheduled:
    case AlltoallAlgo::TreeScheduledBarrier: return tree_scheduled_program(topology, p, rank, b, a);
    case AlltoallAlgo::ClusteredFactor:
    case AlltoallAlgo::ClusteredFactorFill:
      if (nodes != nullptr) {
        return schedule_program(
            clustered_factor_schedule(*nodes, {.intra_fill = a == AlltoallAlgo::ClusteredFactorFill}).schedule,
            rank, b, ScheduleRun::PerRound);
      }
      [[fallthrough]];
    default: return schedule_program(alltoall_schedule(a, p), rank, b, schedule_run_of(a));
  }
}

}  // namespace detail

StepProgram alltoall_program(AlltoallAlgo a, int nprocs, int rank, std::size_t block_bytes) {
  require(nprocs > 0 && rank >= 0 && rank < nprocs,
          "alltoall_program: rank " + std::to_string(rank) + " of P = " + std::to_string(nprocs) + " does not exist");
  require(a != AlltoallAlgo::Auto && a != AlltoallAlgo::Native && a != AlltoallAlgo::Leader &&
              a != AlltoallAlgo::SendAggregate && a != AlltoallAlgo::RecvDistribute,
          "alltoall_program: '" + std::string(alltoall_algo_name(a)) + "' has no step program");
  return detail::build_alltoall_program(a, nprocs, rank, block_bytes, nullptr, nullptr);
}

StepProgram hierarchical_alltoall_program(AlltoallAlgo scheme, const NodeMap& nodes, int rank,
                                          std::size_t block_bytes, AlltoallAlgo inter, bool library_collectives,
                                          bool shared_memory) {
  require(rank >= 0 && rank < nodes.num_ranks(), [&] {
    return "hierarchical_alltoall_program: rank " + std::to_string(rank) + " of P = " +
           std::to_string(nodes.num_ranks()) + " does not exist";
  });
  require(!is_hierarchical(inter), "hierarchical_alltoall_program: the inter-node algorithm must be a regular one");
  const int n = nodes.num_nodes();
  const detail::InnerChoice inner = [&](std::size_t bytes) {
    AlltoallOptions o;
    o.allow_fallback = true;
    return choose_alltoall(inter, bytes, n, o).algo;
  };
  return detail::hierarchical_program(scheme, nodes, rank, block_bytes, inner, library_collectives, shared_memory);
}

AlltoallChoice alltoall(const void* send, void* recv, std::size_t block_bytes, const Comm& comm,
                        AlltoallAlgo algo, const AlltoallOptions& opts) {
  const AlltoallChoice c = [&] {
    if (opts.check_args) check_alltoall_args(send, recv, block_bytes, comm, algo, opts.inter_node);
    return resolve(algo, block_bytes, comm, opts);
  }();
  const AlltoallAlgo ran = c.algo;
  const auto* s = static_cast<const std::byte*>(send);
  auto* r = static_cast<std::byte*>(recv);
  if (ran == AlltoallAlgo::Native) {
    detail::native_alltoall(s, r, block_bytes, comm.mpi());
    return c;
  }
  if (block_bytes == 0) return c;
  detail::run_cached(comm, plan_key(ran, block_bytes, opts), {}, s, r,
                     [&] { return alltoall_state(c, block_bytes, comm, opts, true); });
  return c;
}

Plan plan_alltoall(const Comm& comm, std::size_t block_bytes, AlltoallAlgo algo, const AlltoallOptions& opts) {
  // Collective like MPI_Alltoall_init: the argument check (sizes and algorithm agree) runs
  // once here, with no buffers yet.
  if (opts.check_args) check_alltoall_args(nullptr, nullptr, block_bytes, comm, algo, opts.inter_node, false);
  return Plan(alltoall_state(resolve(algo, block_bytes, comm, opts), block_bytes, comm, opts, false));
}

Request ialltoall(const void* send, void* recv, std::size_t block_bytes, const Comm& comm, AlltoallAlgo algo,
                  const AlltoallOptions& opts) {
  AlltoallOptions o = opts;
  o.check_args = false;  // no blocking collective inside a non-blocking call
  const AlltoallChoice c = resolve(algo, block_bytes, comm, o);
  PlanKey key = plan_key(c.algo, block_bytes, o);
  key.options = key.options * 64 + static_cast<std::uint64_t>(algo);  // the kept plan's reason is this request's
  Plan plan(detail::request_plan(comm, key, {}, [&] { return alltoall_state(c, block_bytes, comm, o, false); }));
  plan.start(send, recv);
  return plan;
}

}  // namespace libcomm
