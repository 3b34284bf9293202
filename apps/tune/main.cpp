// tune: measures every applicable algorithm of each collective on the machine (or SimGrid
// platform) it runs on and writes the tuning table that `auto` reads (libcomm/tuning.hpp,
// inputs/tuning/README.md). For every operation and block size the fastest algorithm
// (median over --reps of the slowest rank, as in commbench) wins; consecutive sizes with
// the same winner become one size range; between measured sizes the boundary is where the
// straight lines through each algorithm's two medians cross (libcomm::tuned_ranges), after
// --refine rounds have measured the midpoints where the winner changes. The measured
// medians are written as comments above the rows.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

#include "apps/common.hpp"
#include "libcomm/libcomm.hpp"
#include "libcomm/topology.hpp"
#include "operation.hpp"
#include "timing.hpp"

namespace tune {
namespace {

using commbench::Row;

// Table name of a timed algorithm: alltoallv entries are NAME/MODE.
std::string table_name(const std::string& algo) {
  return algo.substr(0, algo.find('/'));
}

// The candidates of one operation: every algorithm except auto, that runs as itself here
// (no fallback). Hierarchical all-to-all schemes only where nodes hold several ranks,
// which is also the only place auto takes them.
std::vector<std::string> candidates(const std::string& op, commbench::Operation& operation,
                                    const libcomm::Comm& comm,
                                    const std::vector<std::size_t>& sizes,
                                    const std::string& list) {
  const auto& nodes = comm.nodes();
  const bool multi = nodes.num_nodes() > 1 && nodes.num_nodes() < comm.size();
  std::vector<std::string> out;
  for (const auto& a : operation.select(list)) {
    if (table_name(a) == "auto") continue;
    if (op == "alltoall" && !multi && libcomm::is_hierarchical(libcomm::alltoall_algo_from_name(a)))
      continue;
    try {
      for (std::size_t b : sizes) operation.check_applicable(a, b);
    } catch (const libcomm::Error&) {
      continue;  // the same P on every rank: every rank skips it alike
    }
    out.push_back(a);
  }
  return out;
}

std::string format_us(double seconds) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(seconds * 1e6 < 100 ? 1 : 0) << seconds * 1e6;
  return s.str();
}

// A row that counts: it delivered the right bytes and ran as the algorithm it names.
bool valid(const Row& r) {
  return r.bad == 0 && table_name(r.ran) == table_name(r.algo);
}

// times[a][k]: candidate a at the k-th size of `rows` (size-major, `algos` order), NaN
// where it failed or fell back.
std::vector<std::vector<double>> times_of(std::size_t num_algos, const std::vector<Row>& rows) {
  const std::size_t K = rows.size() / num_algos;
  std::vector<std::vector<double>> times(num_algos, std::vector<double>(K));
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t a = 0; a < num_algos; ++a) {
      const Row& r = rows[k * num_algos + a];
      times[a][k] = valid(r) ? r.median : std::numeric_limits<double>::quiet_NaN();
    }
  return times;
}

// The measurements of one operation, sizes increasing, rows size-major.
struct Measured {
  std::vector<std::size_t> sizes;
  std::vector<Row> rows;
  std::vector<std::size_t> refined;  // the sizes --refine added
};

// Times every candidate at `sizes`, then up to `refine` rounds at the midpoints between
// neighbouring sizes whose winners differ (libcomm::refinement_sizes). Every rank holds the
// same rows, so every rank picks the same midpoints.
Measured measure(commbench::Operation& operation, const libcomm::Comm& comm,
                 const std::vector<std::string>& algos, std::vector<std::size_t> sizes, int reps,
                 int warmup, bool simulated, int refine) {
  std::sort(sizes.begin(), sizes.end());
  Measured m{sizes,
             commbench::time_algorithms(operation, comm, algos, sizes, reps, warmup, simulated,
                                        &std::cerr),
             {}};
  const std::size_t A = algos.size();
  for (int round = 0; round < refine; ++round) {
    const std::vector<std::uint64_t> bytes(m.sizes.begin(), m.sizes.end());
    const auto extra = libcomm::refinement_sizes(bytes, times_of(A, m.rows));
    if (extra.empty()) break;
    const std::vector<std::size_t> more(extra.begin(), extra.end());
    for (const auto& a : algos)
      for (std::size_t b : more) operation.check_applicable(a, b);
    const auto rows = commbench::time_algorithms(operation, comm, algos, more, reps, warmup,
                                                 simulated, &std::cerr);
    // Merge the new sizes in order.
    Measured merged;
    std::size_t i = 0, j = 0;
    while (i < m.sizes.size() || j < more.size()) {
      const bool old = j == more.size() || (i < m.sizes.size() && m.sizes[i] < more[j]);
      const std::size_t k = old ? i++ : j++;
      merged.sizes.push_back(old ? m.sizes[k] : more[k]);
      const auto& from = old ? m.rows : rows;
      merged.rows.insert(merged.rows.end(), from.begin() + static_cast<std::ptrdiff_t>(k * A),
                         from.begin() + static_cast<std::ptrdiff_t>((k + 1) * A));
    }
    merged.refined = m.refined;
    merged.refined.insert(merged.refined.end(), more.begin(), more.end());
    m = std::move(merged);
  }
  std::sort(m.refined.begin(), m.refined.end());
  return m;
}

