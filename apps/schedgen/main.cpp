// schedgen: the automatic routine generator of paper 003 (section 5).
//
// Reads a switch tree, schedules AAPC in contention-free phases (section 4), plans the
// pairwise synchronisations (section 5), prints the phase table (like Table 4), the
// bottleneck links and the peak aggregate throughput bound, and with --emit-cpp writes a
// self-contained C++ routine with MPI_Alltoall's signature built on MPI point-to-point
// calls, the phases and synchronisations unrolled into tables.
//
// A serial tool: it does not initialise MPI.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <thread>

#include "apps/common.hpp"
#include "libcomm/error.hpp"
#include "libcomm/topology.hpp"
#include "libcomm/tree_schedule.hpp"

namespace {

using libcomm::Topology;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// --time N: wall-clock and CPU seconds of `f`, medians of N runs. CPU time is shown beside
// wall time because a shared, oversubscribed machine stretches wall time by waiting.
struct Timing {
  double wall = 0, cpu = 0;
};
template <class F>
Timing median_time(int runs, F&& f) {
  std::vector<double> wall, cpu;
  for (int r = 0; r < runs; ++r) {
    const auto w0 = Clock::now();
    const std::clock_t c0 = std::clock();
    f();
    cpu.push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    wall.push_back(seconds_since(w0));
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

// "t1,0" style name of machine m (the paper's t_{i,x}) and its own name.
std::string tname(const libcomm::TreeAapcSchedule& s, int m) {
  return "t" + std::to_string(s.subtree_of[m]) + "," + std::to_string(s.index_in_subtree[m]);
}

void print_summary(std::ostream& os, const Topology& t, const libcomm::TreeAapcSchedule& s,
                   double bandwidth_mbps) {
  int switches = t.num_nodes() - t.num_machines();
  os << "topology: " << t.num_machines() << " machines, " << switches << " switches\n";
  os << "root (4.1): " << t.name(s.root) << ", " << s.subtrees.size() << " subtrees:";
  for (std::size_t i = 0; i < s.subtrees.size() && i < 16; ++i)
    os << " t" << i << "=" << t.name(s.subtree_node[i]) << "(" << s.subtrees[i].size() << ")";
  if (s.subtrees.size() > 16) os << " ...";
  os << "\nphases: " << s.num_phases << " = |M0| x (|M| - |M0|) = " << s.subtrees[0].size() << " x "
     << t.num_machines() - static_cast<int>(s.subtrees[0].size()) << " = AAPC load " << t.aapc_load() << "\n";
  const auto bl = t.bottleneck_links();
  os << "bottleneck links (" << bl.size() << ", load " << t.aapc_load() << " each way):";
  for (std::size_t k = 0; k < bl.size() && k < 12; ++k)
    os << " " << t.name(bl[k].a) << "--" << t.name(bl[k].b) << " (" << bl[k].machines_a << "|"
       << bl[k].machines_b << ")";
  if (bl.size() > 12) os << " ...";
  os << "\npeak aggregate throughput bound: |M|(|M|-1)B/(|Mu||Mv|) = " << t.num_machines() << "x"
     << t.num_machines() - 1 << "x" << bandwidth_mbps << "/" << t.aapc_load() << " = " << std::fixed
     << std::setprecision(1) << t.peak_aggregate_throughput(bandwidth_mbps) << " Mbit/s (B = "
     << bandwidth_mbps << " Mbit/s)\n";
  os.unsetf(std::ios::floatfield);
}

// Table 4 layout: per phase, the global messages grouped by sending subtree, then the local
// messages of every subtree. With more than 16 subtrees (a column each) a phase is one line
// of its messages instead. Only the phases shown are collected (one pass over phase_of),
// not the whole schedule.
void print_table(std::ostream& os, const Topology& t, const libcomm::TreeAapcSchedule& s,
                 std::int64_t max_phases, bool machine_names) {
  const std::int64_t shown = std::min(max_phases, s.num_phases);
  std::vector<std::vector<std::pair<int, int>>> phase(static_cast<std::size_t>(shown));
  const int M = s.num_machines;
  for (int a = 0; a < M; ++a)
    for (int b = 0; b < M; ++b) {
      const std::int32_t p = s.phase(a, b);
      if (p >= 0 && p < shown) phase[static_cast<std::size_t>(p)].emplace_back(a, b);
    }
  const std::size_t k = s.subtrees.size();
  const bool columns = k <= 16;
  auto label = [&](int m) { return machine_names ? t.name(t.machine_node(m)) : tname(s, m); };
  os << (columns ? "\nphase table (global messages by sending subtree | local messages by subtree):\n"
                 : "\nphase table (" + std::to_string(k) + " subtrees: the messages of each phase):\n");
  for (std::int64_t p = 0; p < shown; ++p) {
    os << std::setw(6) << p << " ";
    if (!columns) {
      for (const auto& [a, b] : phase[static_cast<std::size_t>(p)]) os << " " << label(a) << "->" << label(b);
      os << "\n";
      continue;
    }
    std::vector<std::string> global(k), local(k);
    for (const auto& [a, b] : phase[static_cast<std::size_t>(p)]) {
      auto& cell = s.is_global(a, b) ? global[s.subtree_of[a]] : local[s.subtree_of[a]];
      cell += (cell.empty() ? "" : " ") + label(a) + "->" + label(b);
    }
    for (const auto& g : global) os << " " << std::left << std::setw(14) << (g.empty() ? "." : g);
    os << " |";
    for (const auto& l : local) os << " " << std::left << std::setw(14) << (l.empty() ? "." : l);
    os << std::right << "\n";
  }
  if (s.num_phases > max_phases)
    os << "... " << s.num_phases - max_phases << " more phases (--table-phases to show more)\n";
}

// Text output of large integer tables without iostream formatting per number (at 4096
// machines the tables hold about 70 M numbers).
class TableWriter {
 public:
  explicit TableWriter(std::ofstream& out) : out_(out) { buffer_.reserve(kFlush + 64); }
  ~TableWriter() { flush(); }
  TableWriter& operator<<(std::string_view text) {
    buffer_.append(text);
    if (buffer_.size() >= kFlush) flush();
    return *this;
  }
  // "const int NAME[N] = { ... };" with 24 numbers a line.
  template <class Vec>
  void table(const char* name, const Vec& v) {
    *this << "const int " << name << "[" << std::to_string(v.size()) << "] = {";
    char number[16];
    for (std::size_t i = 0; i < v.size(); ++i) {
      *this << (i % 24 == 0 ? "\n    " : " ");
      const auto end = std::to_chars(number, number + sizeof number, v[i]).ptr;
      buffer_.append(number, end);
      buffer_.push_back(',');
    }
    *this << "\n};\n";
  }
  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  static constexpr std::size_t kFlush = std::size_t{1} << 20;
  std::ofstream& out_;
  std::string buffer_;
};

// Lists of values grouped by a key in 0 .. keys - 1 (CSR): the values of key i are
// list[start[i] .. start[i + 1]), in item order. One spare entry (-1, never read) keeps
// list non-empty for the generated C++.
struct Csr {
  std::vector<std::int64_t> start;
  std::vector<int> list;
};
template <class ValueOf>
Csr group_by_key(std::size_t keys, const std::vector<std::size_t>& key_of_item, ValueOf value_of) {
  Csr c;
  c.start.assign(keys + 1, 0);
  for (std::size_t key : key_of_item) ++c.start[key + 1];
  for (std::size_t i = 0; i < keys; ++i) c.start[i + 1] += c.start[i];
  c.list.assign(key_of_item.size() + 1, -1);
  std::vector<std::int64_t> fill(c.start.begin(), c.start.end() - 1);
  for (std::size_t item = 0; item < key_of_item.size(); ++item)
    c.list[static_cast<std::size_t>(fill[key_of_item[item]]++)] = value_of(item);
  return c;
}

// The generated routine after its tables: the tags, then (after the function's name) its
// body, which walks the tables of its rank.
constexpr const char* kRoutineTags = R"(
constexpr int kDataTag = 7501;
constexpr int kSyncTag = 7502;

}  // namespace

int )";
constexpr const char* kRoutineBody = R"((const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
    int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  int size = 0, rank = 0, rc = MPI_SUCCESS;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (size != kRanks) return MPI_ERR_SIZE;
  MPI_Aint lb = 0, sext = 0, rext = 0;
  MPI_Type_get_extent(sendtype, &lb, &sext);
  MPI_Type_get_extent(recvtype, &lb, &rext);
  const char* s = static_cast<const char*>(sendbuf);
  char* r = static_cast<char*>(recvbuf);
  const MPI_Aint sblock = sext * sendcount, rblock = rext * recvcount;
  const int first = kSendStart[rank], last = kSendStart[rank + 1];
  std::vector<MPI_Request> reqs;
  reqs.reserve(static_cast<std::size_t>(kRanks) + static_cast<std::size_t>(kNotifyStart[last] - kNotifyStart[first]));
  // Every receive first (one message from every other rank), so data never arrives unexpected.
  for (int from = 0; from < kRanks; ++from) {
    if (from == rank) continue;
    reqs.emplace_back();
    rc = MPI_Irecv(r + from * rblock, recvcount, recvtype, from, kDataTag, comm, &reqs.back());
    if (rc != MPI_SUCCESS) return rc;
  }
  rc = MPI_Sendrecv(s + rank * sblock, sendcount, sendtype, rank, kDataTag, r + rank * rblock,
                    recvcount, recvtype, rank, kDataTag, comm, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return rc;
  for (int i = first; i < last; ++i) {
    for (int k = kWaitStart[i]; k < kWaitStart[i + 1]; ++k) {
      rc = MPI_Recv(nullptr, 0, MPI_BYTE, kWait[k], kSyncTag, comm, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) return rc;
    }
    // Synchronous: MPI_Send may return once the message is buffered, and the notifications
    // below would let the next sender onto a link this message still occupies.
    rc = MPI_Ssend(s + kSendTo[i] * sblock, sendcount, sendtype, kSendTo[i], kDataTag, comm);
    if (rc != MPI_SUCCESS) return rc;
    for (int k = kNotifyStart[i]; k < kNotifyStart[i + 1]; ++k) {
      reqs.emplace_back();
      rc = MPI_Isend(nullptr, 0, MPI_BYTE, kNotify[k], kSyncTag, comm, &reqs.back());
      if (rc != MPI_SUCCESS) return rc;
    }
  }
  return reqs.empty() ? MPI_SUCCESS
                      : MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
}
)";

