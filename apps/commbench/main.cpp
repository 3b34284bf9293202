// commbench: times libcomm's collective algorithms side by side with the MPI library's own
// collective, over a range of block sizes, validating every run.
//
// For every size, each repetition runs every selected algorithm once, in turn (so noise
// on a shared machine hits all of them alike); the time of one run is that of the slowest
// rank; the table reports the median over repetitions and the ratio to the reference
// (`native`, the MPI library's collective). Operations plug in through operation.hpp.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "apps/common.hpp"
#include "libcomm/libcomm.hpp"
#include "operation.hpp"
#include "timing.hpp"

namespace commbench {

namespace {

int run(int argc, char** argv) {
  CLI::App app{
      "commbench: time libcomm collective algorithms against the MPI library's own collective.\n"
      "Every run is validated byte for byte; the table shows medians over --reps of the\n"
      "slowest rank's time and the ratio to native measured in the same run."};
  Settings settings;
  std::string op = "alltoall", min_s = "8", max_s = "4MiB", nodes = "shared", json_path, sizes_list;
  int reps = 5, warmup = 1;
  bool list = false;
  std::vector<std::string> op_names;
  for (const auto& [name, entry] : registry()) op_names.push_back(name);
  app.add_option("--op", op, "operation to time")->check(CLI::IsMember(op_names))->capture_default_str();
  app.add_option("--algo", settings.algo_list,
                 "comma-separated algorithm names, or 'all' (see --list); 'native' is always "
                 "timed as the reference")
      ->capture_default_str();
  app.add_option("--min", min_s, "smallest block per destination (bytes; K/M/G suffixes)")
      ->capture_default_str();
  app.add_option("--max", max_s, "largest block per destination; sizes double from --min")
      ->capture_default_str();
  app.add_option("--sizes", sizes_list,
                 "explicit comma-separated block sizes (e.g. 8,1K,64K,1M); overrides --min/--max");
  app.add_option("--reps", reps, "timed repetitions per size and algorithm (median reported)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", warmup, "untimed runs before timing (at least 1; it checks arguments)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--nodes", nodes,
                 "node map: shared | flat | ppn=N | sizes=A,B,.. | map=N0,N1,.. | file:PATH")
      ->capture_default_str();
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  app.add_flag("--no-fallback", settings.no_fallback,
               "fail instead of running the documented fallback when an algorithm does not apply "
               "(e.g. pairwise on P not a power of two)");
  app.add_flag("--list", list, "list the operations and their algorithms, and exit");
  bool simulated = false;
  app.add_flag("--simulated-payload", simulated,
               "SimGrid builds only: payload buffers shared by all simulated ranks, so large "
               "runs fit in memory and skip copies; nothing is validated then");
  for (const auto& [name, entry] : registry())
    if (entry.add_options) entry.add_options(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (apps::is_root()) app.exit(e);
    throw;
  }
  if (list) {
    if (apps::is_root())
      for (const auto& [name, entry] : registry()) {
        std::cout << "--op " << name << ": " << entry.summary << "\n";
        entry.list(std::cout);
      }
    return 0;
  }

  libcomm::set_simulated_payload(simulated);
  const auto sizes = block_sizes(min_s, max_s, sizes_list);

  const libcomm::Comm comm(MPI_COMM_WORLD, nodes);
  const int p = comm.size();
  auto operation = registry().at(op).make(comm, settings);
  const auto algos = operation->select(settings.algo_list);
  // Fail early, on every rank alike, when an algorithm does not apply.
  for (const auto& a : algos)
    for (std::size_t b : sizes) operation->check_applicable(a, b);

  if (apps::is_root())
    std::cout << "commbench: op=" << op << " ranks=" << p << " (" << comm.nodes().describe()
              << ") reps=" << reps << " warmup=" << warmup << "\ntuning table for auto: "
              << (libcomm::active_tuning_table() ? libcomm::active_tuning_table()->source()
                                                  : std::string("none (built-in rules)"))
              << "\ntime = median over reps of the slowest rank; ratio = time / " << algos[0]
              << " time\n\n";

  const std::vector<Row> rows =
      time_algorithms(*operation, comm, algos, sizes, reps, warmup, simulated);

  long long failures = 0;
  bool model = false;
  for (const auto& r : rows) failures += r.bad ? 1 : 0, model |= r.model_us >= 0;
  if (apps::is_root()) {
    std::cout << std::left << std::setw(16) << "op" << std::setw(34) << "algo" << std::setw(7)
              << "ranks" << std::setw(11) << "block" << std::right << std::setw(13)
              << "median_us" << std::setw(12) << "min_us" << std::setw(9) << "ratio"
              << (model ? "     model_us" : "") << "  validation\n";
    for (const auto& r : rows) {
      const std::string name = r.ran == r.algo ? r.algo : r.algo + "->" + r.ran;
      std::cout << std::left << std::setw(16) << op << std::setw(34) << name << std::setw(7) << p
                << std::setw(11) << apps::format_size(r.block) << std::right << std::fixed
                << std::setprecision(1) << std::setw(13) << r.median * 1e6 << std::setw(12)
                << r.min * 1e6 << std::setprecision(2) << std::setw(9) << r.ratio;
      if (model) std::cout << std::setprecision(1) << std::setw(13) << r.model_us;
      std::cout << "  " << (simulated ? "n/a" : r.bad ? "FAIL" : "PASS") << "\n";
    }
    std::set<std::string> notes;
    for (const auto& r : rows)
      if (!r.note.empty() && notes.insert(r.note).second) std::cout << "note: " << r.note << "\n";
    if (simulated)
      std::cout << "validation: NOT CHECKED (--simulated-payload: the buffers hold no real "
                   "data; run without it to validate)\n";
    else if (failures == 0)
      std::cout << "validation: PASS (" << rows.size() << " algorithm/size pairs, every run "
                << "byte-identical to the expected blocks that " << algos[0] << " also delivered)\n";
    else
      std::cout << "validation: FAIL (" << failures << " of " << rows.size()
                << " algorithm/size pairs delivered wrong bytes)\n";
    if (!json_path.empty()) {
      nlohmann::json j;
      j["program"] = "commbench";
      j["op"] = op;
      j["ranks"] = p;
      j["nodes"] = comm.nodes().describe();
      j["reps"] = reps;
      j["validation"] = simulated ? "NOT_CHECKED" : failures == 0 ? "PASS" : "FAIL";
      for (const auto& r : rows)
        j["results"].push_back({{"algo", r.algo}, {"ran", r.ran}, {"note", r.note},
                                {"block_bytes", r.block}, {"median_s", r.median},
                                {"min_s", r.min}, {"ratio_to_native", r.ratio},
                                {"times_s", r.times},
                                {"validation", simulated ? "NOT_CHECKED" : r.bad ? "FAIL" : "PASS"}});
      if (model)
        for (std::size_t k = 0; k < rows.size(); ++k) j["results"][k]["model_us"] = rows[k].model_us;
      std::ofstream out(json_path);
      libcomm::require(static_cast<bool>(out), "--json: cannot write '" + json_path + "'");
      out << j.dump(2) << "\n";
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace commbench

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "commbench", commbench::run); }
