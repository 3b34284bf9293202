// Switch-tree model and its text format (paper 003, section 3).
#include "libcomm/topology.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <unordered_map>

#include "libcomm/comm.hpp"
#include "libcomm/error.hpp"
#include "../runtime/comm_cache.hpp"

namespace libcomm {

namespace {

// Union-find over node ids: a link whose ends are already connected closes a cycle.
struct Components {
  std::vector<int> up;
  explicit Components(int n) : up(static_cast<std::size_t>(n)) {
    std::iota(up.begin(), up.end(), 0);
  }
  int find(int x) {
    while (up[x] != x) x = up[x] = up[up[x]];
    return x;
  }
  bool join(int a, int b) {
    a = find(a), b = find(b);
    if (a == b) return false;
    up[b] = a;
    return true;
  }
};

// At most this many nodes in a tree, names on one line and names in one range: ranges
// make a few bytes of text expand to many names, and a 4 KB file of ranges must neither
// exhaust memory nor keep the parser busy for seconds (found by fuzz_topology: four
// ranges of a million names took over 15 s). 65536 is 16 times the largest tree used.
constexpr std::size_t kMaxNodes = std::size_t{1} << 16;

// "n[0-3]" -> n0 n1 n2 n3; "s[2-4]x" -> s2x s3x s4x; other names as they are.
std::vector<std::string> expand_name(const std::string& token, const std::string& where) {
  const auto open = token.find('[');
  if (open == std::string::npos) {
    require(token.find(']') == std::string::npos, where + ": stray ']' in name '" + token + "'");
    return {token};
  }
  const auto close = token.find(']', open);
  const auto dash = token.find('-', open);
  require(close != std::string::npos && dash != std::string::npos && dash < close,
          where + ": bad range '" + token + "' (expected like n[0-7])");
  auto number = [&](const std::string& t) {
    require(!t.empty() && t.size() < 9 && std::all_of(t.begin(), t.end(), ::isdigit),
            where + ": bad range bound '" + t + "' in '" + token + "'");
    return std::stoi(t);
  };
  const int lo = number(token.substr(open + 1, dash - open - 1));
  const int hi = number(token.substr(dash + 1, close - dash - 1));
  require(lo <= hi, where + ": empty range '" + token + "'");
  require(static_cast<std::size_t>(hi - lo) < kMaxNodes,
          where + ": range '" + token + "' has more than " + std::to_string(kMaxNodes) + " names");
  const std::string prefix = token.substr(0, open), suffix = token.substr(close + 1);
  require(suffix.find('[') == std::string::npos, where + ": one range per name ('" + token + "')");
  std::vector<std::string> out;
  for (int i = lo; i <= hi; ++i) out.push_back(prefix + std::to_string(i) + suffix);
  return out;
}

}  // namespace

int Topology::find(std::string_view name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  return it == names_.end() ? -1 : static_cast<int>(it - names_.begin());
}

// The text format, read line by line (docs/topology.md): switch, machine, link, ranks.
class TopologyParser {
 public:
  explicit TopologyParser(const std::string& source) : source_(source) {}

  void line(int lineno, std::string text) {
    where_ = source_ + ":" + std::to_string(lineno);
    lineno_ = lineno;
    if (const auto hash = text.find('#'); hash != std::string::npos) text.erase(hash);
    std::istringstream words(text);
    std::string directive, token;
    if (!(words >> directive)) return;
    std::vector<std::string> args;
    while (words >> token) {
      for (auto& n : expand_name(token, where_)) args.push_back(std::move(n));
      require(args.size() <= kMaxNodes, where_ + ": more than " + std::to_string(kMaxNodes) + " names on one line");
    }
    if (directive == "switch" || directive == "machine") return declare(directive, args);
    if (directive == "link") return link(args);
    if (directive == "ranks") return rank_order(args);
    throw Error(where_ + ": unknown directive '" + directive + "' (expected switch, machine, link or ranks)");
  }

  Topology finish() && {
    require(t_.num_nodes() > 0, source_ + ": no nodes declared");
    t_.finish(source_);
    if (ranks_line_ != 0) set_rank_order();
    return std::move(t_);
  }