// Writes the routine: MPI_Alltoall's signature, the schedule of this topology in tables.
// Per rank its sends in phase order, and per send the ranks whose synchronisation it waits
// for before the send and the ranks it notifies after it (CSR tables). Receives need no
// table: every other rank sends exactly one message. The tables grow with the messages
// (|M| (|M| - 1) sends), not with ranks x phases, which is 17 G entries for a 4096-machine
// tree with 4.2 M phases.
void emit_cpp(const std::string& path, const std::string& function, const std::string& source,
              const Topology& t, const libcomm::TreeAapcSchedule& s, const libcomm::SyncPlan& sync) {
  const int P = t.num_machines();
  const std::size_t M = static_cast<std::size_t>(P);
  // Every rank's sends in phase order: (phase, destination rank) from the phase-major list.
  std::vector<std::int64_t> send_start(M + 1, 0);
  for (std::size_t r = 0; r < M; ++r) send_start[r + 1] = send_start[r] + (P - 1);
  std::vector<std::int32_t> send_phase(static_cast<std::size_t>(send_start[M]));
  std::vector<int> send_to(send_phase.size());
  {
    const auto ph = s.phases();
    std::vector<std::int64_t> fill(send_start.begin(), send_start.end() - 1);
    for (std::int64_t p = 0; p < s.num_phases; ++p)
      for (auto k = ph.offset[static_cast<std::size_t>(p)]; k < ph.offset[static_cast<std::size_t>(p) + 1]; ++k) {
        const auto [a, b] = ph.messages[static_cast<std::size_t>(k)];
        const auto r = static_cast<std::size_t>(t.rank_of_machine(a));
        send_phase[static_cast<std::size_t>(fill[r])] = static_cast<std::int32_t>(p);
        send_to[static_cast<std::size_t>(fill[r]++)] = t.rank_of_machine(b);
      }
  }
  // The send of rank r in phase p (binary search in the rank's phases).
  auto send_index = [&](int r, std::int32_t p) {
    const auto begin = send_phase.begin() + send_start[static_cast<std::size_t>(r)];
    const auto end = send_phase.begin() + send_start[static_cast<std::size_t>(r) + 1];
    const auto it = std::lower_bound(begin, end, p);
    libcomm::require(it != end && *it == p, "--emit-cpp: internal error: rank " + std::to_string(r) +
                                                " sends nothing in phase " + std::to_string(p));
    return static_cast<std::size_t>(it - send_phase.begin());
  };
  const std::size_t sends = send_to.size();
  std::vector<std::size_t> waiter(sync.syncs.size()), notifier(sync.syncs.size());
  for (std::size_t k = 0; k < sync.syncs.size(); ++k) {
    waiter[k] = send_index(sync.syncs[k].to, sync.syncs[k].before);
    notifier[k] = send_index(sync.syncs[k].from, sync.syncs[k].after);
  }
  const Csr wait = group_by_key(sends, waiter, [&](std::size_t k) { return sync.syncs[k].from; });
  const Csr notify = group_by_key(sends, notifier, [&](std::size_t k) { return sync.syncs[k].to; });
  libcomm::require(sends < static_cast<std::size_t>(std::numeric_limits<int>::max()) &&
                       sync.syncs.size() < static_cast<std::size_t>(std::numeric_limits<int>::max()),
                   "--emit-cpp: the tables do not fit int indices");

  std::ofstream file(path, std::ios::binary);
  libcomm::require(static_cast<bool>(file), "--emit-cpp: cannot write '" + path + "'");
  {
    TableWriter out(file);
    out << "// Generated by schedgen (libcomm, paper 003 section 5) from " << source << ".\n"
        << "// AAPC on " << std::to_string(P) << " machines in " << std::to_string(s.num_phases)
        << " contention-free phases (load of the\n"
        << "// bottleneck links), " << std::to_string(sync.syncs.size()) << " pairwise synchronisation messages.\n"
        << "// Same arguments as MPI_Alltoall; comm must have exactly " << std::to_string(P) << " ranks, rank r on\n"
        << "// machine " << (P > 0 ? t.name(t.machine_node(t.machine_of_rank()[0])) : "")
        << " ... as listed in the topology.\n"
        << "// Messages use tags 7501 (data) and 7502 (synchronisation) on comm.\n"
        << "#include <mpi.h>\n\n#include <vector>\n\nnamespace {\n\n"
        << "constexpr int kRanks = " << std::to_string(P) << ";\n"
        << "// Rank r sends to kSendTo[kSendStart[r]], kSendTo[kSendStart[r] + 1], ... in phase order.\n";
    out.table("kSendStart", send_start);
    out.table("kSendTo", send_to);
    out << "// Before send i (an index into kSendTo) the rank waits for a synchronisation from each\n"
        << "// of kWait[kWaitStart[i] .. kWaitStart[i + 1]); after it, it notifies each of\n"
        << "// kNotify[kNotifyStart[i] .. kNotifyStart[i + 1]).\n";
    out.table("kWaitStart", wait.start);
    out.table("kWait", wait.list);
    out.table("kNotifyStart", notify.start);
    out.table("kNotify", notify.list);
    out << kRoutineTags << function << kRoutineBody;
  }
  libcomm::require(static_cast<bool>(file), "--emit-cpp: error writing '" + path + "'");
}

