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

// The command line as given (the record keeps it: a page can check what it prints against it).
std::string g_command;

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
  const libcomm::Comm comm = apps::world_comm(nodes);
  const auto cal = libcomm::calibrate_flat_platform(comm, sizes, reps);
  const libcomm::CostParams params = libcomm::calibrate_cost_params(comm, cal, reps);
  if (!apps::is_root()) return 0;
  const auto& f = cal.platform;
  std::cout << "commbench --calibrate: flat model of paper 001 s. 2 on this machine\n"
            << "ping-pong rank 0 <-> rank " << cal.peer << " of " << p << "; memcpy by rank 0's node, "
            << "out of cache and in cache; each point the median of " << reps << " timings\n\n"
            << std::setw(11) << "bytes" << std::setw(15) << "one_way_us" << std::setw(12)
            << "fit_us" << std::setw(13) << "copy_us" << std::setw(12) << "fit_us" << std::setw(16)
            << "in_cache_us" << "\n";
  for (std::size_t k = 0; k < cal.sizes.size(); ++k) {
    const double m = cal.sizes[k];
    std::cout << std::setw(11) << static_cast<std::size_t>(m) << std::fixed << std::setprecision(3)
              << std::setw(15) << cal.one_way_s[k] * 1e6 << std::setw(12)
              << (cal.transfer.intercept + cal.transfer.slope * m) * 1e6 << std::setw(13)
              << cal.copy_s[k] * 1e6 << std::setw(12)
              << (cal.copy.intercept + cal.copy.slope * m) * 1e6 << std::setw(16) << cal.copy_in_cache_s[k] * 1e6
              << "\n";
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

// commbench's command line.
struct Options {
  Settings settings;
  SizeOptions sizes;
  std::string op = "alltoall", json_path, calibrate_path, auto_policy, save_learned;
  bool list = false, fallbacks = false, config = false, config_table = false, skip_native = false, progress = false,
       simulated = false;
  double copy_gbs = 0;
  std::vector<double> cross_traffic;  // --cross-traffic: seed, pairs, mean bytes, gap us (defaults filled in)
};

// What to time: the operation, the algorithms, the sizes (with the repetitions and the node map).
void add_what_options(CLI::App& app, Options& o) {
  std::vector<std::string> op_names;
  for (const auto& [name, entry] : registry()) op_names.push_back(name);
  app.add_option("--op", o.op, "operation to time")->check(CLI::IsMember(op_names))->capture_default_str();
  app.add_option("--algo", o.settings.algo_list,
                 "comma-separated algorithm names, or 'all' (see --list); 'native' is always "
                 "timed as the reference")
      ->check(apps::kNonEmpty)
      ->capture_default_str();
  add_size_options(app, o.sizes, "timed repetitions per size and algorithm (median reported)");
  app.add_option("--json", o.json_path, "also write the results as JSON to this file")->check(apps::kWritableFile);
  app.add_option("--auto", o.auto_policy,
                 "how auto chooses: online (time the candidates on the first calls), model (cost "
                 "formulas), table (the tuning table); default: LIBCOMM_AUTO, else online")
      ->check(CLI::IsMember({"online", "model", "table"}));
  app.add_option("--save-learned", o.save_learned,
                 "write what auto's online policy learned in this run to this file, a tuning table "
                 "a later run can start from (LIBCOMM_TUNING)")
      ->check(apps::kWritableFile);
}

// The flags, the other modes (--calibrate), the simulator's settings and each operation's
// own options.
void add_other_options(CLI::App& app, Options& o) {
  const struct {
    const char* name;
    bool* value;
    const char* help;
  } flags[] = {
      {"--no-fallback", &o.settings.no_fallback,
       "fail instead of running the documented fallback when an algorithm does not apply "
       "(e.g. pairwise on P not a power of two)"},
      {"--progress", &o.progress, "print each size's medians to stderr as soon as they are measured "
       "(long simulations: a run that is stopped still leaves what it measured)"},
      {"--list", &o.list, "list the operations and their algorithms, and exit"},
      {"--skip-native", &o.skip_native,
       "do not time native unless --algo names it (long packet-level simulations that "
       "time one algorithm per run; ratios are then to the first algorithm)"},
      {"--fallbacks", &o.fallbacks, "print what every named algorithm of every operation runs at "
       "P = 1 .. 16 (its documented fallback where it does not apply; docs/fallbacks.md), and exit"},
      {"--config", &o.config, "print every LIBCOMM_* variable, the value in effect and whether it came from the "
       "environment or is the default, and exit"},
      {"--config-table", &o.config_table, "print the table of LIBCOMM_* variables (type, default, what it does) "
       "that the README holds, and exit"},
      {"--simulated-payload", &o.simulated,
       "SimGrid builds only: payload buffers shared by all simulated ranks, so large "
       "runs fit in memory and skip copies; nothing is validated then"},
  };
  for (const auto& f : flags) app.add_flag(f.name, *f.value, f.help);
  app.add_option("--calibrate", o.calibrate_path,
                 "measure the flat model's Ts, tc + td (ping-pong rank 0 <-> last rank) and tm "
                 "(local copy, every rank of rank 0's node at once, out of cache) on this machine (paper 001 s. 2), "
                 "and auto's cost parameters, print them with the fit "
                 "residuals, write them to this file for --predict file:PATH and LIBCOMM_MODEL, and exit; sizes "
                 "from --sizes (default 0,1K,4K,16K,64K,256K,1M), medians of --reps")
      ->check(apps::kWritableFile);
  add_copy_model_option(app, o.copy_gbs);
  app.add_option("--cross-traffic", o.cross_traffic,
                 "SimGrid builds: other jobs on the network, SEED,PAIRS[,MEAN_BYTES[,GAP_US]]: PAIRS pairs of "
                 "hosts that run no rank (chosen by SEED) exchange messages for ever, each sender waiting "
                 "uniform [0, 2 GAP_US] (default 1000) and sending uniform [1, 2 MEAN_BYTES] (default 65536) "
                 "bytes; one call's network is then not the next's, and a seed repeats its run exactly")
      ->delimiter(',')
      ->expected(2, 4)
      ->check(CLI::Range(0.0, 1e15));
  for (const auto& [name, entry] : registry())
    if (entry.add_options) entry.add_options(app);
}

// The algorithms --algo selects, reference first (without native under --skip-native), each
// checked at every size: one that does not apply fails here, on every rank alike.
std::vector<std::string> selected_algorithms(const Operation& operation, const Options& o,
                                             const std::vector<std::size_t>& sizes) {
  auto algos = operation.select(o.settings.algo_list);
  if (o.skip_native && algos.size() > 1 && algos[0] == "native" &&
      ("," + o.settings.algo_list + ",").find(",native,") == std::string::npos)
    algos.erase(algos.begin());
  for (const auto& a : algos)
    for (std::size_t b : sizes) operation.check_applicable(a, b);
  return algos;
}

// --cross-traffic as given, with its defaults filled in: seed, pairs, mean bytes, gap (us).
void fill_cross_traffic_defaults(std::vector<double>& v) {
  if (v.empty()) return;
  if (v.size() < 3) v.push_back(65536);
  if (v.size() < 4) v.push_back(1000);
}

std::string describe_cross_traffic(const std::vector<double>& v) {
  if (v.empty()) return "";
  std::ostringstream s;
  s << "\ncross traffic: " << v[1] << " pairs of hosts without a rank (seed " << static_cast<std::uint64_t>(v[0])
    << "), messages of uniform [1, " << 2 * v[2] << "] bytes after uniform [0, " << 2 * v[3] << "] us";
  return s.str();
}

void print_header(const Options& o, const libcomm::Comm& comm, const std::string& reference) {
  std::cout << "commbench: op=" << o.op << " ranks=" << comm.size() << " (" << comm.nodes().describe()
            << ") reps=" << o.sizes.reps << " warmup=" << o.sizes.warmup << "\nauto: policy "
            << libcomm::auto_policy_name(libcomm::auto_policy()) << ", tuning table "
            << (libcomm::active_tuning_table() ? libcomm::active_tuning_table()->source() : std::string("none"))
            << ", cost parameters " << libcomm::active_cost_params().source
            << (o.copy_gbs > 0 ? "\n" + describe_copy_model(o.copy_gbs) : "") << describe_cross_traffic(o.cross_traffic)
            << (o.sizes.arrival_skew.empty() ? "" : "\n" + describe_arrival_skew(o.sizes.arrival_skew))
            << (o.sizes.synchronized_start ? "\n" + describe_synchronized_start() : "")
            << "\ntime = median over reps of the slowest rank; ratio = time / " << reference << " time\n\n";
}

bool has_model(const std::vector<Row>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.model_us >= 0; });
}