 private:
  int node_of(const std::string& name) const {
    const auto it = id_.find(name);
    require(it != id_.end(), where_ + ": unknown node '" + name + "' (declare it first with 'switch' or 'machine')");
    return it->second;
  }

  void declare(const std::string& directive, const std::vector<std::string>& args) {
    require(!args.empty(), where_ + ": '" + directive + "' needs at least one name");
    require(t_.names_.size() + args.size() <= kMaxNodes,
            where_ + ": more than " + std::to_string(kMaxNodes) + " nodes in the tree");
    for (const auto& name : args) {
      if (const auto it = id_.find(name); it != id_.end())
        throw Error(where_ + ": node '" + name + "' is already declared at line " + std::to_string(t_.line_[it->second]));
      id_.emplace(name, t_.num_nodes());
      comp_.up.push_back(t_.num_nodes());  // a singleton of the union-find
      t_.names_.push_back(name);
      t_.is_machine_.push_back(directive == "machine");
      t_.line_.push_back(lineno_);
      t_.adjacency_.emplace_back();
      first_link_line_.push_back(0);
    }
  }

  // A machine is a leaf: its one link is to a switch.
  void check_leaf(int end) {
    if (!t_.is_machine_[end]) return;
    require(first_link_line_[end] == 0, where_ + ": machine '" + t_.names_[end] +
                                            "' is not a leaf (it already has a link at line " +
                                            std::to_string(first_link_line_[end]) +
                                            "); machines connect to exactly one switch");
    first_link_line_[end] = lineno_;
  }

  void link(const std::vector<std::string>& args) {
    require(args.size() >= 2, where_ + ": 'link A B [C ...]' needs at least two nodes");
    const int a = node_of(args[0]);
    for (std::size_t k = 1; k < args.size(); ++k) {
      const int b = node_of(args[k]);
      require(a != b, where_ + ": node '" + args[0] + "' linked to itself");
      check_leaf(a);
      check_leaf(b);
      require(comp_.join(a, b),
              where_ + ": link " + args[0] + " -- " + args[k] + " closes a cycle (the network must be a tree)");
      t_.adjacency_[a].push_back(b);
      t_.adjacency_[b].push_back(a);
    }
  }

  void rank_order(const std::vector<std::string>& args) {
    require(ranks_line_ == 0, where_ + ": second 'ranks' line (first at line " + std::to_string(ranks_line_) + ")");
    ranks_line_ = lineno_;
    for (const auto& name : args) {
      const int n = node_of(name);
      require(t_.is_machine_[n], where_ + ": 'ranks' lists '" + name + "', which is a switch");
      ranks_.push_back(n);
    }
  }

  void set_rank_order() {
    const std::string where = source_ + ":" + std::to_string(ranks_line_);
    require(static_cast<int>(ranks_.size()) == t_.num_machines(),
            where + ": 'ranks' lists " + std::to_string(ranks_.size()) + " machines, the tree has " +
                std::to_string(t_.num_machines()));
    std::vector<int> m;
    std::vector<bool> seen(ranks_.size(), false);
    for (int n : ranks_) {
      require(!seen[t_.machine_index_[n]], where + ": 'ranks' lists machine '" + t_.names_[n] + "' twice");
      seen[t_.machine_index_[n]] = true;
      m.push_back(t_.machine_index_[n]);
    }
    t_.set_machine_of_rank(std::move(m));
  }

  const std::string& source_;
  std::string where_;
  int lineno_ = 0;
  Topology t_;
  std::unordered_map<std::string, int> id_;
  std::vector<int> first_link_line_;  // per node: line of its first link (machines)
  std::vector<int> ranks_;
  int ranks_line_ = 0;
  Components comp_{0};
};

Topology Topology::parse(std::string_view text, const std::string& source) {
  TopologyParser parser(source);
  std::istringstream in{std::string(text)};
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) parser.line(lineno, line);
  return std::move(parser).finish();
}

