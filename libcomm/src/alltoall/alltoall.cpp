// The regular all-to-all as an operation of the one driver (core/driver.hpp): its
// registry (names, where each algorithm applies and what runs instead, cost formulas),
// its argument check and its plans; the public entry points are calls of the driver. The
// algorithms live one family per file next to this one, their formulas in costs.cpp.
#include <algorithm>
#include <array>
#include <limits>

#include "../core/check.hpp"
#include "../core/mpi_bytes.hpp"
#include "alltoall_internal.hpp"
#include "libcomm/hierarchical.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"
#include "libcomm/topology.hpp"

namespace libcomm {

using detail::is_power_of_two;

namespace detail {

namespace {

using Shape = AlltoallOp::Shape;

std::string needs_power_of_two(const Shape& s) {
  return is_power_of_two(s.p) ? "" : "needs a power of two, P = " + std::to_string(s.p);
}
std::string needs_even(const Shape& s) {
  return s.p % 2 == 0 ? "" : "needs an even P (self-loops grouped in one round), P = " + std::to_string(s.p);
}
std::string fits_topology(const Shape& s) {
  if (s.topology == nullptr || s.topology->num_machines() == s.p) return "";
  return "needs a switch tree of P machines: the attached one has " + std::to_string(s.topology->num_machines()) +
         ", P = " + std::to_string(s.p);
}
std::string needs_regular_inter_node(const Shape& s) {
  if (!is_hierarchical(s.opts->inter_node)) return "";
  return "needs a regular inter-node algorithm, not " + std::string(alltoall_algo_name(s.opts->inter_node));
}

constexpr AlgorithmEntry<AlltoallOp> kAlgorithms[] = {
    {.algo = AlltoallAlgo::Auto, .name = "auto",
     .summary = "the Auto policy (LIBCOMM_AUTO: online, model or table; README 'Tuning: what auto runs')"},
    {.algo = AlltoallAlgo::Native, .name = "native", .summary = "the MPI library's MPI_Alltoall (reference)",
     .cost = alltoall_cost::native},
    {.algo = AlltoallAlgo::Linear, .name = "linear",
     .summary = "LAM/MPI: post all receives and sends, i -> 0, 1, ..., P-1", .cost = alltoall_cost::linear},
    {.algo = AlltoallAlgo::Ring, .name = "ring", .summary = "MPICH medium: post all, i -> i+1, i+2, ..., non-blocking",
     .cost = alltoall_cost::linear},
    {.algo = AlltoallAlgo::RingSendrecv, .name = "ring_sendrecv",
     .summary = "blocking ring: step j send to i+j, receive from i-j", .cost = alltoall_cost::one_exchange_per_round},
    {.algo = AlltoallAlgo::Pairwise, .name = "pairwise",
     .summary = "XOR exchange i ^ j, blocking; P a power of two (else ring_sendrecv)", .unfit = needs_power_of_two,
     .applies = "P a power of two", .fallback = AlltoallAlgo::RingSendrecv,
     .fallback_why = "the XOR partner i ^ j exists only then; ring_sendrecv is the same one-exchange-per-step "
                     "schedule for any P",
     .cost = alltoall_cost::pairwise},
    {.algo = AlltoallAlgo::Factor, .name = "factor",
     .summary = "1-factor algorithm, partner (i - u) mod P, self-loops included (paper 000, Fig. 1)",
     .cost = alltoall_cost::factor},
    {.algo = AlltoallAlgo::FactorGrouped, .name = "factor_grouped",
     .summary = "factor with all self-loops in one local round; even P (else factor)", .unfit = needs_even,
     .applies = "even P", .fallback = AlltoallAlgo::Factor,
     .fallback_why = "grouping every self-loop into one local round needs a perfect matching of the other pairs "
                     "(paper 000)",
     .cost = alltoall_cost::one_exchange_per_round},
    {.algo = AlltoallAlgo::Bruck, .name = "bruck", .summary = "Bruck's algorithm, ceil(log2 P) rounds, any P",
     .cost = alltoall_cost::bruck},
    {.algo = AlltoallAlgo::ClusteredFactor, .name = "clustered_factor",
     .summary = "1-factor phases over nodes of different sizes, one inter-node exchange per node per step (paper "
                "000, Fig. 2)",
     .cost = alltoall_cost::clustered_factor, .node_map = true},
    {.algo = AlltoallAlgo::ClusteredFactorFill, .name = "clustered_factor_fill",
     .summary = "clustered_factor plus extra intra-node work in self-paired rounds (paper 000, s. 4)",
     .node_map = true},
    {.algo = AlltoallAlgo::Leader, .name = "leader",
     .summary = "gather to one leader per node, all-to-all among leaders, scatter (paper 002, s. 5)",
     .unfit = needs_regular_inter_node, .applies = "any node map, with a regular inter-node algorithm", .cost = alltoall_cost::leader, .node_memory = true, .node_map = true},
    {.algo = AlltoallAlgo::SendAggregate, .name = "send_aggregate",
     .summary = "SA: intra-node exchange, then all-to-all among equal local ranks (paper 002, s. 5)",
     .unfit = needs_regular_inter_node, .applies = "any node map, with a regular inter-node algorithm", .cost = alltoall_cost::send_aggregate, .node_memory = true, .node_map = true},
    {.algo = AlltoallAlgo::RecvDistribute, .name = "recv_distribute",
     .summary = "RD: all-to-all among equal local ranks, then intra-node distribution (paper 002, s. 5)",
     .unfit = needs_regular_inter_node, .applies = "any node map, with a regular inter-node algorithm", .cost = alltoall_cost::recv_distribute, .node_memory = true, .node_map = true},
    {.algo = AlltoallAlgo::TreeScheduled, .name = "tree_scheduled",
     .summary = "contention-free phases on the attached switch tree, pairwise synchronisation (paper 003, s. 4-5)",
     .unfit = fits_topology, .applies = "an attached switch tree of P machines, or none (one switch)", .cost = alltoall_cost::tree_scheduled},
    {.algo = AlltoallAlgo::TreeScheduledBarrier, .name = "tree_scheduled_barrier",
     .summary = "tree_scheduled phases separated by a barrier each (paper 003, s. 5)", .unfit = fits_topology,
     .applies = "an attached switch tree of P machines, or none (one switch)"},
};

}  // namespace

std::span<const AlgorithmEntry<AlltoallOp>> AlltoallOp::algorithms() { return kAlgorithms; }

AlltoallOp::Shape AlltoallOp::shape(const Args& a, const Comm& comm, const Options& o) {
  return {comm.size(), a.block, &comm.nodes(), comm.cache().topology.get(), &o};
}

std::uint64_t AlltoallOp::key_options(const Shape& s) {
  return static_cast<std::uint64_t>(s.opts->inter_node) * 8 + s.opts->one_matching_per_step * 4 +
         s.opts->allow_fallback * 2 + s.opts->node_shared_memory;
}

ArgumentCheck AlltoallOp::argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo, const Options& o,
                                         bool have_buffers) {
  (void)comm;
  ArgumentCheck c;
  const std::size_t b = a.block;
  const auto limit = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
  if (b > limit / static_cast<std::size_t>(s.p)) {
    c.local = "block_bytes " + std::to_string(b) + " x P " + std::to_string(s.p) + " overflows the address space";
  } else if (have_buffers && b > 0 && (a.send == nullptr || a.recv == nullptr)) {
    c.local = std::string(a.send == nullptr ? "send" : "recv") + " buffer is null";
  } else if (have_buffers && b > 0) {
    const auto* sp = static_cast<const std::byte*>(a.send);
    const auto* rp = static_cast<const std::byte*>(a.recv);
    const std::size_t n = b * static_cast<std::size_t>(s.p);
    if (sp < rp + n && rp < sp + n) c.local = "send and recv buffers overlap";
  }
  c.sizes = b;
  c.mode = static_cast<std::uint64_t>(algo) * 2048 + static_cast<std::uint64_t>(o.inter_node) * 2 +
           o.one_matching_per_step;
  return c;
}

std::string AlltoallOp::sizes_differ(const Args& a, std::uint64_t max, std::uint64_t min) {
  return "block_bytes differ across ranks (min " + std::to_string(min) + ", max " + std::to_string(max) +
         "); this rank passed " + std::to_string(a.block);
}

std::string AlltoallOp::modes_differ(Algo algo, const Options& o) {
  return "ranks asked for different algorithms (this rank: " + std::string(alltoall_algo_name(algo)) +
         ", inter-node " + std::string(alltoall_algo_name(o.inter_node)) + ")";
}

void AlltoallOp::check_agreement(const Args& a, const Comm& comm, const Options&) {
  const SameField fields[] = {{"block_bytes", a.block}};
  check_same_on_all_ranks(comm, "alltoall", fields);
}

PlanKey AlltoallOp::plan_key(Algo ran, const Shape& s) {
  // The paper 002 schemes' program depends on their inter-node algorithm and transport too.
  // The clustered factor's program depends on how its steps run.
  const bool scheme = ran == Algo::Leader || ran == Algo::SendAggregate || ran == Algo::RecvDistribute;
  const bool clustered = ran == Algo::ClusteredFactor || ran == Algo::ClusteredFactorFill;
  return PlanKey{"alltoall", static_cast<int>(ran), s.block,
                 scheme      ? static_cast<std::uint64_t>(s.opts->inter_node) * 2 + s.opts->node_shared_memory
                 : clustered ? static_cast<std::uint64_t>(s.opts->one_matching_per_step)
                             : 0};
}

std::shared_ptr<PlanState> AlltoallOp::state(const Choice<Algo>& c, const Args&, const Shape& s, const Comm& comm,
                                             Form form) {
  const bool blocking = form == Form::Blocking;
  if (c.algo == Algo::Leader || c.algo == Algo::SendAggregate || c.algo == Algo::RecvDistribute)
    return hierarchical_plan(c.algo, comm, s.block, *s.opts, c.reason(), blocking);
  const MPI_Comm mc = comm.mpi();
  const std::size_t b = s.block;
  return choice_state(
      comm, c.reason(), c.algo == Algo::Native,
      [b, mc] {
        return [b, mc](const void* sp, void* rp, MPI_Request* q) {
          const MpiBytes block(b);
          check_mpi(MPI_Ialltoall(sp, block.count(), block.type(), rp, block.count(), block.type(), mc, q),
                    "MPI_Ialltoall");
        };
      },
      [&] {
        return build_alltoall_program(c.algo, s.p, comm.rank(), b, s.nodes, s.topology, s.opts->one_matching_per_step);
      },
      !blocking);
}

void AlltoallOp::native(const Args& a, const Shape& s, const Comm& comm) {
  native_alltoall(static_cast<const std::byte*>(a.send), static_cast<std::byte*>(a.recv), s.block, comm.mpi());
}

namespace {

ScheduleRun schedule_run_of(AlltoallAlgo a) {
  return a == AlltoallAlgo::Linear || a == AlltoallAlgo::Ring ? ScheduleRun::AllAtOnce : ScheduleRun::PerRound;
}

// A shape for P ranks without a Comm: one rank per node, one switch.
struct FlatShape {
  NodeMap nodes;
  AlltoallOp::Shape shape;
  FlatShape(int p, std::size_t block, const AlltoallOptions& o)
      : nodes(NodeMap::one_rank_per_node(p)), shape{p, block, &nodes, nullptr, &o} {}
};

}  // namespace

StepProgram build_alltoall_program(AlltoallAlgo a, int p, int rank, std::size_t b, const NodeMap* nodes,
                                   const Topology* topology, bool one_matching_per_step) {
  switch (a) {
    case AlltoallAlgo::Bruck: return bruck_program(p, rank, b);
    case AlltoallAlgo::TreeScheduled:
    case AlltoallAlgo::TreeScheduledBarrier: return tree_scheduled_program(topology, p, rank, b, a);
    case AlltoallAlgo::ClusteredFactor:
    case AlltoallAlgo::ClusteredFactorFill:
      if (nodes != nullptr) {
        return clustered_factor_program(*nodes, rank, b,
                                        {.intra_fill = a == AlltoallAlgo::ClusteredFactorFill,
                                         .one_matching_per_step = one_matching_per_step});
      }
      [[fallthrough]];
    default: return schedule_program(alltoall_schedule(a, p), rank, b, schedule_run_of(a));
  }
}

}  // namespace detail

