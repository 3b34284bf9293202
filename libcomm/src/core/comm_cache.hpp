// Internal: what a Comm keeps for the library, one typed field per kind of state (no
// string keys, no casts). Shared by every copy of the Comm and freed with the last.
#pragma once

#include <mutex>
#include <memory>
#include <utility>
#include <vector>

#include "libcomm/buffer.hpp"
#include "libcomm/comm.hpp"

namespace libcomm {
class Topology;
}

namespace libcomm::detail {

struct Hierarchy;    // alltoall/multicore.cpp: the node / leader / column sub-communicators
struct StagedState;  // alltoallv/staged_engine.cpp: routing per algorithm, reused buffers

struct CommCache {
  // Guards the plans, decisions, scratch slots and the switch tree (fields set once by a
  // collective call, `hierarchy` and `staged`, are used by one blocking call at a time).
  std::mutex mutex;
  std::vector<std::pair<PlanKey, std::shared_ptr<PlanState>>> plans;
  std::uint64_t decisions_epoch = 0;
  std::vector<std::pair<DecisionKey, Comm::Decision>> decisions;
  std::vector<ByteBuffer> scratch;
  std::shared_ptr<const Topology> topology;
  std::shared_ptr<const Hierarchy> hierarchy;
  std::shared_ptr<StagedState> staged;

  // A new switch tree changes what Auto picks and what tree_scheduled's plans hold.
  void set_topology(std::shared_ptr<const Topology> t) {
    std::lock_guard lock(mutex);
    topology = std::move(t);
    plans.clear();
    decisions.clear();
  }
};

}  // namespace libcomm::detail