// Writes the comments and rows of one operation; `rows` hold every candidate at every size.
// up_to_largest: the last row ends at the largest measured size instead of inf.
void write_operation(std::ostream& out, const std::string& op, const libcomm::Comm& comm, int ppn,
                     bool topology, double spread, const std::vector<std::string>& algos,
                     const Measured& m, bool up_to_largest) {
  const auto& sizes = m.sizes;
  const auto& rows = m.rows;
  out << "\n# " << op << ": " << comm.size() << " ranks, " << comm.nodes().describe()
      << (topology ? ", switch tree attached" : "") << "\n";
  if (!m.refined.empty()) {
    out << "# refined where the winner changed (--refine), bytes:";
    for (std::size_t b : m.refined) out << " " << b;
    out << "\n";
  }
  out << "# medians (us) per block size; the winner first, then every candidate\n";
  const auto times = times_of(algos.size(), rows);
  const std::vector<std::uint64_t> bytes(sizes.begin(), sizes.end());
  // An algorithm that failed its check has NaN here; the reason is in the messages above.
  const auto winner = libcomm::fastest_at_each_size(op.c_str(), bytes, times);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    std::string all;
    for (std::size_t a = 0; a < algos.size(); ++a) {
      const Row& r = rows[k * algos.size() + a];
      all += " " + table_name(r.algo) + "=" + (valid(r) ? format_us(r.median) : "invalid");
    }
    out << "#   " << std::left << std::setw(9) << apps::format_size(sizes[k]) << std::setw(24)
        << table_name(algos[winner[k]]) << "|" << all << "\n";
  }
  std::ostringstream extra;
  if (op == "alltoallv") extra << " spread=" << std::setprecision(4) << spread;
  if (topology) extra << " topology=tree";
  auto ranges = libcomm::tuned_ranges(bytes, times);
  if (up_to_largest && !ranges.empty() && !sizes.empty()) {
    ranges.back().to = sizes.back();
    out << "# no row above " << apps::format_size(sizes.back())
        << " (--up-to-largest): there auto's cost model decides\n";
  }
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto& r = ranges[i];
    const std::string name = table_name(algos[r.algo]);
    // Modes of one alltoallv algorithm share its table name: one row.
    if (i + 1 < ranges.size() && table_name(algos[ranges[i + 1].algo]) == name) {
      ranges[i + 1].from = r.from;
      continue;
    }
    const std::string to =
        r.to == std::numeric_limits<std::uint64_t>::max() ? "inf" : std::to_string(r.to);
    out << std::left << std::setw(15) << op << std::setw(6) << comm.size() << std::setw(5) << ppn
        << std::setw(11) << r.from << std::setw(11) << to << name << extra.str() << "\n";
  }
}

// tune's command line.
struct Options {
  commbench::SizeOptions sizes;
  std::string ops = "alltoall,alltoallv,allgather,reduce_scatter", output, platform = "this machine",
              algo_list = "all";
  int refine = 2;
  bool simulated = false, up_to_largest = false;
  double copy_gbs = 0;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--ops", o.ops, "comma-separated operations to tune")->check(apps::kNonEmpty)->capture_default_str();
  app.add_option("--algo", o.algo_list,
                 "candidates: 'all' or a comma-separated list of algorithm names (with one "
                 "operation in --ops; native is always among them, as the reference); at "
                 "hundreds of simulated ranks, leaving out algorithms that cannot win saves hours")
      ->check(apps::kNonEmpty)
      ->capture_default_str();
  app.add_option("--refine", o.refine,
                 "rounds of extra sizes where the winner changes between two measured sizes "
                 "(their geometric midpoint, all candidates), so a crossover is measured "
                 "rather than interpolated; 0 = the given sizes only")
      ->check(CLI::Range(0, 20))
      ->capture_default_str();
  commbench::add_size_options(app, o.sizes, "timed repetitions per size and algorithm (median used)");
  app.add_flag("--up-to-largest", o.up_to_largest,
               "end the last row at the largest measured size instead of inf, so that above it "
               "auto's cost model decides (a table measured over part of the range)");
  app.add_option("--platform", o.platform, "platform name for the table's header comment")->capture_default_str();
  app.add_option("--output,-o", o.output, "write the table here (default: standard output)")
      ->check(apps::kWritableFile);
  app.add_flag("--simulated-payload", o.simulated,
               "SimGrid builds only: shared payload buffers (nothing validated; simulated time "
               "is unchanged)");
  commbench::add_copy_model_option(app, o.copy_gbs);
  for (const auto& [name, entry] : commbench::registry())
    if (entry.add_options) entry.add_options(app);
  // alltoallv: auto picks an algorithm, the caller's mode stays; measure the default mode.
  app.get_option("--modes")->default_val("b");
}

