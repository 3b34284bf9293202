// tree_scheduled, tree_scheduled_barrier: the contention-free all-to-all of paper 003 on
// the switch tree attached to the Comm (attach_topology), or, without one, on a single
// switch holding every rank (topology (a) of Fig. 5).
//
// The phases come from schedule_tree_aapc (section 4), the synchronisation plan from
// plan_synchronisation (section 5); tree_program turns them into one rank's step program.
// With fewer than 3 ranks there is nothing to schedule (section 3): one phase holds the
// (at most one) exchange.
#include <limits>

#include "alltoall_internal.hpp"
#include "libcomm/program.hpp"
#include "libcomm/topology.hpp"
#include "libcomm/tree_schedule.hpp"

namespace libcomm {

StepProgram tree_program(const Schedule& s, const SyncPlan& sync, int rank, std::size_t b,
                         TreeSync mode) {
  if (mode == TreeSync::None) return schedule_program(s, rank, b, ScheduleRun::AllAtOnce);
  const auto n = static_cast<std::size_t>(s.nprocs);
  const auto block = [&](Area a, int k) {
    return ByteRange{a, static_cast<std::size_t>(k) * b, b};
  };
  ProgramBuilder out(s.name, rank, s.nprocs);
  out.set_extents(n * b, n * b);
  if (mode == TreeSync::Barrier) {
    // Phase r: its messages in one stage, then the barrier's stages.
    std::uint32_t stage = 0;
    for (const auto& round : s.rounds) {
      for (const auto& t : round.transfers) {
        if (t.src == rank && t.dst == rank)
          out.copy(stage, block(Area::Send, rank), block(Area::Recv, rank));
        else if (t.src == rank)
          out.send_synchronous(stage, t.dst, block(Area::Send, t.dst), stage);
        else if (t.dst == rank)
          out.recv(stage, t.src, block(Area::Recv, t.src), stage);
      }
      stage = out.barrier(stage + 1);
    }
    return std::move(out).program();
  }
  // Pairwise (section 5): the i-th phase in which this rank sends waits for its
  // synchronisations in stage 2i, sends in stage 2i + 1 and notifies in stage 2i + 2, so a
  // notification leaves only once the message it follows has gone. The data sends of both
  // variants are synchronous: an eager send completes as soon as the library has copied it,
  // and its notification (or the barrier) would let the next phase onto a link the message
  // still occupies (under SimGrid below 64 KiB: packet drops, and times that vary run to run).
  std::vector<std::vector<int>> wait_from(s.rounds.size()), notify(s.rounds.size());
  for (const auto& y : sync.syncs) {
    if (y.to == rank) wait_from.at(static_cast<std::size_t>(y.before)).push_back(y.from);
    if (y.from == rank) notify.at(static_cast<std::size_t>(y.after)).push_back(y.to);
  }
  std::uint32_t sending = 0;
  for (const auto& round : s.rounds)
    for (const auto& t : round.transfers) sending += t.src == rank && t.dst != rank;
  const std::uint32_t last = 2 * sending;
  std::uint32_t i = 0;
  for (std::size_t r = 0; r < s.rounds.size(); ++r)
    for (const auto& t : s.rounds[r].transfers) {
      if (t.dst == rank && t.src != rank) out.recv(0, t.src, block(Area::Recv, t.src), last);
      if (t.dst == rank && t.src == rank)
        out.copy(0, block(Area::Send, rank), block(Area::Recv, rank), true);
      if (t.src != rank || t.dst == rank) continue;
      for (int from : wait_from[r]) out.recv(2 * i, from, {Area::Recv, 0, 0}, 2 * i, TagKind::Sync);
      out.send_synchronous(2 * i + 1, t.dst, block(Area::Send, t.dst), 2 * i + 1);
      for (int to : notify[r]) out.send(2 * i + 2, to, {Area::Send, 0, 0}, last, TagKind::Sync);
      ++i;
    }
  return std::move(out).program();
}

namespace detail {

namespace {

Schedule trivial_schedule(int p) {
  Schedule s;
  s.name = "tree_scheduled";
  s.nprocs = p;
  s.rounds.resize(1);
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b) s.rounds[0].transfers.push_back({a, b, aapc_block(a, b, p)});
  return s;
}

template <TreeSync mode>
StepProgram program(const AlltoallOp::Shape& s, int rank) {
  const Topology* topo = s.tree;
  const int p = s.p;
  StepProgram out;
  if (!topo && p < 3) {
    out = tree_program(trivial_schedule(p), SyncPlan{}, rank, s.block, mode);
  } else {
    const Topology tree = topo ? *topo : Topology::single_switch(p);
    require(tree.num_machines() == p,
            "tree_scheduled: rank " + std::to_string(rank) + ": the topology has " +
                std::to_string(tree.num_machines()) + " machines, the communicator " +
                std::to_string(p) + " ranks");
    const Schedule sched = tree_rank_schedule(schedule_tree_aapc(tree), tree);
    out = tree_program(sched, plan_synchronisation(sched, tree), rank, s.block, mode);
  }
  out.algorithm = mode == TreeSync::Barrier ? "tree_scheduled_barrier" : "tree_scheduled";
  return out;
}

std::string fits_topology(const AlltoallOp::Shape& s) {
  if (s.tree == nullptr || s.tree->num_machines() == s.p) return "";
  return "needs a switch tree of P machines: the attached one has " + std::to_string(s.tree->num_machines()) +
         ", P = " + std::to_string(s.p);
}

// Paper 003: contention-free phases, each one message and one synchronisation latency.
// Auto considers it only with a switch tree attached (on one switch it is pairwise with
// synchronisation messages added).
double predicted_time(const AlltoallOp::Shape& s, const CostParams& c) {
  if (s.tree == nullptr || s.tree->num_machines() != s.p) return std::numeric_limits<double>::infinity();
  const auto phases = static_cast<double>(schedule_tree_aapc(*s.tree).num_phases);
  return phases * (2 * c.alpha + s.block * c.beta_at(static_cast<double>(s.block))) + cost::copy(c, s.block);
}

}  // namespace

extern const AlltoallAlgorithm tree_scheduled_alltoall{
    .algo = AlltoallAlgo::TreeScheduled, .name = "tree_scheduled",
    .summary = "contention-free phases on the attached switch tree, pairwise synchronisation",
    .paper = "paper 003, s. 4-5", .unfit = fits_topology,
    .applies = "an attached switch tree of P machines, or none (one switch)", .cost = predicted_time,
    .program = program<TreeSync::Pairwise>};

extern const AlltoallAlgorithm tree_scheduled_barrier_alltoall{
    .algo = AlltoallAlgo::TreeScheduledBarrier, .name = "tree_scheduled_barrier",
    .summary = "tree_scheduled phases separated by a barrier each", .paper = "paper 003, s. 5", .unfit = fits_topology,
    .applies = "an attached switch tree of P machines, or none (one switch)", .program = program<TreeSync::Barrier>};

}  // namespace detail
}  // namespace libcomm
