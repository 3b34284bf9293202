// Internal: what a Comm keeps for the library, one typed field per kind of state (no
// string keys, no casts). Shared by every copy of the Comm and freed with the last.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "libcomm/buffer.hpp"
#include "libcomm/comm.hpp"

namespace libcomm {
class Topology;
}

namespace libcomm::detail {

struct Hierarchy;    // alltoall/multicore.cpp: the node / leader / column sub-communicators
class OnlineSite;    // choice/policy.hpp: one decision of the online policy
struct NodeChannel;  // runtime/node_channel.hpp: the node's communicator
struct StagedState;  // alltoallv/staged_engine.cpp: routing per algorithm, reused buffers

// No lock: a Comm is used as its MPI communicator is, and MPI makes two collectives
// started concurrently on one communicator erroneous (MPI-4.0 s. 6.14), so only one
// thread at a time reaches the cache of a communicator (two communicators have two).
// A lock here cost a third of a 1-rank call (perf, 8 B blocks).
struct CommCache {
  std::vector<std::pair<PlanKey, std::shared_ptr<PlanState>>> plans, request_plans;
  std::uint64_t decisions_epoch = 0;
  std::vector<std::pair<DecisionKey, Comm::Decision>> decisions;
  // The online policy's decisions, measured or being measured (kept apart from the memo
  // above, which may start over: a site's measurements must not).
  std::vector<std::pair<DecisionKey, std::shared_ptr<OnlineSite>>> online_sites;
  // The size class each call site of an operation decided per site agreed on, and its calls
  // (Driver::site_class).
  struct SiteClass {
    int size_class = -1;
    std::uint64_t calls = 0;
    // What the last agreement left to run when it left nothing to exchange (the algorithm, as
    // an int, and why; -1 otherwise): the site's calls with other options decide on it too.
    int nothing_algo = -1;
    std::string nothing_reason;
  };
  std::vector<std::pair<std::uint64_t, SiteClass>> site_classes;
  std::vector<ByteBuffer> scratch;
  std::vector<std::size_t> shape;  // direct alltoallv: the key of this call's counts, reused
  std::shared_ptr<const Topology> topology;
  std::shared_ptr<const NodeChannel> node_channel;
  std::shared_ptr<const Hierarchy> hierarchy;
  std::shared_ptr<StagedState> staged;

  // A new switch tree changes what Auto picks and what tree_scheduled's plans hold.
  void set_topology(std::shared_ptr<const Topology> t) {
    topology = std::move(t);
    plans.clear();
    request_plans.clear();
    decisions.clear();
    online_sites.clear();
  }
};

}  // namespace libcomm::detail
