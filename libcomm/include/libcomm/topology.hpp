// Ethernet switch trees (paper 003, section 3): the network model the contention-free
// all-to-all scheduler works on.
//
// The network is a tree of switches and machines; machines are leaves. Every physical
// link (u, v) is two directed edges (u, v) and (v, u); two messages contend when their
// paths share a directed edge. Removing link (u, v) splits the machines into Mu and Mv;
// the all-to-all personalised pattern (AAPC) loads both directions of the link with
// |Mu| x |Mv| messages. The most loaded links are the bottlenecks, and the peak
// aggregate throughput of AAPC is bounded by |M| (|M| - 1) B / (|Mu| |Mv|).
//
// Topologies are read from a small text format (inputs/topologies/README.md):
//
//   switch s0 s1             # declares switches
//   machine n[0-3] n4        # declares machines; listing order is rank order by default
//   link s0 n0 n1 s1         # links s0 to each of n0, n1 and s1
//   link s1 n[2-4]
//   ranks n4 n3 n2 n1 n0     # optional: the machine of rank 0, 1, ...
//
// Errors name the source and the line: an unknown node, a link that closes a cycle, a
// machine that is not a leaf, a disconnected part, fewer than 3 machines.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace libcomm {

class Comm;

class Topology {
 public:
  // A physical link, named by its two end nodes. `machines_*` counts the machines on the
  // `a` side and on the `b` side once the link is removed.
  struct Link {
    int a = 0, b = 0;
    int machines_a = 0, machines_b = 0;
    // AAPC messages over each direction of the link: machines_a * machines_b.
    std::int64_t load() const { return static_cast<std::int64_t>(machines_a) * machines_b; }
  };
  // A directed edge of a path: from node `from` to its neighbour `to`.
  struct Edge {
    int from = 0, to = 0;
    bool operator==(const Edge&) const = default;
  };

  Topology() = default;

  // Parses the text format; `source` names the input in error messages ("fig1.topo").
  // Throws Error("<source>:<line>: ...") on malformed input.
  static Topology parse(std::string_view text, const std::string& source = "<topology>");
  // Reads and parses a file; throws Error naming the path when it cannot be read.
  static Topology load(const std::string& path);
  // Builds a tree from names and links directly (generators, tests). Node i is a machine
  // when is_machine[i]; machines are numbered in node order. Same checks as parse().
  static Topology from_links(std::vector<std::string> names, std::vector<bool> is_machine,
                             const std::vector<std::pair<int, int>>& links);
  // One switch with `machines` machines (the fallback when no topology is given, and
  // topology (a) of Fig. 5 for 24 machines): regular({machines}).
  static Topology single_switch(int machines);
  // A random tree for property tests and benchmarks: `machines` machines hang from
  // `switches` switches joined in a random tree. Deterministic for a given seed. With
  // `max_depth_bias` near 1 the switches form long chains (deep trees); near 0 they hang
  // off few switches (flat trees).
  static Topology random(int machines, int switches, std::uint64_t seed,
                         double max_depth_bias = 0.5);
  // A regular tree: a root switch with fanout[0] children, each with fanout[1] children,
  // and so on; the last level are machines. {64, 64} is 64 switches of 64 machines under
  // one root (4096 machines); {4096} is one switch. Throws Error for an empty list, a
  // fan-out below 1, fewer than 3 machines or more than 65536 nodes.
  static Topology regular(const std::vector<int>& fanout);

  // The tree a sub-communicator sees: the machines of the ranks `ranks` (ranks of this
  // tree's communicator, in the sub-communicator's rank order) and the switches between
  // them; sub-rank k runs on the machine of rank ranks[k]. Throws Error for a rank out of
  // range, a repeated rank or fewer than 3 ranks.
  Topology restricted(const std::vector<int>& ranks) const;

  // Writes the tree back in the text format (parse(to_text()) gives the same tree).
  std::string to_text() const;

  int num_nodes() const { return static_cast<int>(names_.size()); }
  int num_machines() const { return static_cast<int>(machines_.size()); }
  const std::string& name(int node) const { return names_.at(node); }
  bool is_machine(int node) const { return is_machine_.at(node); }
  // Node id of machine m (machines numbered in listing order).
  int machine_node(int m) const { return machines_.at(m); }
  // Machine number of a node, -1 for a switch.
  int machine_index(int node) const { return machine_index_.at(node); }
  // Node id by name, -1 when unknown.
  int find(std::string_view name) const;
  const std::vector<int>& neighbours(int node) const { return adjacency_.at(node); }

  // The machine each MPI rank runs on (a permutation of 0..|M|-1): from the file's
  // `ranks` line, else rank i on the i-th machine listed.
  const std::vector<int>& machine_of_rank() const { return machine_of_rank_; }
  // Replaces the mapping; throws Error unless it is a permutation of the machines.
  void set_machine_of_rank(std::vector<int> machine_of_rank);
  int rank_of_machine(int m) const { return rank_of_machine_.at(m); }

  // The unique path from node u to node v as directed edges (empty when u == v).
  std::vector<Edge> path(int u, int v) const;
  // Dense id of a directed edge in [0, 2 * (num_nodes() - 1)); the edge must exist.
  int edge_id(int from, int to) const;
  int num_edge_ids() const { return 2 * (num_nodes() - 1); }
  // Appends the edge ids of path(u, v) to `out` (allocation-free form of path()).
  void path_edge_ids(int u, int v, std::vector<int>& out) const;

  // Every link with its AAPC load, in a fixed order (by the child node of the internal
  // rooting, which is the node listed first).
  std::vector<Link> links() const;
  // The load of AAPC: the load of a bottleneck link.
  std::int64_t aapc_load() const;
  // The links whose load equals aapc_load().
  std::vector<Link> bottleneck_links() const;
  // |M| (|M| - 1) B / (|Mu| |Mv|) for link bandwidth B (any unit; the result has that
  // unit): the peak aggregate throughput of AAPC (section 3).
  double peak_aggregate_throughput(double link_bandwidth) const;

  // Internal rooting (at node 0) used for paths: parent (-1 at node 0) and depth.
  int parent(int node) const { return parent_.at(node); }
  int depth(int node) const { return depth_.at(node); }
  // Machines in the subtree below `node` in the internal rooting.
  int machines_below(int node) const { return below_.at(node); }
  // Line of the source where node was declared (0 when built in code).
  int declared_line(int node) const { return line_.at(node); }

 private:
  friend class TopologyParser;  // parse(), line by line (topology.cpp)
  void finish(const std::string& source);

  std::vector<std::string> names_;
  std::vector<bool> is_machine_;
  std::vector<int> line_;
  std::vector<std::vector<int>> adjacency_;
  std::vector<int> machines_, machine_index_;
  std::vector<int> parent_, depth_, below_;
  std::vector<int> machine_of_rank_, rank_of_machine_;
};

// Makes `topology` the network of the ranks of `comm` (collective only in the sense that
// every rank must attach the same tree): the tree_scheduled all-to-all uses it. Throws
// Error naming the rank when the tree has a different number of machines than comm has
// ranks.
void attach_topology(const Comm& comm, Topology topology);
// The topology attached to comm, or nullptr.
std::shared_ptr<const Topology> attached_topology(const Comm& comm);

}  // namespace libcomm