const char* verdict(const Row& r, bool simulated, bool for_json) {
  return simulated ? (for_json ? "NOT_CHECKED" : "n/a") : r.bad ? "FAIL" : "PASS";
}

// The table, one row per algorithm and size, and the notes: why an algorithm ran as
// another, how long auto took to decide.
void print_table(const Options& o, int p, const std::vector<Row>& rows) {
  const bool model = has_model(rows);
  std::cout << std::left << std::setw(16) << "op" << std::setw(34) << "algo" << std::setw(7) << "ranks"
            << std::setw(11) << "block" << std::right << std::setw(13) << "median_us" << std::setw(12) << "min_us"
            << std::setw(9) << "ratio" << (model ? "     model_us" : "") << "  validation\n";
  for (const auto& r : rows) {
    const std::string name = r.ran == r.algo ? r.algo : r.algo + "->" + r.ran;
    std::cout << std::left << std::setw(16) << o.op << std::setw(34) << name << std::setw(7) << p << std::setw(11)
              << apps::format_size(r.block) << std::right << std::fixed << std::setprecision(1) << std::setw(13)
              << r.median * 1e6 << std::setw(12) << r.min * 1e6 << std::setprecision(2) << std::setw(9) << r.ratio;
    if (model) std::cout << std::setprecision(1) << std::setw(13) << r.model_us;
    std::cout << "  " << verdict(r, o.simulated, false) << "\n";
  }
  std::set<std::string> notes;
  for (const auto& r : rows)
    if (!r.note.empty() && notes.insert(r.note).second) std::cout << "note: " << r.note << "\n";
  if (libcomm::built_for_simulation()) {
    const auto [selector, forced] = apps::native_selector(o.op);
    std::cout << "note: native is SMPI's " << o.op << " as the " << selector << " selector decides"
              << (forced.empty() ? "" : " (forced: smpi/" + o.op + ":" + forced + ")") << "\n";
  }
  for (const auto& r : rows)
    if (r.warmup_calls > 1)
      std::cout << "note: " << r.algo << " at " << apps::format_size(r.block) << ": decided after "
                << r.warmup_calls << " calls, " << std::fixed << std::setprecision(1) << r.warmup_s * 1e6
                << " us in all (" << r.median * 1e6 * r.warmup_calls << " us at the decided median)\n";
}

