// libFuzzer target: the node-map specs ("ppn=4", "sizes=1,2,3", "map=0,0,1", "flat") and
// the node-map file format (NodeMap::sizes_from_text). Input: the number of ranks on the
// first line (taken modulo 4096, plus 1), the spec or file text after it. Any input must
// give a NodeMap covering exactly that many ranks or a libcomm::Error; any other
// exception, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <string_view>

#include "libcomm/error.hpp"
#include "libcomm/node_map.hpp"

namespace {

void expect(bool cond) {
  if (!cond) std::abort();
}

void check_map(const libcomm::NodeMap& m, int nranks) {
  expect(m.num_ranks() == nranks && m.num_nodes() >= 1 && m.num_nodes() <= nranks);
  const auto sizes = m.node_sizes();
  expect(std::accumulate(sizes.begin(), sizes.end(), 0) == nranks);
  for (int r = 0; r < nranks; ++r) {
    const int node = m.node_of(r);
    expect(m.ranks_of_node(node).at(static_cast<std::size_t>(m.local_index(r))) == r);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto newline = input.find('\n');
  const std::string_view head = input.substr(0, newline);
  const std::string_view body =
      newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);
  unsigned n = 0;
  for (char c : head)
    if (c >= '0' && c <= '9') n = (n * 10 + static_cast<unsigned>(c - '0')) % 4096;
  const int nranks = static_cast<int>(n) + 1;
  // file:PATH would read the disk, and shared needs MPI: neither belongs in a fuzzer.
  if (!body.starts_with("file:") && body != "shared") {
    try {
      check_map(libcomm::NodeMap::from_spec(body, nranks), nranks);
    } catch (const libcomm::Error&) {
    }
  }
  try {
    const auto sizes = libcomm::NodeMap::sizes_from_text(body, "fuzz");
    for (int s : sizes) expect(s > 0);
  } catch (const libcomm::Error&) {
  }
  return 0;
}
