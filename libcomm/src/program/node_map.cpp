#include "libcomm/node_map.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "libcomm/error.hpp"

namespace libcomm {

namespace {

// Parses "1,2,3" into integers; `what` names the spec in errors.
std::vector<int> parse_int_list(std::string_view text, const std::string& what) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    std::string_view item = text.substr(pos, comma - pos);
    int v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    require(ec == std::errc() && ptr == item.data() + item.size() && !item.empty(),
            "node map " + what + ": '" + std::string(item) + "' is not an integer");
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

}  // namespace

NodeMap::NodeMap(std::vector<int> node_of_rank) {
  // Renumber nodes 0..N-1 in order of first appearance.
  std::map<int, int> renumber;
  node_of_rank_.reserve(node_of_rank.size());
  for (int n : node_of_rank) {
    auto [it, inserted] = renumber.try_emplace(n, static_cast<int>(renumber.size()));
    node_of_rank_.push_back(it->second);
    if (inserted) ranks_of_node_.emplace_back();
  }
  local_index_.resize(node_of_rank_.size());
  for (int r = 0; r < static_cast<int>(node_of_rank_.size()); ++r) {
    auto& members = ranks_of_node_[node_of_rank_[r]];
    local_index_[r] = static_cast<int>(members.size());
    members.push_back(r);
  }
}

NodeMap NodeMap::from_sizes(const std::vector<int>& sizes) {
  // Every size is checked before anything is allocated: "sizes=440000000,0" must fail on
  // node 1 without first building a 440-million-entry map for node 0.
  for (std::size_t n = 0; n < sizes.size(); ++n)
    require(sizes[n] > 0, "node map: node " + std::to_string(n) + " has size " +
                              std::to_string(sizes[n]) + "; sizes must be positive");
  std::vector<int> map;
  for (std::size_t n = 0; n < sizes.size(); ++n)
    map.insert(map.end(), static_cast<std::size_t>(sizes[n]), static_cast<int>(n));
  return NodeMap(std::move(map));
}

NodeMap NodeMap::one_rank_per_node(int nranks) {
  std::vector<int> map(static_cast<std::size_t>(nranks));
  std::iota(map.begin(), map.end(), 0);
  return NodeMap(std::move(map));
}

NodeMap NodeMap::from_spec(std::string_view spec, int nranks) {
  require(nranks > 0, "node map: communicator size must be positive");
  const auto check_total = [&](std::int64_t total, const std::string& what) {
    require(total == nranks, "node map " + what + " covers " + std::to_string(total) + " ranks but the job has " +
                                 std::to_string(nranks));
  };
  // Sizes must add up to nranks; checked before from_sizes() allocates their sum (a
  // fuzzed "sizes=2000000000" must not try to allocate 8 GB). A size below 1 is left
  // to from_sizes(), whose message names the node.
  const auto check_sum = [&](const std::vector<int>& sizes, const std::string& what) {
    if (std::all_of(sizes.begin(), sizes.end(), [](int v) { return v > 0; }))
      check_total(std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}), what);
  };
  const std::string s(spec), quoted = "'" + s + "'";
  if (spec.starts_with("ppn=")) {
    auto v = parse_int_list(spec.substr(4), quoted);
    require(v.size() == 1 && v[0] > 0, "node map " + quoted + ": ppn must be one positive integer");
    std::vector<int> sizes;
    for (int left = nranks; left > 0; left -= v[0]) sizes.push_back(std::min(left, v[0]));
    return from_sizes(sizes);
  }
  if (spec.starts_with("sizes=")) {
    const auto sizes = parse_int_list(spec.substr(6), quoted);
    check_sum(sizes, quoted);
    return from_sizes(sizes);
  }
  if (spec.starts_with("map=")) {
    auto v = parse_int_list(spec.substr(4), quoted);
    for (std::size_t r = 0; r < v.size(); ++r)
      require(v[r] >= 0, "node map " + quoted + ": rank " + std::to_string(r) + " has negative node");
    NodeMap m(std::move(v));
    check_total(m.num_ranks(), quoted);
    return m;
  }
  if (spec.starts_with("file:")) {
    const std::string path = s.substr(5);
    std::ifstream in(path);
    require(static_cast<bool>(in), "node map file '" + path + "': cannot open");
    std::stringstream text;
    text << in.rdbuf();
    const auto sizes = sizes_from_text(text.str(), path);
    check_sum(sizes, "file '" + path + "'");
    return from_sizes(sizes);
  }
  if (spec == "flat") {
    return one_rank_per_node(nranks);
  }
  throw Error("node map: unknown spec '" + s +
              "' (expected shared, flat, ppn=N, sizes=A,B,..., map=N0,N1,..., file:PATH)");
}

std::vector<int> NodeMap::sizes_from_text(std::string_view text, const std::string& source) {
  std::vector<int> sizes;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      int v = 0;
      auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
      require(ec == std::errc() && ptr == w.data() + w.size() && v > 0,
              "node map file '" + source + "' line " + std::to_string(lineno) + ": '" + w +
                  "' is not a positive node size");
      sizes.push_back(v);
    }
  }
  require(!sizes.empty(), "node map file '" + source + "': no node sizes found");
  return sizes;
}

std::vector<int> NodeMap::node_sizes() const {
  std::vector<int> out;
  for (const auto& r : ranks_of_node_) out.push_back(static_cast<int>(r.size()));
  return out;
}

std::string NodeMap::describe() const {
  std::ostringstream os;
  os << num_nodes() << (num_nodes() == 1 ? " node" : " nodes") << ": sizes ";
  auto sizes = node_sizes();
  for (std::size_t i = 0; i < sizes.size(); ++i) os << (i ? "," : "") << sizes[i];
  return os.str();
}

}  // namespace libcomm
