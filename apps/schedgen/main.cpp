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
#include <chrono>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

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
// messages of every subtree.
void print_table(std::ostream& os, const Topology& t, const libcomm::TreeAapcSchedule& s,
                 std::int64_t max_phases, bool machine_names) {
  const auto ph = s.phases();
  const std::size_t k = s.subtrees.size();
  auto label = [&](int m) { return machine_names ? t.name(t.machine_node(m)) : tname(s, m); };
  os << "\nphase table (global messages by sending subtree | local messages by subtree):\n";
  for (std::int64_t p = 0; p < s.num_phases && p < max_phases; ++p) {
    std::vector<std::string> global(k), local(k);
    for (auto i = ph.offset[p]; i < ph.offset[p + 1]; ++i) {
      const auto [a, b] = ph.messages[i];
      auto& cell = s.is_global(a, b) ? global[s.subtree_of[a]] : local[s.subtree_of[a]];
      cell += (cell.empty() ? "" : " ") + label(a) + "->" + label(b);
    }
    os << std::setw(6) << p << " ";
    for (const auto& g : global) os << " " << std::left << std::setw(14) << (g.empty() ? "." : g);
    os << " |";
    for (const auto& l : local) os << " " << std::left << std::setw(14) << (l.empty() ? "." : l);
    os << std::right << "\n";
  }
  if (s.num_phases > max_phases)
    os << "... " << s.num_phases - max_phases << " more phases (--table-phases to show more)\n";
}

// Writes the routine: MPI_Alltoall's signature, the schedule of this topology in tables.
void emit_cpp(const std::string& path, const std::string& function, const std::string& source,
              const Topology& t, const libcomm::Schedule& s, const libcomm::SyncPlan& sync) {
  const int P = s.nprocs;
  const auto R = s.rounds.size();
  std::vector<int> send_to(static_cast<std::size_t>(P) * R, -1), recv_from(static_cast<std::size_t>(P) * R, -1);
  for (std::size_t r = 0; r < R; ++r)
    for (const auto& tr : s.rounds[r].transfers)
      if (tr.src != tr.dst) {
        send_to[tr.src * R + r] = tr.dst;
        recv_from[tr.dst * R + r] = tr.src;
      }
  std::vector<std::vector<int>> wait(static_cast<std::size_t>(P) * R), notify(static_cast<std::size_t>(P) * R);
  for (const auto& y : sync.syncs) {
    wait[y.to * R + y.before].push_back(y.from);
    notify[y.from * R + y.after].push_back(y.to);
  }
  std::ofstream out(path);
  libcomm::require(static_cast<bool>(out), "--emit-cpp: cannot write '" + path + "'");
  auto table = [&](const char* name, const std::vector<int>& v) {
    out << "const int " << name << "[" << v.size() << "] = {";
    for (std::size_t i = 0; i < v.size(); ++i) out << (i % 24 == 0 ? "\n    " : " ") << v[i] << ",";
    out << "\n};\n";
  };
  auto csr = [&](const char* start_name, const char* list_name, const std::vector<std::vector<int>>& lists) {
    std::vector<int> start = {0}, flat;
    for (const auto& l : lists) {
      flat.insert(flat.end(), l.begin(), l.end());
      start.push_back(static_cast<int>(flat.size()));
    }
    flat.push_back(-1);  // never read; keeps the array non-empty
    table(start_name, start);
    table(list_name, flat);
  };
  out << "// Generated by schedgen (libcomm, paper 003 section 5) from " << source << ".\n"
      << "// AAPC on " << t.num_machines() << " machines in " << R << " contention-free phases (load of the\n"
      << "// bottleneck links), " << sync.syncs.size() << " pairwise synchronisation messages.\n"
      << "// Same arguments as MPI_Alltoall; comm must have exactly " << P << " ranks, rank r on\n"
      << "// machine " << (P > 0 ? t.name(t.machine_node(t.machine_of_rank()[0])) : "") << " ... as listed in the topology.\n"
      << "// Messages use tags 7501 (data) and 7502 (synchronisation) on comm.\n"
      << "#include <mpi.h>\n\n#include <vector>\n\nnamespace {\n\n"
      << "constexpr int kRanks = " << P << ";\nconstexpr int kPhases = " << R << ";\n"
      << "// [rank * kPhases + phase]: whom the rank sends to / receives from in the phase (-1: nobody).\n";
  table("kSendTo", send_to);
  table("kRecvFrom", recv_from);
  out << "// Ranks whose synchronisation a rank waits for before its send of a phase, and ranks it\n"
      << "// notifies after it: entries [start[i], start[i + 1]) for i = rank * kPhases + phase.\n";
  csr("kWaitStart", "kWait", wait);
  csr("kNotifyStart", "kNotify", notify);
  out << R"(
constexpr int kDataTag = 7501;
constexpr int kSyncTag = 7502;

}  // namespace

