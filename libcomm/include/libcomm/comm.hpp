// Comm: an MPI communicator together with where its ranks live (NodeMap).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libcomm/buffer.hpp"
#include "libcomm/node_map.hpp"

namespace libcomm {

namespace detail {
struct PlanState;
struct CommCache;
}

// What one Auto decision depends on besides the communicator: the operation, the size
// (and for alltoallv the spread of the counts) and the options that can change the
// outcome, packed into `options` by the operation.
struct DecisionKey {
  std::string_view op;  // a string literal: "alltoall", "allgather", ...
  std::uint64_t bytes = 0;
  double spread = 1.0;
  std::uint64_t options = 0;
  bool operator==(const DecisionKey& o) const {  // numbers first: the op text rarely decides
    return bytes == o.bytes && options == o.options && spread == o.spread && op == o.op;
  }
};

// What a plan kept by the blocking calls was built for: the operation, the algorithm that
// runs, the size and the options that change the step program.
struct PlanKey {
  std::string_view op;  // a string literal: "alltoall", ...
  int algo = 0;
  std::uint64_t bytes = 0;
  std::uint64_t options = 0;
  bool operator==(const PlanKey& o) const {
    return algo == o.algo && bytes == o.bytes && options == o.options && op == o.op;
  }
};

// Used as its MPI communicator is: collectives on one communicator (through any copy of
// its Comm) must not be started by two threads at once, as MPI requires; different
// communicators may be used from different threads.
class Comm {
 public:
  // Wraps `comm` (not owned). The node map comes from `node_spec` (see NodeMap); "shared"
  // (the default) asks MPI which ranks share memory. Collective over `comm`.
  explicit Comm(MPI_Comm comm, std::string_view node_spec = "shared");
  Comm(MPI_Comm comm, NodeMap nodes);

  // The user's communicator.
  MPI_Comm mpi() const { return comm_; }
  // A private duplicate that libcomm's own messages travel on, so they can never match a
  // receive the application posted on mpi().
  MPI_Comm internal() const { return *internal_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const NodeMap& nodes() const { return nodes_; }

  // The plans the blocking calls keep (libcomm/plan.hpp), so that a repeated call runs
  // the step program built by the first. At most kMaxPlans are kept; attaching a switch
  // tree drops them.
  // (Borrowed: the plan stays in the cache until store_plan makes room, drop_plan drops it
  // or a switch tree is attached; no reference count changes hands on the hot path.)
  detail::PlanState* cached_plan(const PlanKey& key) const;
  void store_plan(const PlanKey& key, std::shared_ptr<detail::PlanState> plan) const;
  // Frees the plan kept under `key` (its windows and buffers): collective where the plan
  // holds a shared window, so every rank drops the same plans in the same order (the
  // online policy drops the candidates that lost, at the call that decided).
  void drop_plan(const PlanKey& key) const;
  std::size_t cached_plan_count() const;
  static constexpr std::size_t kMaxPlans = 32;
  // The plans the non-blocking calls keep (with scratch of their own): the one kept under
  // `key` when no request holds it any more (the Comm's reference is the last), else null;
  // store_request_plan keeps a new one in place of the old.
  std::shared_ptr<detail::PlanState> idle_request_plan(const PlanKey& key) const;
  void store_request_plan(const PlanKey& key, std::shared_ptr<detail::PlanState> plan) const;
  // The number of collectives started on this communicator, shared by every copy: step
  // programs take their tags from it (runtime/tags.hpp).
  std::shared_ptr<std::uint64_t> sequence_counter() const { return sequence_; }

  // Reusable scratch memory (slot 0, 1, 2, ...) that grows but never shrinks: algorithms
  // that need temporary buffers take them from here, because allocating and freeing
  // large buffers on every call costs far more than the exchange itself under MPI
  // libraries that hook the allocator (measured: Bruck at 64 KiB, 2 ranks, 23 us with
  // reused buffers, 890 us with fresh ones).
  std::byte* scratch(int slot, std::size_t bytes) const;

  // Auto's decisions on this communicator (the algorithm and its reason per key), so that
  // repeated calls with one operation and size cost a lookup instead of a table search.
  // `epoch` names the state of everything global the decisions depend on (the tuning
  // table): entries stored under another epoch are dropped. At most kMaxDecisions are kept.
  struct Decision {
    int algo = 0;
    const std::string* reason = nullptr;  // interned (libcomm/choice.hpp)
  };
  std::optional<Decision> remembered_decision(const DecisionKey& key, std::uint64_t epoch) const;
  void remember_decision(const DecisionKey& key, std::uint64_t epoch, Decision decision) const;
  static constexpr std::size_t kMaxDecisions = 64;

  // Internal (runtime/comm_cache.hpp): everything above that the library keeps per
  // communicator, typed, plus what the algorithms build once (the hierarchical schemes'
  // sub-communicators, the staged alltoallv engine's routing and buffers). Shared by
  // every copy of this Comm, freed with the last.
  detail::CommCache& cache() const { return *cache_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::shared_ptr<MPI_Comm> internal_;
  int rank_ = 0;
  int size_ = 1;
  NodeMap nodes_;
  std::shared_ptr<std::uint64_t> sequence_ = std::make_shared<std::uint64_t>(0);
  std::shared_ptr<detail::CommCache> cache_;
};

// NodeMap of the ranks of `comm` that share memory (MPI_Comm_split_type). Collective.
NodeMap shared_memory_node_map(MPI_Comm comm);

}  // namespace libcomm
