// commbench --op alltoall: the regular all-to-all (libcomm/alltoall.hpp).
#include <cstring>
#include <iomanip>
#include <iostream>

#include "apps/common.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/buffer.hpp"
#include "libcomm/topology.hpp"
#include "operation.hpp"

namespace commbench {
namespace {

using libcomm::AlltoallAlgo;

std::string g_inter = "auto";  // --inter
std::string g_topology;        // --topology
std::string g_intra = "shared";  // --intra
std::string g_clustered_steps = "overlap";  // --clustered-steps

class AlltoallOp : public Operation {
 public:
  AlltoallOp(const libcomm::Comm& comm, const Settings& s) : Operation("alltoall"), comm_(comm) {
    opts_.allow_fallback = !s.no_fallback;
    opts_.node_shared_memory = g_intra == "shared";
    opts_.one_matching_per_step = g_clustered_steps == "one-matching";
    try {
      opts_.inter_node = libcomm::alltoall_algo_from_name(g_inter);
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--inter: ") + e.what());
    }
    libcomm::require(!libcomm::is_hierarchical(opts_.inter_node),
                     "--inter: '" + g_inter +
                         "' is hierarchical; the inter-node step needs a regular algorithm");
    if (!g_topology.empty()) {
      try {
        libcomm::attach_topology(comm_, libcomm::Topology::load(g_topology));
      } catch (const libcomm::Error& e) {
        throw libcomm::Error(std::string("--topology: ") + e.what());
      }
    }
  }

  void check_applicable(const std::string& algo, std::size_t block) const override {
    libcomm::AlltoallOptions o = opts_;
    libcomm::choose_alltoall(libcomm::alltoall_algo_from_name(parse_timed(algo).algo), block, comm_, o);
  }

  void prepare(std::size_t b) override {
    b_ = b;
    const std::size_t total = b * static_cast<std::size_t>(comm_.size());
    send_.resize(total);
    recv_.resize(total);
    if (libcomm::simulated_payload()) return;  // shared pages: contents mean nothing
    for (int dst = 0; dst < comm_.size(); ++dst)
      apps::fill_pattern(send_.data() + dst * b, comm_.rank(), dst, b);
  }

  void reset() override {
    if (!libcomm::simulated_payload()) std::memset(recv_.data(), 0xA5, recv_.size());
  }

  std::string run(const std::string& algo, bool checked) override {
    libcomm::AlltoallOptions o = opts_;
    o.check_args = checked;
    const auto c = libcomm::alltoall(send_.data(), recv_.data(), b_, comm_,
                                     libcomm::alltoall_algo_from_name(parse_timed(algo).algo), o);
    return ran(c, libcomm::alltoall_algo_name(c));
  }

  std::string note(const std::string& algo, std::size_t block) const override {
    std::string n = choice_note(algo, block, libcomm::alltoall_algo_from_name, [this](libcomm::AlltoallAlgo a, std::size_t b) {
      return libcomm::choose_alltoall(a, b, comm_, opts_);
    });
    // The record says how the clustered factor ran its steps.
    const auto a = libcomm::alltoall_algo_from_name(parse_timed(algo).algo);
    if (opts_.one_matching_per_step && (a == AlltoallAlgo::ClusteredFactor || a == AlltoallAlgo::ClusteredFactorFill))
      n += std::string(n.empty() ? "" : "; ") + algo + ": one matching per step (--clustered-steps one-matching)";
    return n;
  }

  long long check(const std::string& algo) override {
    long long bad = 0;
    for (int src = 0; src < comm_.size(); ++src) {
      const std::size_t at = apps::check_pattern(recv_.data() + src * b_, src, comm_.rank(), b_);
      if (at != b_) {
        if (bad == 0)
          std::cerr << "commbench: rank " << comm_.rank() << ": alltoall " << algo << " block "
                    << b_ << " B from rank " << src << " differs at byte " << at << "\n";
        ++bad;
      }
    }
    return bad;
  }

 private:
  const libcomm::Comm& comm_;
  libcomm::AlltoallOptions opts_;
  std::size_t b_ = 0;
  libcomm::ByteBuffer send_, recv_;
};

const Registrar registrar(
    "alltoall",
    {"regular all-to-all: every rank sends one block to every rank",
     [](CLI::App& app) {
       app.add_option("--topology", g_topology,
                      "alltoall: switch tree (inputs/topologies/*.topo) for tree_scheduled and "
                      "tree_scheduled_barrier; default: one switch holding every rank")
           ->check(CLI::ExistingFile);
       app.add_option("--inter", g_inter,
                      "alltoall: regular algorithm for the inter-node step of leader / "
                      "send_aggregate / recv_distribute")
           ->capture_default_str();
       app.add_option("--intra", g_intra,
                      "alltoall: how leader / send_aggregate / recv_distribute move data inside a node: "
                      "shared (a shared-memory window, when the node's processes share memory) or "
                      "messages (the fallback)")
           ->check(CLI::IsMember({"shared", "messages"}))
           ->capture_default_str();
       app.add_option("--clustered-steps", g_clustered_steps,
                      "alltoall: how clustered_factor and clustered_factor_fill run their steps: overlap (a "
                      "process starts each step once its own partner is there, so several of a node's "
                      "processes may talk to other nodes at once) or one-matching (one process of a node "
                      "at a time talks to another node, in step order: paper 000's single-ported execution)")
           ->check(CLI::IsMember({"overlap", "one-matching"}))
           ->capture_default_str();
     },
     make_operation<AlltoallOp>});

}  // namespace
}  // namespace commbench