Topology Topology::load(const std::string& path) {
  std::ifstream in(path);
  require(static_cast<bool>(in), "topology: cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

Topology Topology::from_links(std::vector<std::string> names, std::vector<bool> is_machine,
                              const std::vector<std::pair<int, int>>& links) {
  require(names.size() == is_machine.size(), "Topology::from_links: names and is_machine differ in length");
  Topology t;
  t.names_ = std::move(names);
  t.is_machine_ = std::move(is_machine);
  t.line_.assign(t.names_.size(), 0);
  const int n = t.num_nodes();
  require(n > 0, "Topology::from_links: no nodes");
  Components comp(n);
  t.adjacency_.assign(static_cast<std::size_t>(n), {});
  for (const auto& [a, b] : links) {
    require(a >= 0 && a < n && b >= 0 && b < n && a != b,
            "Topology::from_links: bad link " + std::to_string(a) + " -- " + std::to_string(b));
    require(comp.join(a, b), "Topology::from_links: link " + t.names_[a] + " -- " + t.names_[b] +
                                 " closes a cycle");
    for (int e : {a, b})
      require(!t.is_machine_[e] || t.adjacency_[e].empty(),
              "Topology::from_links: machine '" + t.names_[e] + "' is not a leaf");
    t.adjacency_[a].push_back(b);
    t.adjacency_[b].push_back(a);
  }
  t.finish("Topology::from_links");
  return t;
}

Topology Topology::restricted(const std::vector<int>& ranks) const {
  const int n = num_nodes();
  std::vector<char> keep(static_cast<std::size_t>(n), 0);
  std::vector<int> machine_nodes;
  for (int r : ranks) {
    require(r >= 0 && r < num_machines(), "Topology::restricted: rank " + std::to_string(r) + " does not exist");
    const int node = machines_[static_cast<std::size_t>(machine_of_rank_[static_cast<std::size_t>(r)])];
    require(!keep[node], "Topology::restricted: rank " + std::to_string(r) + " is listed twice");
    keep[node] = 1;
    machine_nodes.push_back(node);
  }
  for (int node : machine_nodes)  // every switch on a path to the root
    for (int u = parent_[node]; u >= 0 && !keep[u]; u = parent_[u]) keep[u] = 1;
  // Prune switches that lead to one side only (degree <= 1 among the kept nodes).
  for (bool pruned = true; pruned;) {
    pruned = false;
    for (int v = 0; v < n; ++v) {
      if (!keep[v] || is_machine_[v]) continue;
      int degree = 0;
      for (int w : adjacency_[v]) degree += keep[w];
      if (degree <= 1) keep[v] = 0, pruned = true;
    }
  }
  std::vector<int> new_id(static_cast<std::size_t>(n), -1);
  std::vector<std::string> names;
  std::vector<bool> machine;
  for (int v = 0; v < n; ++v)
    if (keep[v]) new_id[v] = static_cast<int>(names.size()), names.push_back(names_[v]), machine.push_back(is_machine_[v]);
  std::vector<std::pair<int, int>> links;
  // Every kept node joins its nearest kept ancestor, if any (its parent may be pruned).
  for (int v = 0; v < n; ++v) {
    if (!keep[v]) continue;
    int u = parent_[v];
    while (u >= 0 && !keep[u]) u = parent_[u];
    if (u >= 0) links.emplace_back(new_id[u], new_id[v]);
  }
  Topology t = from_links(std::move(names), std::move(machine), links);
  std::vector<int> machine_of;
  for (int node : machine_nodes) machine_of.push_back(t.machine_index(new_id[node]));
  t.set_machine_of_rank(std::move(machine_of));
  return t;
}

void Topology::finish(const std::string& source) {
  const int n = num_nodes();
  // Root the tree at node 0 (breadth first, no recursion: trees may be deep).
  parent_.assign(static_cast<std::size_t>(n), -2);
  depth_.assign(static_cast<std::size_t>(n), 0);
  std::vector<int> order;
  order.reserve(static_cast<std::size_t>(n));
  parent_[0] = -1;
  order.push_back(0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const int u = order[k];
    for (int v : adjacency_[u])
      if (parent_[v] == -2) {
        parent_[v] = u;
        depth_[v] = depth_[u] + 1;
        order.push_back(v);
      }
  }
  auto where = [&](int line) { return line > 0 ? source + ":" + std::to_string(line) : source; };
  for (int v = 0; v < n; ++v)
    if (parent_[v] == -2)
      throw Error(where(line_[v]) + ": disconnected part: node '" + names_[v] +
                  "' has no path to '" + names_[0] + "'");
  machines_.clear();
  machine_index_.assign(static_cast<std::size_t>(n), -1);
  for (int v = 0; v < n; ++v)
    if (is_machine_[v]) {
      machine_index_[v] = static_cast<int>(machines_.size());
      machines_.push_back(v);
    }
  if (num_machines() < 3) {
    const int at = machines_.empty() ? 0 : line_[machines_.back()];
    throw Error(where(at) + ": the tree has " +
                std::to_string(num_machines()) +
                " machine(s); at least 3 are needed (all-to-all on 1 or 2 machines needs no schedule)");
  }
  below_.assign(static_cast<std::size_t>(n), 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (is_machine_[*it]) ++below_[*it];
    if (parent_[*it] >= 0) below_[parent_[*it]] += below_[*it];
  }
  std::vector<int> identity(static_cast<std::size_t>(num_machines()));
  std::iota(identity.begin(), identity.end(), 0);
  set_machine_of_rank(std::move(identity));
}

void Topology::set_machine_of_rank(std::vector<int> m) {
  require(static_cast<int>(m.size()) == num_machines(),
          "topology: rank mapping has " + std::to_string(m.size()) + " entries, the tree has " +
              std::to_string(num_machines()) + " machines");
  std::vector<int> inverse(m.size(), -1);
  for (std::size_t r = 0; r < m.size(); ++r) {
    require(m[r] >= 0 && m[r] < num_machines() && inverse[m[r]] < 0,
            "topology: rank mapping is not a permutation of the machines (rank " +
                std::to_string(r) + " -> machine " + std::to_string(m[r]) + ")");
    inverse[m[r]] = static_cast<int>(r);
  }
  machine_of_rank_ = std::move(m);
  rank_of_machine_ = std::move(inverse);
}

Topology Topology::single_switch(int machines) { return regular({machines}); }

Topology Topology::regular(const std::vector<int>& fanout) {
  require(!fanout.empty(), "Topology::regular: needs at least one fan-out");
  std::vector<std::string> names = {"s0"};
  std::vector<bool> is_machine = {false};
  std::vector<std::pair<int, int>> links;
  std::vector<int> level = {0};  // the nodes of the current level
  int switches = 1, machines = 0;
  for (std::size_t d = 0; d < fanout.size(); ++d) {
    require(fanout[d] >= 1, "Topology::regular: fan-out " + std::to_string(fanout[d]) + " at level " +
                                std::to_string(d + 1) + " (must be at least 1)");
    require(level.size() * static_cast<std::size_t>(fanout[d]) + names.size() <= kMaxNodes,
            "Topology::regular: more than " + std::to_string(kMaxNodes) + " nodes");
    const bool leaves = d + 1 == fanout.size();
    std::vector<int> next;
    for (int parent : level)
      for (int k = 0; k < fanout[d]; ++k) {
        next.push_back(static_cast<int>(names.size()));
        names.push_back(leaves ? "n" + std::to_string(machines++) : "s" + std::to_string(switches++));
        is_machine.push_back(leaves);
        links.emplace_back(parent, next.back());
      }
    level = std::move(next);
  }
  require(machines >= 3, "Topology::regular: " + std::to_string(machines) + " machines (at least 3 are needed)");
  return from_links(std::move(names), std::move(is_machine), links);
}

Topology Topology::random(int machines, int switches, std::uint64_t seed, double chain_bias) {
  require(switches >= 1, "Topology::random: needs at least one switch");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<std::string> names;
  std::vector<bool> is_machine;
  std::vector<std::pair<int, int>> links;
  for (int s = 0; s < switches; ++s) {
    names.push_back("s" + std::to_string(s));
    is_machine.push_back(false);
    if (s > 0) {
      // With probability chain_bias continue the chain (deep trees), else hang off any
      // earlier switch (bushy trees).
      const int to = coin(rng) < chain_bias ? s - 1
                                            : static_cast<int>(rng() % static_cast<std::uint64_t>(s));
      links.emplace_back(to, s);
    }
  }
  for (int m = 0; m < machines; ++m) {
    names.push_back("n" + std::to_string(m));
    is_machine.push_back(true);
    links.emplace_back(static_cast<int>(rng() % static_cast<std::uint64_t>(switches)), switches + m);
  }
  return from_links(std::move(names), std::move(is_machine), links);
}

std::string Topology::to_text() const {
  std::ostringstream os;
  os << "switch";
  for (int v = 0; v < num_nodes(); ++v)
    if (!is_machine_[v]) os << " " << names_[v];
  os << "\nmachine";
  for (int m : machines_) os << " " << names_[m];
  os << "\n";
  // Switches must be declared before machines in the output, so node ids may differ; the
  // machine order (and therefore the default rank order) is kept.
  for (int v = 1; v < num_nodes(); ++v) os << "link " << names_[parent_[v]] << " " << names_[v] << "\n";
  bool identity = true;
  for (int r = 0; r < num_machines(); ++r) identity &= machine_of_rank_[r] == r;
  if (!identity) {
    os << "ranks";
    for (int m : machine_of_rank_) os << " " << names_[machines_[m]];
    os << "\n";
  }
  return os.str();
}

int Topology::edge_id(int from, int to) const {
  if (parent_.at(from) == to) return 2 * (from - 1);
  if (parent_.at(to) == from) return 2 * (to - 1) + 1;
  throw Error("topology: no link between '" + names_.at(from) + "' and '" + names_.at(to) + "'");
}

void Topology::path_edge_ids(int u, int v, std::vector<int>& out) const {
  // Up from u, down to v: climb the deeper end until both meet at their common ancestor.
  // First count the up and down edges, then write the up edges from the front and the
  // down edges (found from v upwards) from the back: no allocation besides `out`.
  std::size_t ups = 0, downs = 0;
  for (int a = u, b = v; a != b;) {
    if (depth_[a] >= depth_[b])
      ++ups, a = parent_[a];
    else
      ++downs, b = parent_[b];
  }
  const std::size_t base = out.size();
  out.resize(base + ups + downs);
  std::size_t up_at = base, down_at = base + ups + downs;
  while (u != v) {
    if (depth_[u] >= depth_[v]) {
      out[up_at++] = 2 * (u - 1);  // u -> parent(u)
      u = parent_[u];
    } else {
      out[--down_at] = 2 * (v - 1) + 1;  // parent(v) -> v
      v = parent_[v];
    }
  }
}

std::vector<Topology::Edge> Topology::path(int u, int v) const {
  require(u >= 0 && u < num_nodes() && v >= 0 && v < num_nodes(), "topology: path: node out of range");
  std::vector<int> ids;
  path_edge_ids(u, v, ids);
  std::vector<Edge> out;
  for (int e : ids) {  // e names the link above node e / 2 + 1, even ids upwards
    const int child = e / 2 + 1;
    out.push_back(e % 2 == 0 ? Edge{child, parent_[child]} : Edge{parent_[child], child});
  }
  return out;
}

std::vector<Topology::Link> Topology::links() const {
  std::vector<Link> out;
  for (int v = 1; v < num_nodes(); ++v)
    out.push_back({parent_[v], v, num_machines() - below_[v], below_[v]});
  return out;
}

std::int64_t Topology::aapc_load() const {
  std::int64_t best = 0;
  for (const auto& l : links()) best = std::max(best, l.load());
  return best;
}

std::vector<Topology::Link> Topology::bottleneck_links() const {
  const std::int64_t load = aapc_load();
  std::vector<Link> out;
  for (const auto& l : links())
    if (l.load() == load) out.push_back(l);
  return out;
}

double Topology::peak_aggregate_throughput(double bandwidth) const {
  const double m = num_machines();
  return m * (m - 1) * bandwidth / static_cast<double>(aapc_load());
}

void attach_topology(const Comm& comm, Topology topology) {
  require(topology.num_machines() == comm.size(),
          "attach_topology: rank " + std::to_string(comm.rank()) + ": the topology has " +
              std::to_string(topology.num_machines()) + " machines but the communicator has " +
              std::to_string(comm.size()) + " ranks (one rank per machine)");
  comm.cache().set_topology(std::make_shared<const Topology>(std::move(topology)));
}

std::shared_ptr<const Topology> attached_topology(const Comm& comm) {
  return comm.cache().topology;
}

}  // namespace libcomm
