// Precomputed views of a switch tree: see tree_index.hpp.
#include "tree_index.hpp"

#include <algorithm>

namespace libcomm::detail {

TreeIndex::TreeIndex(const Topology& t) {
  const int n = t.num_nodes(), m = t.num_machines();
  parent_.resize(static_cast<std::size_t>(n));
  depth_.resize(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v) parent_[v] = t.parent(v), depth_[v] = t.depth(v);

  // Depth-first from the root: enter/leave times, and the machine nodes in the order met.
  enter_.assign(static_cast<std::size_t>(n), 0);
  std::vector<std::uint32_t> leave(static_cast<std::size_t>(n), 0);
  position_.assign(static_cast<std::size_t>(m), -1);
  std::vector<int> node_at;  // machine node at each preorder position
  std::uint32_t clock = 0;
  auto visit = [&](int x) {
    enter_[x] = clock++;
    if (t.is_machine(x)) {
      position_[t.machine_index(x)] = static_cast<int>(node_at.size());
      node_at.push_back(x);
    }
  };
  std::vector<std::pair<int, std::size_t>> stack = {{0, 0}};
  visit(0);
  while (!stack.empty()) {
    auto& [x, next] = stack.back();
    const auto& adj = t.neighbours(x);
    if (next < adj.size()) {
      const int y = adj[next++];
      if (y == parent_[x]) continue;
      visit(y);
      stack.emplace_back(y, 0);
    } else {
      leave[x] = clock++;
      stack.pop_back();
    }
  }
  child_interval_.resize(static_cast<std::size_t>(n > 0 ? n - 1 : 0));
  for (int c = 1; c < n; ++c) child_interval_[c - 1] = {enter_[c], leave[c] - enter_[c]};

  // Common-ancestor depth of preorder neighbours (climbing: once per pair), then the
  // sparse table of minima.
  depth_at_.resize(static_cast<std::size_t>(m));
  for (int p = 0; p < m; ++p) depth_at_[p] = depth_[node_at[p]];
  stride_ = std::max(1, m - 1);
  int levels = 1;
  while ((1 << levels) <= m - 1) ++levels;
  table_.assign(static_cast<std::size_t>(levels) * static_cast<std::size_t>(stride_), 0);
  for (int p = 0; p + 1 < m; ++p) {
    int u = node_at[p], v = node_at[p + 1];
    while (depth_[u] > depth_[v]) u = parent_[u];
    while (depth_[v] > depth_[u]) v = parent_[v];
    while (u != v) u = parent_[u], v = parent_[v];
    table_[p] = static_cast<std::uint16_t>(depth_[u]);
  }
  for (int l = 1; l < levels; ++l) {
    const int half = 1 << (l - 1);
    const std::uint16_t* prev =
        table_.data() + static_cast<std::size_t>(l - 1) * static_cast<std::size_t>(stride_);
    std::uint16_t* row =
        table_.data() + static_cast<std::size_t>(l) * static_cast<std::size_t>(stride_);
    for (int i = 0; i + 2 * half <= m - 1; ++i) row[i] = std::min(prev[i], prev[i + half]);
  }

  // Per switch: up edges towards the root and down edges from the root, depth(node) each.
  up_start_.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int v = 0; v < n; ++v) {
    if (!t.is_machine(v)) {
      for (int x = v; x != 0; x = parent_[x]) up_edges_.push_back(2 * (x - 1));
      const std::size_t begin = down_edges_.size();
      for (int x = v; x != 0; x = parent_[x]) down_edges_.push_back(2 * (x - 1) + 1);
      std::reverse(down_edges_.begin() + static_cast<std::ptrdiff_t>(begin), down_edges_.end());
    }
    up_start_[v + 1] = static_cast<int>(up_edges_.size());
  }
  const int deepest = n > 0 ? *std::max_element(depth_.begin(), depth_.end()) : 0;
  max_path_ = 2 * deepest + 2;
}

}  // namespace libcomm::detail
