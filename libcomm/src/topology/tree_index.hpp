// Precomputed views of a switch tree for work done once per message (paper 003, sections 3
// and 5): the contention check and the synchronisation plan both look at 16.8 M paths at
// 4096 machines, so nothing here walks the tree per query.
//   * machines in DFS preorder, and the depth of the common ancestor of two machines in
//     O(1): the minimum of the common-ancestor depths of preorder neighbours between them
//     (a sparse table over M - 1 entries);
//   * DFS intervals, so "does directed edge e lie on the path src -> dst" is two compares
//     per end;
//   * the edge ids of a path copied from per-switch lists (the switch's own up edge and
//     those above it; the down edges from the root to it) instead of climbing the tree.
// Edge ids are Topology's: 2 (child - 1) for child -> parent, 2 (child - 1) + 1 for
// parent -> child, node 0 being the root of the internal rooting.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "libcomm/topology.hpp"

namespace libcomm::detail {

class TreeIndex {
 public:
  explicit TreeIndex(const Topology& t);

  int num_machines() const { return static_cast<int>(position_.size()); }
  // Preorder position of machine m.
  int position(int machine) const { return position_[static_cast<std::size_t>(machine)]; }
  // Depth of the machine at a preorder position.
  int depth_at(int pos) const { return depth_at_[static_cast<std::size_t>(pos)]; }
  // Depth of the common ancestor of the machines at preorder positions a and b (a == b: the
  // machine's own depth).
  int common_depth_at(int a, int b) const {
    if (a == b) return depth_at(a);
    if (a > b) std::swap(a, b);
    const auto len = static_cast<unsigned>(b - a);
    const int level = 31 - __builtin_clz(len);
    const std::uint16_t* row =
        table_.data() + static_cast<std::size_t>(level) * static_cast<std::size_t>(stride_);
    const int x = row[a], y = row[b - (1 << level)];
    return x < y ? x : y;
  }

  // DFS interval [enter, leave) of a node; a machine's node is a leaf unless it is the root
  // (node 0), so a machine y lies below node c iff enter(c) <= enter(y) < leave(c).
  std::uint32_t enter(int node) const { return enter_[static_cast<std::size_t>(node)]; }
  // Whether directed edge e is on the path between the machines whose nodes were entered at
  // src_enter and dst_enter (up edges carry messages out of the child's subtree, down
  // edges into it).
  bool on_path(int e, std::uint32_t src_enter, std::uint32_t dst_enter) const {
    const Interval& c = child_interval_[static_cast<std::size_t>(e) >> 1];
    const bool src_in = src_enter - c.enter < c.size, dst_in = dst_enter - c.enter < c.size;
    return (e & 1) == 0 ? src_in && !dst_in : dst_in && !src_in;
  }

  // Writes the edge ids of the path from machine node a up to the common ancestor at depth
  // `top` and down to machine node b (in path order) to `out`; returns how many. `out` must
  // hold max_path() entries.
  int path(int a, int b, int top, int* out) const {
    const int ups = depth_[static_cast<std::size_t>(a)] - top,
              downs = depth_[static_cast<std::size_t>(b)] - top;
    if (ups > 0) {
      out[0] = 2 * (a - 1);
      const int* up = up_edges_.data() +
                      up_start_[static_cast<std::size_t>(parent_[static_cast<std::size_t>(a)])];
      for (int i = 1; i < ups; ++i) out[i] = up[i - 1];
    }
    if (downs > 0) {
      const int* down = down_edges_.data() +
                        up_start_[static_cast<std::size_t>(parent_[static_cast<std::size_t>(b)])] +
                        top;
      for (int i = 0; i + 1 < downs; ++i) out[ups + i] = down[i];
      out[ups + downs - 1] = 2 * (b - 1) + 1;
    }
    return ups + downs;
  }
  int max_path() const { return max_path_; }

 private:
  struct Interval {
    std::uint32_t enter, size;  // the child's DFS interval [enter, enter + size)
  };
  std::vector<int> position_, depth_at_;
  // Level l at [l * stride_ ..]: min of adjacent[i .. i + 2^l). Depths fit 16 bits (at most
  // 65536 nodes); the table of 4096 machines is 98 KB, which mostly stays in cache.
  std::vector<std::uint16_t> table_;
  int stride_ = 0;
  std::vector<std::uint32_t> enter_;
  std::vector<Interval> child_interval_;  // by child node - 1 (= edge id / 2)
  std::vector<int> parent_, depth_;
  // Per node: the up edges from it towards the root (its own first) and the down edges from
  // the root to it (root side first), each list depth(node) long.
  std::vector<int> up_start_, up_edges_, down_edges_;
  int max_path_ = 0;
};

}  // namespace libcomm::detail