void print_validation(const Options& o, const std::vector<Row>& rows, long long failures,
                      const std::string& reference) {
  if (o.simulated)
    std::cout << "validation: NOT CHECKED (--simulated-payload: the buffers hold no real "
                 "data; run without it to validate)\n";
  else if (failures == 0)
    std::cout << "validation: PASS (" << rows.size() << " algorithm/size pairs, every run "
              << "byte-identical to the expected blocks that " << reference << " also delivered)\n";
  else
    std::cout << "validation: FAIL (" << failures << " of " << rows.size()
              << " algorithm/size pairs delivered wrong bytes)\n";
}

nlohmann::json record(const Options& o, const libcomm::Comm& comm, const std::vector<Row>& rows, long long failures,
                      long long late_starts) {
  nlohmann::json j;
  j["program"] = "commbench";
  j["command"] = g_command;
  j["op"] = o.op;
  j["ranks"] = comm.size();
  j["nodes"] = comm.nodes().describe();
  j["reps"] = o.sizes.reps;
  j["model_copy_gbs"] = o.copy_gbs;
  if (const auto& v = o.cross_traffic; !v.empty())
    j["cross_traffic"] = {{"seed", static_cast<std::uint64_t>(v[0])}, {"pairs", static_cast<int>(v[1])},
                          {"mean_bytes", v[2]}, {"gap_us", v[3]}};
  if (const auto& v = o.sizes.arrival_skew; !v.empty())
    j["arrival_skew"] = {{"seed", static_cast<std::uint64_t>(v[0])}, {"mean_us", v[1]}};
  if (o.sizes.synchronized_start) j["synchronized_start"] = {{"late_starts", late_starts}};
  j["auto_policy"] = libcomm::auto_policy_name(libcomm::auto_policy());
  if (libcomm::built_for_simulation()) {
    const auto [selector, forced] = apps::native_selector(o.op);
    j["native_selector"] = selector;
    if (!forced.empty()) j["native_forced"] = forced;
  }
  j["validation"] = o.simulated ? "NOT_CHECKED" : failures == 0 ? "PASS" : "FAIL";
  for (const auto& r : rows) {
    nlohmann::json row = {{"algo", r.algo},         {"ran", r.ran},
                          {"note", r.note},         {"block_bytes", r.block},
                          {"median_s", r.median},   {"min_s", r.min},
                          {"ratio_to_native", r.ratio}, {"times_s", r.times},
                          {"warmup_calls", r.warmup_calls}, {"warmup_s", r.warmup_s},
                          {"validation", verdict(r, o.simulated, true)}};
    if (has_model(rows)) row["model_us"] = r.model_us;
    // What auto's cost model predicts for this algorithm at this size (the model's accuracy:
    // scripts/reproduce/auto_report.py).
    const std::string algo = parse_timed(r.algo).algo;
    // alltoallv: of the pattern's messages (their mean beside the longest), which the record says.
    if (r.mean_message >= 0) row["auto_model_mean_bytes"] = r.mean_message;
    for (const auto& pr : libcomm::predict(o.op, comm, r.block, r.mean_message)) {
      if (pr.algo == algo) row["auto_model_s"] = pr.seconds;
      if (algo == "auto") row["auto_model_all_s"][std::string(pr.algo)] = pr.seconds;  // what auto's model weighed
    }
    if (libcomm::built_for_simulation()) row["charged_local_work_s"] = r.local_work;  // charged per repetition
    j["results"].push_back(std::move(row));
  }
  return j;
}

