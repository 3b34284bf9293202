// libFuzzer target: the switch-tree text format (Topology::parse, paper 003 s. 3).
// Any input must either parse into a tree that satisfies the model's invariants or be
// refused with libcomm::Error; any other exception, a crash, a sanitizer report or a
// broken invariant is a bug (the fuzzer aborts and saves the input).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "libcomm/error.hpp"
#include "libcomm/topology.hpp"

namespace {

void expect(bool cond) {
  if (!cond) std::abort();
}

// The tree invariants the scheduler relies on, and the text round trip.
void check_tree(const libcomm::Topology& t) {
  const int n = t.num_nodes(), m = t.num_machines();
  expect(m >= 3 && m <= n);
  int edges = 0;
  for (int v = 0; v < n; ++v) {
    edges += static_cast<int>(t.neighbours(v).size());
    if (t.is_machine(v)) expect(t.neighbours(v).size() == 1);
  }
  expect(edges == 2 * (n - 1));  // connected with n - 1 links: a tree
  expect(t.machines_below(0) == m || t.is_machine(0));
  std::int64_t total = 0;
  for (const auto& l : t.links()) {
    // A switch may be a leaf (a spare switch with nothing below it): its link carries
    // no AAPC traffic, so one side may hold 0 machines.
    expect(l.machines_a + l.machines_b == m && l.machines_a >= 0 && l.machines_b >= 0);
    total = std::max(total, l.load());
  }
  expect(total == t.aapc_load());
  // rank -> machine is a permutation
  std::vector<bool> seen(static_cast<std::size_t>(m), false);
  for (int mach : t.machine_of_rank()) {
    expect(mach >= 0 && mach < m && !seen[mach]);
    seen[mach] = true;
  }
  // A path between the first and last machine has at most n - 1 edges.
  expect(static_cast<int>(t.path(t.machine_node(0), t.machine_node(m - 1)).size()) <= n - 1);
  const auto again = libcomm::Topology::parse(t.to_text(), "round-trip");
  expect(again.num_nodes() == n && again.num_machines() == m &&
         again.aapc_load() == t.aapc_load() && again.machine_of_rank() == t.machine_of_rank());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check_tree(libcomm::Topology::parse(text, "fuzz"));
  } catch (const libcomm::Error&) {
    // Refused with a message: the expected outcome for malformed input.
  }
  return 0;
}