struct Settings {
  std::string topo_path, emit_path, json_path, function = "schedgen_alltoall", write_topo;
  int random_machines = 0, random_switches = 0;
  std::vector<int> regular;
  int threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 64u));
  int search_budget = libcomm::SyncPlanOptions{}.search_budget;
  std::uint64_t seed = 1;
  double chain = 0.5, bandwidth = 100.0;
  std::int64_t table_phases = 64;
  bool no_sync = false, machine_names = false;
  int time_runs = 0;
};

const CLI::Validator kIdentifier(
    [](std::string& name) -> std::string {
      const bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
                      std::all_of(name.begin(), name.end(),
                                  [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
      return ok ? "" : "'" + name + "' is not a C++ identifier";
    },
    "IDENTIFIER");

void add_tree_options(CLI::App& app, Settings& s) {
  app.add_option("topology", s.topo_path, "topology file (inputs/topologies/*.topo)");
  app.add_option("--random", s.random_machines, "instead of a file: a random tree of this many machines")
      ->check(CLI::Range(3, 1 << 16));
  app.add_option("--switches", s.random_switches, "--random: number of switches (default machines/8 + 1)")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--seed", s.seed, "--random: seed")->check(apps::seed_number())->capture_default_str();
  app.add_option("--chain", s.chain, "--random: 0 = bushy switch tree, 1 = chain of switches")
      ->check(apps::number_in(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--regular", s.regular,
                 "instead of a file: a regular tree, fan-outs from the root down, the last level machines (64,64: 64 "
                 "switches of 64 machines under one root)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--write-topology", s.write_topo, "write the topology used (e.g. a --random one) to FILE")
      ->check(apps::kWritableFile);
}

Settings parse(int argc, char** argv) {
  CLI::App app{"schedgen: contention-free all-to-all schedule for an Ethernet switch tree (paper 003).\n"
               "Prints the phases (like Table 4), the bottleneck links and the peak aggregate throughput\n"
               "bound; --emit-cpp writes an MPI_Alltoall replacement for the topology."};
  Settings s;
  add_tree_options(app, s);
  app.add_option("--bandwidth", s.bandwidth, "link bandwidth B in Mbit/s for the bound")
      ->check(apps::positive_number(1e12))
      ->capture_default_str();
  app.add_option("--table-phases", s.table_phases, "print at most this many phases of the table (0: none)")
      ->check(apps::number_in(0, 1e9))
      ->capture_default_str();
  app.add_flag("--names", s.machine_names, "table: machine names instead of the paper's t_{i,x}");
  app.add_flag("--no-sync", s.no_sync, "skip the synchronisation plan (not with --emit-cpp)");
  app.add_option("--emit-cpp", s.emit_path, "write the generated C++ routine to FILE")->check(apps::kWritableFile);
  app.add_option("--function", s.function, "--emit-cpp: name of the generated function")
      ->check(kIdentifier)
      ->capture_default_str();
  app.add_option("--json", s.json_path, "write the results as JSON to FILE")->check(apps::kWritableFile);
  app.add_option("--threads", s.threads,
                 "threads for the synchronisation plan (default: the cores of this machine); the plan is the same "
                 "for any number")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--search-budget", s.search_budget,
                 "steps a search for a redundant synchronisation may take before the question goes to the sweep "
                 "that answers the rest together (0: all of them); the plan is the same for any value")
      ->check(apps::number_in(0, 2147483647))
      ->capture_default_str();
  app.add_option("--time", s.time_runs,
                 "also run the scheduler and the synchronisation plan N more times and print the median wall-clock "
                 "and CPU seconds of each")
      ->check(CLI::Range(1, 1000));
  apps::parse_command_line(app, argc, argv);
  libcomm::require((s.topo_path.empty() ? 0 : 1) + (s.random_machines ? 1 : 0) + (s.regular.empty() ? 0 : 1) == 1,
                   "give one of: a topology file, --random N, --regular F1,F2,...");
  libcomm::require(!(s.no_sync && !s.emit_path.empty()), "--no-sync: --emit-cpp needs the synchronisation plan");
  return s;
}

// The tree of the options, where it came from (for the printouts) and the time to make it.
struct Tree {
  Topology t;
  std::string source;
  double seconds = 0;
};

Tree make_tree(const Settings& s) {
  const auto t0 = Clock::now();
  std::string shape;
  for (int f : s.regular) shape += (shape.empty() ? "" : "x") + std::to_string(f);
  Tree tree;
  tree.t = s.random_machines ? Topology::random(s.random_machines,
                                                s.random_switches ? s.random_switches : s.random_machines / 8 + 1,
                                                s.seed, s.chain)
           : !s.regular.empty() ? Topology::regular(s.regular)
                                : Topology::load(s.topo_path);
  tree.seconds = seconds_since(t0);
  tree.source = s.random_machines ? "random tree (" + std::to_string(s.random_machines) + " machines, seed " +
                                        std::to_string(s.seed) + ")"
                : !s.regular.empty() ? "regular tree " + shape
                                     : s.topo_path;
  if (!s.write_topo.empty()) {
    std::ofstream out(s.write_topo);
    out << "# " << tree.source << "\n" << tree.t.to_text();
    libcomm::require(static_cast<bool>(out), "--write-topology: cannot write '" + s.write_topo + "'");
  }
  return tree;
}

// The synchronisation plan and the check that no two messages of a phase share a
// directed edge. The plan's sweep walks every edge of every path in phase order and refuses
// a phase that uses an edge twice (unit.SyncPlan.RefusesExactlyWhatVerifyRejects), so with
// the plan that sweep is the check. verify_contention_free walks the paths once more; it
// runs with --no-sync, or to name the problem when the plan refuses.
struct Checked {
  libcomm::SyncPlanOptions options;
  libcomm::SyncPlan sync;
  libcomm::VerifyResult contention;
  bool refused = false, planned = false;
  double verify_s = 0, sync_s = 0, emit_s = 0;
};

Checked plan_and_check(const Settings& s, const Tree& tree, const libcomm::TreeAapcSchedule& schedule) {
  Checked c;
  c.options.threads = s.threads;
  // The synchronisations themselves only for the routine; the counts need none of them
  // (250-300 MB at 4096 machines).
  c.options.keep_syncs = !s.emit_path.empty();
  c.options.search_budget = s.search_budget;
  const auto verify = [&] {
    const auto start = Clock::now();
    c.contention = libcomm::verify_contention_free(schedule, tree.t);
    c.verify_s = seconds_since(start);
  };
  if (s.no_sync) {
    verify();
    return c;
  }
  const auto t0 = Clock::now();
  try {
    c.sync = libcomm::plan_synchronisation(schedule, tree.t, c.options);
    c.sync_s = seconds_since(t0);
    c.planned = true;
  } catch (const libcomm::Error&) {
    c.sync_s = seconds_since(t0);
    verify();
    if (c.contention.ok) throw;  // not a contention problem: report the plan's error
    c.refused = true;
  }
  return c;
}

void print_sync(const Settings& s, const Tree& tree, const libcomm::TreeAapcSchedule& schedule, Checked& c) {
  std::cout << "\nsynchronisation (section 5): " << c.sync.contending_pairs
            << " contending message pairs in different phases; " << c.sync.consecutive_pairs << " consecutive on an "
            << "edge, " << c.sync.same_sender_pairs << " of them same sender, " << c.sync.redundant
            << " redundant: " << c.sync.synchronisations << " synchronisation messages\n";
  if (s.emit_path.empty()) return;
  const auto t0 = Clock::now();
  emit_cpp(s.emit_path, s.function, tree.source, tree.t, schedule, c.sync);
  c.emit_s = seconds_since(t0);
  std::cout << "wrote " << s.emit_path << " (function " << s.function << ")\n";
}

void print_times(const Settings& s, const Tree& tree, double schedule_s, const Checked& c) {
  std::cout << std::fixed << std::setprecision(3) << "\ntime: read " << tree.seconds << " s, schedule " << schedule_s
            << " s, ";
  if (c.planned) std::cout << "verify in the synchronisation plan's sweep";
  else std::cout << "verify " << c.verify_s << " s";
  if (!s.no_sync)
    std::cout << ", synchronisation plan " << c.sync_s << " s (" << s.threads
              << (s.threads == 1 ? " thread)" : " threads)");
  if (!s.emit_path.empty()) std::cout << ", emit " << c.emit_s << " s";
  std::cout << "\n";
  if (c.planned && !c.sync.seconds.empty()) {
    std::cout << "synchronisation plan by stage:";
    for (const auto& [stage, secs] : c.sync.seconds) std::cout << " " << stage << " " << secs << " s;";
    std::cout << "\n";
  }
}

// --time N: the scheduler and the plan again, medians of wall-clock and CPU seconds.
nlohmann::json time_again(const Settings& s, const Tree& tree, const libcomm::TreeAapcSchedule& schedule,
                          const Checked& c) {
  const Timing sched = median_time(s.time_runs, [&] { (void)libcomm::schedule_tree_aapc(tree.t); });
  Timing plan;
  if (c.planned) plan = median_time(s.time_runs, [&] { (void)libcomm::plan_synchronisation(schedule, tree.t, c.options); });
  std::cout << "timing (median of " << s.time_runs << " runs, wall / CPU seconds): schedule " << sched.wall << " / "
            << sched.cpu;
  if (!s.no_sync)
    std::cout << ", synchronisation plan " << plan.wall << " / " << plan.cpu << ", together "
              << sched.wall + plan.wall << " / " << sched.cpu + plan.cpu;
  std::cout << "\n";
  return {{"runs", s.time_runs}, {"schedule_wall", sched.wall}, {"schedule_cpu", sched.cpu},
          {"sync_wall", plan.wall}, {"sync_cpu", plan.cpu}};
}

nlohmann::json record(const Settings& s, const Tree& tree, const libcomm::TreeAapcSchedule& schedule,
                      const Checked& c, double schedule_s) {
  const Topology& t = tree.t;
  nlohmann::json j = {{"program", "schedgen"}, {"source", tree.source}, {"machines", t.num_machines()},
                      {"switches", t.num_nodes() - t.num_machines()}, {"root", t.name(schedule.root)},
                      {"subtrees", schedule.subtrees.size()}, {"phases", schedule.num_phases},
                      {"aapc_load", t.aapc_load()}, {"bottleneck_links", t.bottleneck_links().size()},
                      {"bound_mbps", t.peak_aggregate_throughput(s.bandwidth)},
                      {"validation", c.contention.ok ? "PASS" : "FAIL"}, {"results", nlohmann::json::array()}};
  if (!s.no_sync) {
    j["contending_pairs"] = c.sync.contending_pairs;
    j["sync_messages"] = c.sync.synchronisations;
    j["threads"] = s.threads;
    j["redundant_syncs"] = c.sync.redundant;
  }
  j["time_s"] = {{"read", tree.seconds}, {"schedule", schedule_s}, {"verify", c.verify_s}, {"sync", c.sync_s},
                 {"emit", c.emit_s}};
  return j;
}

int run(int argc, char** argv) {
  const Settings s = parse(argc, argv);
  const Tree tree = make_tree(s);
  const auto t0 = Clock::now();
  const auto schedule = libcomm::schedule_tree_aapc(tree.t);
  const double schedule_s = seconds_since(t0);
  print_summary(std::cout, tree.t, schedule, s.bandwidth);
  if (s.table_phases > 0) print_table(std::cout, tree.t, schedule, s.table_phases, s.machine_names);
  Checked c = plan_and_check(s, tree, schedule);
  if (c.planned) print_sync(s, tree, schedule, c);
  print_times(s, tree, schedule_s, c);
  nlohmann::json j = record(s, tree, schedule, c, schedule_s);
  if (s.time_runs > 0) j["median_time_s"] = time_again(s, tree, schedule, c);
  std::cout << (c.contention.ok ? "validation: PASS (every message once, " + std::to_string(schedule.num_phases) +
                                      " phases = bottleneck load, no two messages of a phase share a directed edge)"
                                : "validation: FAIL (" + c.contention.summary() + ")")
            << "\n";
  if (!s.json_path.empty()) apps::write_json(s.json_path, j);
  return c.contention.ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return apps::serial_main(argc, argv, "schedgen", run); }
