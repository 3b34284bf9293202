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
#include "libcomm/operations.hpp"
#include "operation.hpp"
#include "timing.hpp"

namespace commbench {

namespace {

// commbench --calibrate FILE: the flat model's parameters of this machine (paper 001,
// s. 2), printed point by point beside the fitted line, and saved for --predict file:FILE.
// The same run measures auto's cost parameters (libcomm/cost_params.hpp) on --nodes' map and
// writes them to the same file (LIBCOMM_MODEL=FILE, or inputs/tuning/<platform>.model).
int calibrate(const std::string& sizes_text, int reps, const std::string& path, const std::string& nodes) {
  const auto sizes = size_list(sizes_text);
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (p < 2)
    throw libcomm::Error("--calibrate needs at least 2 ranks (a ping-pong between rank 0 and "
                         "the last rank); run it with mpiexec -n 2 or more");
  const auto cal = libcomm::calibrate_flat_platform(MPI_COMM_WORLD, sizes, reps);
  const libcomm::Comm comm = apps::world_comm(nodes);
  const libcomm::CostParams params = libcomm::calibrate_cost_params(comm, cal, reps);
  if (!apps::is_root()) return 0;
  const auto& f = cal.platform;
  std::cout << "commbench --calibrate: flat model of paper 001 s. 2 on this machine\n"
            << "ping-pong rank 0 <-> rank " << cal.peer << " of " << p << "; memcpy on rank 0; "
            << "each point the median of " << reps << " timings\n\n"
            << std::setw(11) << "bytes" << std::setw(15) << "one_way_us" << std::setw(12)
            << "fit_us" << std::setw(13) << "copy_us" << std::setw(12) << "fit_us" << "\n";
  for (std::size_t k = 0; k < cal.sizes.size(); ++k) {
    const double m = cal.sizes[k];
    std::cout << std::setw(11) << static_cast<std::size_t>(m) << std::fixed << std::setprecision(3)
              << std::setw(15) << cal.one_way_s[k] * 1e6 << std::setw(12)
              << (cal.transfer.intercept + cal.transfer.slope * m) * 1e6 << std::setw(13)
              << cal.copy_s[k] * 1e6 << std::setw(12)
              << (cal.copy.intercept + cal.copy.slope * m) * 1e6 << "\n";
  }
  std::ostringstream summary;
  summary << std::setprecision(4) << "Ts = " << f.ts_us << " us, tc + td = " << f.tc_td_us
          << " us/byte, tm = " << f.tm_us << " us/byte\nfit residual (rms, relative): "
          << "transfer " << cal.transfer.rms_relative * 100 << " %, copy "
          << cal.copy.rms_relative * 100 << " %";
  std::cout << "\n" << summary.str() << "\n";
  libcomm::save_flat_platform(
      f, path,
      "libcomm flat platform (paper 001 s. 2), measured by commbench --calibrate on " +
          std::to_string(p) + " ranks\n" + summary.str());
  {
    std::ofstream out(path, std::ios::app);
    out << "# auto's cost parameters (libcomm/cost_params.hpp), node map " << comm.nodes().describe() << "\n"
        << libcomm::cost_params_text(params);
    libcomm::require(static_cast<bool>(out), "--calibrate: cannot write '" + path + "'");
  }
  std::cout << "\nauto's cost parameters:\n" << libcomm::cost_params_text(params) << "written to " << path
            << " (use: commbench --op alltoallv --predict file:" << path << "; LIBCOMM_MODEL=" << path << ")\n";
  return 0;
}

// The fallback tables (docs/fallbacks.md, checked against this output by a test), both
// from the operations' registries: what each algorithm needs and what runs instead, and what
// a request runs at P = 1 .. 16 on one rank per node ("·": the algorithm itself). A tuning
// table changes only what auto picks, never a fallback.
constexpr int kFallbackMaxP = 16;

void print_fallbacks(std::ostream& os) {
  os << "| operation | algorithm | applies to | otherwise | why |\n|---|---|---|---|---|\n";
  for (const auto& op : libcomm::operations())
    for (const auto& a : op.applicability)
      if (!a.applies.empty())
        os << "| " << op.op << " | `" << a.name << "` | " << a.applies << " | "
           << (a.fallback.empty() ? std::string("refused: the same error on every rank") : "`" + std::string(a.fallback) + "`")
           << " | " << (a.fallback_why.empty() ? "-" : a.fallback_why) << " |\n";
  os << "\n| operation | algorithm |";
  for (int p = 1; p <= kFallbackMaxP; ++p) os << " " << p << " |";
  os << "\n|---|---|";
  for (int p = 1; p <= kFallbackMaxP; ++p) os << "---|";
  os << "\n";
  for (const auto& op : libcomm::operations())
    for (const auto& a : op.applicability) {
      if (a.name == "auto" || a.name == "native" || a.node_map) continue;
      os << "| " << op.op << " | " << a.name << " |";
      for (int p = 1; p <= kFallbackMaxP; ++p) {
        const std::string_view ran = op.runs_at(a.name, p);
        os << " " << (ran == a.name ? std::string_view("·") : ran) << " |";
      }
      os << "\n";
    }
}

int run(int argc, char** argv) {
  CLI::App app{
      "commbench: time libcomm collective algorithms against the MPI library's own collective.\n"
      "Every run is validated byte for byte; the table shows medians over --reps of the\n"
      "slowest rank's time and the ratio to native measured in the same run."};
  Settings settings;
  std::string op = "alltoall", min_s = "8", max_s = "4MiB", nodes = "shared", json_path, sizes_list;
  int reps = 5, warmup = 1;
  bool list = false, fallbacks = false;
  std::vector<std::string> op_names;
  for (const auto& [name, entry] : registry()) op_names.push_back(name);
  app.add_option("--op", op, "operation to time")->check(CLI::IsMember(op_names))->capture_default_str();
  app.add_option("--algo", settings.algo_list,
                 "comma-separated algorithm names, or 'all' (see --list); 'native' is always "
                 "timed as the reference")
      ->check(apps::kNonEmpty)
      ->capture_default_str();
  app.add_option("--min", min_s, "smallest block per destination (bytes; K/M/G suffixes)")
      ->capture_default_str();
  app.add_option("--max", max_s, "largest block per destination; sizes double from --min")
      ->capture_default_str();
  app.add_option("--sizes", sizes_list,
                 "explicit comma-separated block sizes (e.g. 8,1K,64K,1M); overrides --min/--max")
      ->check(apps::kNonEmpty);
  app.add_option("--reps", reps, "timed repetitions per size and algorithm (median reported)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", warmup,
                 "untimed runs before timing (0: time each algorithm from its first call, for "
                 "deterministic simulations where a run leaves nothing warm)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--nodes", nodes,
                 "node map: shared | flat | ppn=N | sizes=A,B,.. | map=N0,N1,.. | file:PATH")
      ->capture_default_str();
  app.add_option("--json", json_path, "also write the results as JSON to this file")->check(apps::kWritableFile);
  app.add_flag("--no-fallback", settings.no_fallback,
               "fail instead of running the documented fallback when an algorithm does not apply "
               "(e.g. pairwise on P not a power of two)");
  app.add_flag("--list", list, "list the operations and their algorithms, and exit");
  app.add_flag("--fallbacks", fallbacks,
               "print what every named algorithm of every operation runs at P = 1 .. 16 (its documented "
               "fallback where it does not apply; docs/fallbacks.md), and exit");
  bool skip_native = false;
  app.add_flag("--skip-native", skip_native,
               "do not time native unless --algo names it (long packet-level simulations that "
               "time one algorithm per run; ratios are then to the first algorithm)");
  bool progress = false;
  app.add_flag("--progress", progress,
               "print each size's medians to stderr as soon as they are measured (long simulations: "
               "a run that is stopped still leaves what it measured)");
  std::string calibrate_path;
  app.add_option("--calibrate", calibrate_path,
                 "measure the flat model's Ts, tc + td (ping-pong rank 0 <-> last rank) and tm "
                 "(local copy) on this machine (paper 001 s. 2), print them with the fit "
                 "residuals, write them to this file for --predict file:PATH, and exit; sizes "
                 "from --sizes (default 0,1K,4K,16K,64K,256K,1M), medians of --reps")
      ->check(apps::kWritableFile);
  bool simulated = false;
  app.add_flag("--simulated-payload", simulated,
               "SimGrid builds only: payload buffers shared by all simulated ranks, so large "
               "runs fit in memory and skip copies; nothing is validated then");
  double copy_gbs = 0;
  add_copy_model_option(app, copy_gbs);
  std::string auto_policy;
  app.add_option("--auto", auto_policy,
                 "how auto chooses: online (time the candidates on the first calls), model (cost "
                 "formulas), table (the tuning table); default: LIBCOMM_AUTO, else online")
      ->check(CLI::IsMember({"online", "model", "table"}));
  std::string save_learned;
  app.add_option("--save-learned", save_learned,
                 "write what auto's online policy learned in this run to this file, a tuning table "
                 "a later run can start from (LIBCOMM_TUNING)")
      ->check(apps::kWritableFile);
  for (const auto& [name, entry] : registry())
    if (entry.add_options) entry.add_options(app);
  apps::parse_command_line(app, argc, argv);
  if (fallbacks) {
    if (apps::is_root()) print_fallbacks(std::cout);
    return 0;
  }
  if (list) {
    if (apps::is_root()) list_operations(std::cout);
    return 0;
  }

  libcomm::set_simulated_payload(simulated);
  apply_copy_model(copy_gbs);
  if (!calibrate_path.empty())
    return calibrate(sizes_list.empty() ? "0,1K,4K,16K,64K,256K,1M" : sizes_list, reps, calibrate_path, nodes);
  if (!auto_policy.empty()) libcomm::set_auto_policy(libcomm::auto_policy_from_name(auto_policy));
  const auto sizes = block_sizes(min_s, max_s, sizes_list);

  const libcomm::Comm comm = apps::world_comm(nodes);
  const int p = comm.size();
  auto operation = registry().at(op).make(comm, settings);
  auto algos = operation->select(settings.algo_list);
  if (skip_native && algos.size() > 1 && algos[0] == "native" &&
      ("," + settings.algo_list + ",").find(",native,") == std::string::npos)
    algos.erase(algos.begin());
  // Fail early, on every rank alike, when an algorithm does not apply.
  for (const auto& a : algos)
    for (std::size_t b : sizes) operation->check_applicable(a, b);

  if (apps::is_root())
    std::cout << "commbench: op=" << op << " ranks=" << p << " (" << comm.nodes().describe()
              << ") reps=" << reps << " warmup=" << warmup << "\nauto: policy "
              << libcomm::auto_policy_name(libcomm::auto_policy()) << ", tuning table "
              << (libcomm::active_tuning_table() ? libcomm::active_tuning_table()->source() : std::string("none"))
              << ", cost parameters " << libcomm::active_cost_params().source
              << (copy_gbs > 0 ? "\n" + describe_copy_model(copy_gbs) : "")
              << "\ntime = median over reps of the slowest rank; ratio = time / " << algos[0]
              << " time\n\n";

  const std::vector<Row> rows =
      time_algorithms(*operation, comm, algos, sizes, reps, warmup, simulated, progress ? &std::cerr : nullptr);

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
    for (const auto& r : rows)
      if (r.warmup_calls > 1)
        std::cout << "note: " << r.algo << " at " << apps::format_size(r.block) << ": decided after "
                  << r.warmup_calls << " calls, " << std::fixed << std::setprecision(1) << r.warmup_s * 1e6
                  << " us in all (" << r.median * 1e6 * r.warmup_calls << " us at the decided median)\n";
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
      j["model_copy_gbs"] = copy_gbs;
      j["auto_policy"] = libcomm::auto_policy_name(libcomm::auto_policy());
      j["validation"] = simulated ? "NOT_CHECKED" : failures == 0 ? "PASS" : "FAIL";
      for (const auto& r : rows)
        j["results"].push_back({{"algo", r.algo}, {"ran", r.ran}, {"note", r.note},
                                {"block_bytes", r.block}, {"median_s", r.median},
                                {"min_s", r.min}, {"ratio_to_native", r.ratio},
                                {"times_s", r.times}, {"warmup_calls", r.warmup_calls},
                                {"warmup_s", r.warmup_s},
                                {"validation", simulated ? "NOT_CHECKED" : r.bad ? "FAIL" : "PASS"}});
      if (model)
        for (std::size_t k = 0; k < rows.size(); ++k) j["results"][k]["model_us"] = rows[k].model_us;
      // What auto's cost model predicts for each algorithm at each size (for the model's
      // accuracy: scripts/reproduce/auto_report.py).
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const std::string base = parse_timed(rows[k].algo).algo;
        for (const auto& pr : libcomm::predict(op, comm, rows[k].block))
          if (pr.algo == base) j["results"][k]["auto_model_s"] = pr.seconds;
      }
      if (libcomm::built_for_simulation())  // local work charged explicitly, per repetition
        for (std::size_t k = 0; k < rows.size(); ++k) j["results"][k]["charged_local_work_s"] = rows[k].local_work;
      std::ofstream out(json_path);
      libcomm::require(static_cast<bool>(out), "--json: cannot write '" + json_path + "'");
      out << j.dump(2) << "\n";
    }
  }
  if (!save_learned.empty()) libcomm::save_learned_tuning_table(save_learned, comm);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace commbench

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "commbench", commbench::run); }
