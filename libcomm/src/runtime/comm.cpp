#include "libcomm/comm.hpp"

#include <algorithm>
#include <vector>

#include "libcomm/error.hpp"
#include "comm_cache.hpp"
#include "plan_state.hpp"
#include "same_settings.hpp"

namespace libcomm {

namespace {

std::shared_ptr<MPI_Comm> duplicate(MPI_Comm comm) {
  auto* dup = new MPI_Comm(MPI_COMM_NULL);
  MPI_Comm_dup(comm, dup);
  return std::shared_ptr<MPI_Comm>(dup, [](MPI_Comm* c) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && *c != MPI_COMM_NULL) MPI_Comm_free(c);
    delete c;
  });
}

}  // namespace

NodeMap shared_memory_node_map(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm shm = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
  // A node is named by the lowest rank (in comm) among the ranks sharing its memory.
  int key = rank;
  MPI_Allreduce(MPI_IN_PLACE, &key, 1, MPI_INT, MPI_MIN, shm);
  MPI_Comm_free(&shm);
  std::vector<int> keys(static_cast<std::size_t>(size));
  MPI_Allgather(&key, 1, MPI_INT, keys.data(), 1, MPI_INT, comm);
  return NodeMap(std::move(keys));
}

Comm::Comm(MPI_Comm comm, std::string_view node_spec) : comm_(comm) {
  require(comm != MPI_COMM_NULL, "Comm: communicator is MPI_COMM_NULL");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  detail::require_same_settings(comm_);  // (before anything is made that would leak on the throw)
  internal_ = duplicate(comm_);
  cache_ = std::make_shared<detail::CommCache>();
  nodes_ = (node_spec.empty() || node_spec == "shared") ? shared_memory_node_map(comm_)
                                                         : NodeMap::from_spec(node_spec, size_);
}

Comm::Comm(MPI_Comm comm, NodeMap nodes) : comm_(comm), nodes_(std::move(nodes)) {
  require(comm != MPI_COMM_NULL, "Comm: communicator is MPI_COMM_NULL");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  require(nodes_.num_ranks() == size_,
          "Comm: rank " + std::to_string(rank_) + ": node map covers " +
              std::to_string(nodes_.num_ranks()) + " ranks, communicator has " +
              std::to_string(size_));
  detail::require_same_settings(comm_);
  internal_ = duplicate(comm_);
  cache_ = std::make_shared<detail::CommCache>();
}

detail::PlanState* Comm::cached_plan(const PlanKey& key) const {
  for (const auto& [k, plan] : cache_->plans)
    if (k == key) return plan.get();
  return nullptr;
}

void Comm::store_plan(const PlanKey& key, std::shared_ptr<detail::PlanState> plan) const {
  // Ever-changing sizes: the operation's plans start over. Only that operation's: an
  // alltoallv key holds this rank's own displacements, so its count of plans differs between
  // ranks, and its eviction must not drop another operation's plan on one rank only (that
  // plan's rebuild may be collective: a shared window).
  const auto same_op = [&](const auto& kept) { return kept.first.op == key.op; };
  if (static_cast<std::size_t>(std::count_if(cache_->plans.begin(), cache_->plans.end(), same_op)) >= kMaxPlans)
    std::erase_if(cache_->plans, same_op);
  cache_->plans.emplace_back(key, std::move(plan));
}

void Comm::drop_plan(const PlanKey& key) const {
  std::erase_if(cache_->plans, [&](const auto& kept) { return kept.first == key; });
}

std::size_t Comm::cached_plan_count() const { return cache_->plans.size(); }

std::shared_ptr<detail::PlanState> Comm::idle_request_plan(const PlanKey& key) const {
  for (const auto& [k, plan] : cache_->request_plans)
    if (k == key) return plan.use_count() == 1 && !plan->active ? plan : nullptr;
  return nullptr;
}

void Comm::store_request_plan(const PlanKey& key, std::shared_ptr<detail::PlanState> plan) const {
  for (auto& [k, kept] : cache_->request_plans)
    if (k == key) {
      kept = std::move(plan);  // the old one lives on in the requests that hold it
      return;
    }
  if (cache_->request_plans.size() >= kMaxPlans) cache_->request_plans.clear();
  cache_->request_plans.emplace_back(key, std::move(plan));
}

std::optional<Comm::Decision> Comm::remembered_decision(const DecisionKey& key, std::uint64_t epoch) const {
  if (cache_->decisions_epoch != epoch) return std::nullopt;
  for (const auto& [k, d] : cache_->decisions)
    if (k == key) return d;
  return std::nullopt;
}

void Comm::remember_decision(const DecisionKey& key, std::uint64_t epoch, Decision decision) const {
  if (cache_->decisions_epoch != epoch) {
    cache_->decisions.clear();
    cache_->decisions_epoch = epoch;
  }
  // Many distinct keys (alltoallv with ever-changing counts): start over rather than grow.
  if (cache_->decisions.size() >= kMaxDecisions) cache_->decisions.clear();
  cache_->decisions.emplace_back(key, std::move(decision));
}

std::byte* Comm::scratch(int slot, std::size_t bytes) const {
  auto& slots = cache_->scratch;
  if (slots.size() <= static_cast<std::size_t>(slot)) slots.resize(slot + 1);
  auto& buf = slots[slot];
  if (buf.size() < bytes) buf.resize(bytes);
  return buf.data();
}

}  // namespace libcomm