int )" << function
      << R"((const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
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
  std::vector<MPI_Request> reqs;
  reqs.reserve(2 * kPhases);
  // Every receive first, so data never arrives unexpected.
  for (int p = 0; p < kPhases; ++p) {
    const int from = kRecvFrom[rank * kPhases + p];
    if (from < 0) continue;
    reqs.emplace_back();
    rc = MPI_Irecv(r + from * rblock, recvcount, recvtype, from, kDataTag, comm, &reqs.back());
    if (rc != MPI_SUCCESS) return rc;
  }
  rc = MPI_Sendrecv(s + rank * sblock, sendcount, sendtype, rank, kDataTag, r + rank * rblock,
                    recvcount, recvtype, rank, kDataTag, comm, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return rc;
  for (int p = 0; p < kPhases; ++p) {
    const int i = rank * kPhases + p, to = kSendTo[i];
    if (to < 0) continue;
    for (int k = kWaitStart[i]; k < kWaitStart[i + 1]; ++k) {
      rc = MPI_Recv(nullptr, 0, MPI_BYTE, kWait[k], kSyncTag, comm, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) return rc;
    }
    rc = MPI_Send(s + to * sblock, sendcount, sendtype, to, kDataTag, comm);
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
  libcomm::require(static_cast<bool>(out), "--emit-cpp: error writing '" + path + "'");
}

int run(int argc, char** argv) {
  CLI::App app{
      "schedgen: contention-free all-to-all schedule for an Ethernet switch tree (paper 003).\n"
      "Prints the phases (like Table 4), the bottleneck links and the peak aggregate throughput\n"
      "bound; --emit-cpp writes an MPI_Alltoall replacement for the topology."};
  std::string topo_path, emit_path, json_path, function = "schedgen_alltoall", write_topo;
  int random_machines = 0, random_switches = 0;
  std::uint64_t seed = 1;
  double chain = 0.5, bandwidth = 100.0;
  std::int64_t table_phases = 64;
  bool no_sync = false, machine_names = false;
  int time_runs = 0;
  app.add_option("topology", topo_path, "topology file (inputs/topologies/*.topo)");
  app.add_option("--random", random_machines, "instead of a file: a random tree of this many machines")
      ->check(CLI::Range(3, 1 << 16));
  app.add_option("--switches", random_switches, "--random: number of switches (default machines/8 + 1)")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--seed", seed, "--random: seed")->capture_default_str();
  app.add_option("--chain", chain, "--random: 0 = bushy switch tree, 1 = chain of switches")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--write-topology", write_topo, "write the topology used (e.g. a --random one) to FILE");
  app.add_option("--bandwidth", bandwidth, "link bandwidth B in Mbit/s for the bound")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--table-phases", table_phases, "print at most this many phases of the table (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--names", machine_names, "table: machine names instead of the paper's t_{i,x}");
  app.add_flag("--no-sync", no_sync, "skip the synchronisation plan (not with --emit-cpp)");
  app.add_option("--emit-cpp", emit_path, "write the generated C++ routine to FILE");
  app.add_option("--function", function, "--emit-cpp: name of the generated function")->capture_default_str();
  app.add_option("--json", json_path, "write the results as JSON to FILE");
  app.add_option("--time", time_runs,
                 "also run the scheduler and the synchronisation plan N more times and print the "
                 "median wall-clock and CPU seconds of each")
      ->check(CLI::Range(1, 1000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  libcomm::require(topo_path.empty() != (random_machines == 0),
                   "give either a topology file or --random N (not both, not neither)");
  libcomm::require(!(no_sync && !emit_path.empty()), "--no-sync: --emit-cpp needs the synchronisation plan");

  nlohmann::json j;
  j["program"] = "schedgen";
  auto t0 = Clock::now();
  const Topology t = random_machines
                         ? Topology::random(random_machines,
                                            random_switches ? random_switches : random_machines / 8 + 1,
                                            seed, chain)
                         : Topology::load(topo_path);
  const double t_read = seconds_since(t0);
  const std::string source = random_machines ? "random tree (" + std::to_string(random_machines) +
                                                   " machines, seed " + std::to_string(seed) + ")"
                                             : topo_path;
  if (!write_topo.empty()) {
    std::ofstream out(write_topo);
    out << "# " << source << "\n" << t.to_text();
    libcomm::require(static_cast<bool>(out), "--write-topology: cannot write '" + write_topo + "'");
  }
  t0 = Clock::now();
  const auto s = libcomm::schedule_tree_aapc(t);
  const double t_schedule = seconds_since(t0);
  print_summary(std::cout, t, s, bandwidth);
  if (table_phases > 0) print_table(std::cout, t, s, table_phases, machine_names);

  // Validation: no two messages of a phase share a directed edge. The synchronisation
  // plan's sweep walks every edge of every path in phase order and refuses a phase that
  // uses an edge twice (unit.SyncPlan.RefusesExactlyWhatVerifyRejects), so with the plan
  // that sweep is the check. verify_contention_free walks the paths once more; it runs
  // with --no-sync, or to name the problem when the plan refuses.
  libcomm::VerifyResult contention;
  double t_verify = 0, t_sync = 0, t_emit = 0;
  auto verify = [&] {
    const auto start = Clock::now();
    contention = libcomm::verify_contention_free(s, t);
    t_verify = seconds_since(start);
  };
  libcomm::SyncPlan sync;
  bool plan_refused = false;
  if (!no_sync) {
    t0 = Clock::now();
    try {
      sync = libcomm::plan_synchronisation(s, t);
      t_sync = seconds_since(t0);
    } catch (const libcomm::Error&) {
      t_sync = seconds_since(t0);
      verify();
      if (contention.ok) throw;  // not a contention problem: report the plan's error
      plan_refused = true;
    }
  } else {
    verify();
  }
  if (!no_sync && !plan_refused) {
    std::cout << "\nsynchronisation (section 5): " << sync.contending_pairs
              << " contending message pairs in different phases; " << sync.consecutive_pairs
              << " consecutive on an edge, " << sync.same_sender_pairs << " of them same sender, "
              << sync.redundant << " redundant: " << sync.syncs.size() << " synchronisation messages\n";
    if (!emit_path.empty()) {
      t0 = Clock::now();
      emit_cpp(emit_path, function, source, t, libcomm::tree_rank_schedule(s, t), sync);
      t_emit = seconds_since(t0);
      std::cout << "wrote " << emit_path << " (function " << function << ")\n";
    }
  }
  std::cout << std::fixed << std::setprecision(3) << "\ntime: read " << t_read << " s, schedule "
            << t_schedule << " s, ";
  if (no_sync || plan_refused)
    std::cout << "verify " << t_verify << " s";
  else
    std::cout << "verify in the synchronisation plan's sweep";
  if (!no_sync) std::cout << ", synchronisation plan " << t_sync << " s";
  if (!emit_path.empty()) std::cout << ", emit " << t_emit << " s";
  std::cout << "\n";
  if (time_runs > 0) {
    const Timing sched = median_time(time_runs, [&] { (void)libcomm::schedule_tree_aapc(t); });
    Timing plan;
    if (!no_sync && !plan_refused)
      plan = median_time(time_runs, [&] { (void)libcomm::plan_synchronisation(s, t); });
    std::cout << "timing (median of " << time_runs << " runs, wall / CPU seconds): schedule " << sched.wall
              << " / " << sched.cpu;
    if (!no_sync)
      std::cout << ", synchronisation plan " << plan.wall << " / " << plan.cpu << ", together "
                << sched.wall + plan.wall << " / " << sched.cpu + plan.cpu;
    std::cout << "\n";
    j["median_time_s"] = {{"runs", time_runs}, {"schedule_wall", sched.wall}, {"schedule_cpu", sched.cpu},
                          {"sync_wall", plan.wall}, {"sync_cpu", plan.cpu}};
  }
  std::cout << (contention.ok ? "validation: PASS (every message once, " + std::to_string(s.num_phases) +
                                    " phases = bottleneck load, no two messages of a phase share a "
                                    "directed edge)"
                              : "validation: FAIL (" + contention.summary() + ")")
            << "\n";
  if (!json_path.empty()) {
    j["source"] = source;
    j["machines"] = t.num_machines();
    j["switches"] = t.num_nodes() - t.num_machines();
    j["root"] = t.name(s.root);
    j["subtrees"] = s.subtrees.size();
    j["phases"] = s.num_phases;
    j["aapc_load"] = t.aapc_load();
    j["bottleneck_links"] = t.bottleneck_links().size();
    j["bound_mbps"] = t.peak_aggregate_throughput(bandwidth);
    if (!no_sync) {
      j["contending_pairs"] = sync.contending_pairs;
      j["sync_messages"] = sync.syncs.size();
      j["redundant_syncs"] = sync.redundant;
    }
    j["time_s"] = {{"read", t_read}, {"schedule", t_schedule}, {"verify", t_verify}, {"sync", t_sync},
                   {"emit", t_emit}};
    j["validation"] = contention.ok ? "PASS" : "FAIL";
    j["results"] = nlohmann::json::array();
    std::ofstream out(json_path);
    libcomm::require(static_cast<bool>(out), "--json: cannot write '" + json_path + "'");
    out << j.dump(2) << "\n";
  }
  return contention.ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const libcomm::Error& e) {
    std::cerr << "schedgen: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "schedgen: error: " << e.what() << "\n";
    return 2;
  }
}