// The flow: parse -> the modes that exit at once -> operation and algorithms -> time
// (every run validated) -> report (table, validation line, JSON, what auto learned).
int run(int argc, char** argv) {
  CLI::App app{
      "commbench: time libcomm collective algorithms against the MPI library's own collective.\n"
      "Every run is validated byte for byte; the table shows medians over --reps of the\n"
      "slowest rank's time and the ratio to native measured in the same run."};
  Options o;
  for (int i = 1; i < argc; ++i) g_command += (i > 1 ? " " : "") + std::string(argv[i]);
  add_what_options(app, o);
  add_other_options(app, o);
  apps::parse_command_line(app, argc, argv);
  if (o.fallbacks || o.list || o.config || o.config_table) {
    if (!apps::is_root()) return 0;
    if (o.fallbacks) print_fallbacks(std::cout);
    else if (o.list) list_operations(std::cout);
    else std::cout << libcomm::settings_table(o.config_table);
    return 0;
  }
  libcomm::set_simulated_payload(o.simulated);
  apply_copy_model(o.copy_gbs);
  fill_cross_traffic_defaults(o.cross_traffic);
  if (const auto& v = o.cross_traffic; !v.empty())  // every rank checks; the first starts it
    libcomm::sim::start_cross_traffic(static_cast<std::uint64_t>(v[0]), static_cast<int>(v[1]), v[2], v[3] * 1e-6,
                                      apps::is_root());
  if (!o.calibrate_path.empty())
    return calibrate(o.sizes.sizes.empty() ? "0,1K,4K,16K,64K,256K,1M" : o.sizes.sizes, o.sizes.reps,
                     o.calibrate_path, o.sizes.nodes);
  if (!o.auto_policy.empty()) libcomm::set_auto_policy(libcomm::auto_policy_from_name(o.auto_policy));
  const auto sizes = block_sizes(o.sizes);
  const libcomm::Comm comm = apps::world_comm(o.sizes.nodes);
  apply_arrival_skew(o.sizes.arrival_skew, comm.rank());
  apply_synchronized_start(o.sizes.synchronized_start);
  auto operation = registry().at(o.op).make(comm, o.settings);
  const auto algos = selected_algorithms(*operation, o, sizes);
  if (apps::is_root()) print_header(o, comm, algos[0]);

  const std::vector<Row> rows = time_algorithms(*operation, comm, algos, sizes, o.sizes.reps, o.sizes.warmup,
                                                o.simulated, o.progress ? &std::cerr : nullptr);
  long long failures = 0;
  for (const auto& r : rows) failures += r.bad ? 1 : 0;
  const long long late = late_starts(comm.mpi());
  if (apps::is_root()) {
    print_table(o, comm.size(), rows);
    print_validation(o, rows, failures, algos[0]);
    if (!o.json_path.empty()) apps::write_json(o.json_path, record(o, comm, rows, failures, late));
  }
  if (!o.save_learned.empty()) libcomm::save_learned_tuning_table(o.save_learned, comm);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace commbench

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "commbench", commbench::run); }