using Driver = detail::Driver<detail::AlltoallOp>;

const std::vector<AlltoallAlgoInfo>& alltoall_algorithms() { return detail::algorithm_infos<detail::AlltoallOp>(); }

std::string_view alltoall_algo_name(AlltoallAlgo a) { return detail::name_of<detail::AlltoallOp>(a); }

AlltoallAlgo alltoall_algo_from_name(std::string_view name) {
  return detail::algorithm_named<detail::AlltoallOp>(name);
}

AlltoallAlgo alltoall_algo_from_env(AlltoallAlgo fallback) {
  return detail::algorithm_from_env<detail::AlltoallOp>(fallback);
}

AlltoallChoice choose_alltoall(AlltoallAlgo requested, std::size_t block_bytes, int p, const AlltoallOptions& opts) {
  require(p > 0, "choose_alltoall: P must be positive, got " + std::to_string(p));
  const detail::FlatShape flat(p, block_bytes, opts);
  if (requested != AlltoallAlgo::Auto) return Driver::resolve_requested(requested, flat.shape, opts.allow_fallback);
  // Without a Comm: the model on one rank per node (what the paper 002 schemes' inter-node
  // step asks for its column of one rank per node).
  const detail::AutoAnswer m = detail::model_answer(Driver::question(flat.shape, nullptr));
  return AlltoallChoice(static_cast<AlltoallAlgo>(m.algo), m.reason);
}