// The table's header comments: the platform, when and how it was measured, the command.
void write_header(std::ostream& table, const Options& o, int argc, char** argv) {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  table << "# libcomm tuning table (format: inputs/tuning/README.md)\n# platform: " << o.platform << "; measured "
        << date << " by apps/tune, " << o.sizes.reps << " reps, median of the slowest rank"
        << (o.simulated ? "; simulated payload" : "")
        << (o.copy_gbs > 0 ? "; " + commbench::describe_copy_model(o.copy_gbs) : "")
        << (o.sizes.arrival_skew.empty() ? "" : "; " + commbench::describe_arrival_skew(o.sizes.arrival_skew))
        << (o.sizes.synchronized_start ? "; " + commbench::describe_synchronized_start() : "")
        << "\n# command: tune";
  for (int k = 1; k < argc; ++k) table << " " << argv[k];
  table << "\n# columns: OP RANKS PPN FROM TO ALGORITHM [spread=S] [topology=tree]\n";
}

// Measures one operation's candidates and writes its comments and rows.
void tune_operation(std::ostream& table, const std::string& op, const Options& o, const libcomm::Comm& comm,
                    const std::vector<std::size_t>& sizes) {
  libcomm::require(commbench::registry().count(op) == 1, "--ops: unknown operation '" + op + "'");
  commbench::Settings settings;  // every algorithm, no fallback substitutions
  settings.no_fallback = true;
  auto operation = commbench::registry().at(op).make(comm, settings);
  const auto algos = candidates(op, *operation, comm, sizes, o.algo_list);
  if (apps::is_root())
    std::cerr << "tune: " << op << ": " << algos.size() << " algorithms x " << sizes.size() << " sizes\n";
  const Measured m =
      measure(*operation, comm, algos, sizes, o.sizes.reps, o.sizes.warmup, o.simulated, o.refine);
  // Only the all-to-all uses a switch tree (--topology attaches it to comm).
  const bool topology = op == "alltoall" && libcomm::attached_topology(comm) != nullptr;
  const int ppn = libcomm::tuning_query("", comm, 0).ppn;
  write_operation(table, op, comm, ppn, topology, operation->count_spread(), algos, m, o.up_to_largest);
}

// The flow: parse -> header -> each operation measured and written -> the table out.
int run(int argc, char** argv) {
  CLI::App app{
      "tune: time every applicable algorithm of each collective here and write the tuning table\n"
      "that `auto` reads (format: inputs/tuning/README.md). Use it through\n"
      "LIBCOMM_TUNING=FILE, or name it inputs/tuning/<platform>.tune and set\n"
      "LIBCOMM_PLATFORM=<platform> (scripts/simulate.sh does so)."};
  Options o;
  add_options(app, o);
  apps::parse_command_line(app, argc, argv);
  libcomm::set_simulated_payload(o.simulated);
  commbench::apply_copy_model(o.copy_gbs);
  libcomm::set_tuning_table(nullptr);  // auto is not measured; no table needed
  const auto sizes = commbench::block_sizes(o.sizes);
  const libcomm::Comm comm = apps::world_comm(o.sizes.nodes);
  commbench::apply_arrival_skew(o.sizes.arrival_skew, comm.rank());
  commbench::apply_synchronized_start(o.sizes.synchronized_start);

  std::ostringstream table;
  write_header(table, o, argc, argv);
  for (const auto& op : apps::split_list(o.ops, "--ops")) tune_operation(table, op, o, comm, sizes);
  if (!apps::is_root()) return 0;
  if (o.output.empty()) {
    std::cout << table.str();
  } else {
    std::ofstream out(o.output);
    libcomm::require(static_cast<bool>(out), "--output: cannot write '" + o.output + "'");
    out << table.str();
    std::cerr << "tune: wrote " << o.output << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace tune

int main(int argc, char** argv) {
  return apps::mpi_main(argc, argv, "tune", tune::run);
}
