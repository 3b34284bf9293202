// NodeMap: which node (SMP machine) each rank of a communicator lives on.
//
// Hierarchical algorithms (paper 000 ClusteredAllToAll, paper 002 leader / SA / RD) need
// it. It comes from the MPI library (ranks sharing memory form a node) or from a spec, so
// that one machine or a SimGrid platform can pretend to be a cluster of SMP nodes:
//   "shared"          ranks that share memory (MPI_Comm_split_type)          [default]
//   "flat"            every rank is a node of its own
//   "ppn=4"           4 consecutive ranks per node (the last node may be smaller)
//   "sizes=1,2,3"     nodes of 1, 2 and 3 consecutive ranks (must add up to P)
//   "map=0,0,1,2"     node of every rank, explicitly
//   "file:PATH"       a file holding node sizes (whitespace separated, '#' comments)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace libcomm {

class NodeMap {
 public:
  NodeMap() = default;
  // node_of_rank[r] is the node of rank r; node ids are renumbered 0..N-1 in order of
  // first appearance.
  explicit NodeMap(std::vector<int> node_of_rank);

  // Parses a spec (see above) for a communicator of `nranks` ranks. "shared" is not
  // accepted here (it needs MPI); use Comm for that.
  static NodeMap from_spec(std::string_view spec, int nranks);
  static NodeMap from_sizes(const std::vector<int>& sizes);
  // The node sizes of a node map file's text (whitespace separated positive integers,
  // '#' starts a comment); `source` names the file in errors.
  static std::vector<int> sizes_from_text(std::string_view text, const std::string& source);
  static NodeMap one_rank_per_node(int nranks);

  int num_ranks() const { return static_cast<int>(node_of_rank_.size()); }
  int num_nodes() const { return static_cast<int>(ranks_of_node_.size()); }
  int node_of(int rank) const { return node_of_rank_.at(rank); }
  // Index of `rank` among the ranks of its node (paper 000: l(u)).
  int local_index(int rank) const { return local_index_.at(rank); }
  int node_size(int node) const { return static_cast<int>(ranks_of_node_.at(node).size()); }
  const std::vector<int>& ranks_of_node(int node) const { return ranks_of_node_.at(node); }
  const std::vector<int>& node_of_rank() const { return node_of_rank_; }
  std::vector<int> node_sizes() const;
  // "3 nodes: 1,2,3" style description for logs.
  std::string describe() const;

  bool operator==(const NodeMap& o) const { return node_of_rank_ == o.node_of_rank_; }

 private:
  std::vector<int> node_of_rank_;
  std::vector<int> local_index_;
  std::vector<std::vector<int>> ranks_of_node_;
};

}  // namespace libcomm