AlltoallChoice choose_alltoall(AlltoallAlgo requested, std::size_t block_bytes, const Comm& comm,
                               const AlltoallOptions& opts) {
  const detail::AlltoallOp::Args a{nullptr, nullptr, block_bytes};
  return Driver::choose(requested, detail::AlltoallOp::shape(a, comm, opts), comm);
}

bool is_hierarchical(AlltoallAlgo a) {
  return a == AlltoallAlgo::ClusteredFactor || a == AlltoallAlgo::ClusteredFactorFill || a == AlltoallAlgo::Leader ||
         a == AlltoallAlgo::SendAggregate || a == AlltoallAlgo::RecvDistribute;
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
      throw Error("alltoall_schedule: '" + std::string(alltoall_algo_name(a)) + "' is not a schedule of whole blocks");
  }
}

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

AlltoallChoice alltoall(const void* send, void* recv, std::size_t block_bytes, const Comm& comm, AlltoallAlgo algo,
                        const AlltoallOptions& opts) {
  return Driver::blocking({send, recv, block_bytes}, comm, algo, opts);
}

Plan plan_alltoall(const Comm& comm, std::size_t block_bytes, AlltoallAlgo algo, const AlltoallOptions& opts) {
  return Driver::persistent({nullptr, nullptr, block_bytes}, comm, algo, opts);
}

Request ialltoall(const void* send, void* recv, std::size_t block_bytes, const Comm& comm, AlltoallAlgo algo,
                  const AlltoallOptions& opts) {
  return Driver::nonblocking({send, recv, block_bytes}, comm, algo, opts);
}

}  // namespace libcomm
