// tree_scheduled, tree_scheduled_barrier: the contention-free all-to-all of paper 003 on
// the switch tree attached to the Comm (attach_topology), or, without one, on a single
// switch holding every rank (topology (a) of Fig. 5).
//
// The phases come from schedule_tree_aapc (section 4), the synchronisation plan from
// plan_synchronisation (section 5); both are built once per Comm and topology and kept as
// an attachment. With fewer than 3 ranks there is nothing to schedule (section 3): one
// phase holds the (at most one) exchange.
#include <memory>

#include "alltoall_internal.hpp"
#include "libcomm/topology.hpp"
#include "libcomm/tree_schedule.hpp"

namespace libcomm::detail {

namespace {

struct TreeState {
  std::shared_ptr<const Topology> topology;  // what the plan was built for (null: default)
  TreeRankPlan plan;
};

Schedule trivial_schedule(int p) {
  Schedule s;
  s.name = "tree_scheduled";
  s.nprocs = p;
  s.rounds.resize(1);
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b) s.rounds[0].transfers.push_back({a, b, aapc_block(a, b, p)});
  return s;
}

std::shared_ptr<const TreeState> tree_state(const Comm& comm) {
  const auto topo = attached_topology(comm);
  if (auto cached = std::static_pointer_cast<const TreeState>(comm.attachment("tree_scheduled/plan")))
    if (cached->topology == topo) return cached;
  auto st = std::make_shared<TreeState>();
  st->topology = topo;
  const int p = comm.size();
  if (!topo && p < 3) {
    st->plan = TreeRankPlan(trivial_schedule(p), SyncPlan{}, comm.rank());
  } else {
    const Topology tree = topo ? *topo : Topology::single_switch(p);
    require(tree.num_machines() == p,
            "tree_scheduled: rank " + std::to_string(comm.rank()) + ": the topology has " +
                std::to_string(tree.num_machines()) + " machines, the communicator " +
                std::to_string(p) + " ranks");
    const Schedule s = tree_rank_schedule(schedule_tree_aapc(tree), tree);
    st->plan = TreeRankPlan(s, plan_synchronisation(s, tree), comm.rank());
  }
  comm.attach("tree_scheduled/plan", st);
  return st;
}

}  // namespace

void tree_scheduled_alltoall(const std::byte* send, std::byte* recv, std::size_t b,
                             const Comm& comm, AlltoallAlgo variant) {
  const auto st = tree_state(comm);
  execute_tree_aapc(st->plan, send, recv, b, comm.internal(),
                    variant == AlltoallAlgo::TreeScheduledBarrier ? TreeSync::Barrier
                                                                  : TreeSync::Pairwise);
}

}  // namespace libcomm::detail
