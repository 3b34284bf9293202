// Tuning tables (libcomm/tuning.hpp): the text format, the nearest-shape lookup and the
// active table that every Auto consults before its built-in rule.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>

#include "libcomm/cost_params.hpp"
#include "libcomm/error.hpp"
#include "libcomm/operations.hpp"
#include "libcomm/settings.hpp"
#include "libcomm/topology.hpp"
#include "libcomm/tuning.hpp"

namespace libcomm {
namespace {

constexpr std::uint64_t kInf = std::numeric_limits<std::uint64_t>::max();

// "4096", "4K", "4KiB", "1M", "inf" -> bytes. Throws std::invalid_argument.
std::uint64_t parse_bytes(const std::string& s, bool allow_inf) {
  if (allow_inf && s == "inf") return kInf;
  std::size_t used = 0;
  const unsigned long long v = std::stoull(s, &used);
  if (s[0] == '-') throw std::invalid_argument("negative");
  constexpr std::pair<std::string_view, int> kUnits[] = {{"", 0},  {"B", 0},   {"K", 10},  {"KiB", 10},
                                                         {"M", 20}, {"MiB", 20}, {"G", 30}, {"GiB", 30}};  // unit, shift
  const auto unit = std::find_if(std::begin(kUnits), std::end(kUnits),
                                 [&](const auto& u) { return u.first == std::string_view(s).substr(used); });
  if (unit == std::end(kUnits)) throw std::invalid_argument("unit");
  const std::uint64_t mult = 1ULL << unit->second;
  if (v > kInf / mult) throw std::invalid_argument("overflow");
  return v * mult;
}

int parse_positive(const std::string& s) {
  std::size_t used = 0;
  const long v = std::stol(s, &used);
  if (used != s.size() || v < 1 || v > std::numeric_limits<int>::max())
    throw std::invalid_argument("range");
  return static_cast<int>(v);
}

// Runs `parse` on a field of the row at `where`; what it throws becomes an Error there:
// `message`, or with none the registries' own Error (other exceptions pass).
template <class Parse>
void parse_field(const std::string& where, const std::string& message, Parse parse) {
  try {
    parse();
  } catch (const Error& e) {
    throw Error(where + (message.empty() ? e.what() : message));
  } catch (const std::exception&) {
    if (message.empty()) throw;
    throw Error(where + message);
  }
}

double log_distance(double a, double b) { return std::abs(std::log(a / b)); }

using detail::trim;

// The "# learned-on KEY: VALUE" lines of a table, checked once the whole file is read (the
// nodes record needs the ranks record, wherever it stands).
struct RecordLines {
  LearnedOn on;
  std::string nodes;  // as written
  int nodes_line = 0, ranks_line = 0, mpi_line = 0;  // where each stands (0: not recorded)
};

constexpr std::string_view kRecordTag = "learned-on";

// When `raw` is a record line, stores it in `rec` (Error on a malformed one) and returns true.
bool parse_record_line(const std::string& raw, const std::string& where, int line_no,
                       RecordLines& rec) {
  const std::string line = trim(raw);
  if (line.empty() || line[0] != '#') return false;
  const std::string comment = trim(std::string_view(line).substr(1));
  if (comment.rfind(kRecordTag, 0) != 0) return false;
  const std::string rest = comment.substr(kRecordTag.size());
  if (!rest.empty() && rest[0] != ' ' && rest[0] != '\t')
    return false;  // "# learned-onward": a comment
  const auto colon = rest.find(':');
  if (colon == std::string::npos)
    throw Error(where +
                "a record line reads '# learned-on KEY: VALUE' (KEY ranks, nodes or mpi), got '" +
                line + "'");
  const std::string key = trim(std::string_view(rest).substr(0, colon));
  const std::string value = trim(std::string_view(rest).substr(colon + 1));
  auto once = [&](int& at) {
    if (at != 0)
      throw Error(where + "learned-on " + key + " is recorded twice (first on line " +
                  std::to_string(at) + ")");
    at = line_no;
  };
  if (key == "ranks") {
    once(rec.ranks_line);
    parse_field(where, "learned-on ranks must be a positive integer, got '" + value + "'",
                [&] { rec.on.ranks = parse_positive(value); });
  } else if (key == "nodes") {
    once(rec.nodes_line);
    if (value.rfind("sizes=", 0) != 0 && value.rfind("map=", 0) != 0)
      throw Error(where + "learned-on nodes must be a node layout 'sizes=...' or 'map=...', got '" +
                  value + "'");
    rec.nodes = value;
  } else if (key == "mpi") {
    once(rec.mpi_line);
    if (value.empty()) throw Error(where + "learned-on mpi is empty");
    rec.on.mpi = value;
  } else {
    throw Error(where + "unknown record 'learned-on " + key + "' (valid: ranks, nodes, mpi)");
  }
  return true;
}

// The record of a whole table, or nullopt when it has none.
std::optional<LearnedOn> finish_record(RecordLines& rec, const std::string& source) {
  if (rec.ranks_line == 0 && rec.nodes_line == 0 && rec.mpi_line == 0) return std::nullopt;
  if (rec.nodes_line != 0) {
    const std::string where = source + ":" + std::to_string(rec.nodes_line) + ": ";
    if (rec.ranks_line == 0) throw Error(where + "learned-on nodes needs a learned-on ranks line");
    try {
      rec.on.nodes = node_layout_spec(NodeMap::from_spec(rec.nodes, rec.on.ranks));
    } catch (const Error& e) {
      throw Error(where + "learned-on nodes: " + e.what());
    }
  }
  return rec.on;
}

}  // namespace

std::string node_layout_spec(const NodeMap& nodes) {
  const auto& node_of = nodes.node_of_rank();
  if (node_of.empty()) return {};
  const bool blocks = std::is_sorted(node_of.begin(), node_of.end());
  std::string spec = blocks ? "sizes=" : "map=";
  const std::vector<int> values = blocks ? nodes.node_sizes() : node_of;
  for (std::size_t k = 0; k < values.size(); ++k)
    spec += (k == 0 ? "" : ",") + std::to_string(values[k]);
  return spec;
}

std::string mpi_library_version() {
  static const std::string version = [] {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    if (MPI_Get_library_version(text, &len) != MPI_SUCCESS || len <= 0) return std::string();
    // (Open MPI counts the terminating zero in len.)
    const auto n = static_cast<std::size_t>(std::min(len, MPI_MAX_LIBRARY_VERSION_STRING));
    const std::string_view v(text, ::strnlen(text, n));
    return trim(v.substr(0, v.find('\n')));
  }();
  return version;
}

std::string learned_on_text(const LearnedOn& on) {
  std::string text;
  if (on.ranks > 0)
    text += "# " + std::string(kRecordTag) + " ranks: " + std::to_string(on.ranks) + "\n";
  if (!on.nodes.empty()) text += "# " + std::string(kRecordTag) + " nodes: " + on.nodes + "\n";
  if (!on.mpi.empty()) text += "# " + std::string(kRecordTag) + " mpi: " + on.mpi + "\n";
  return text;
}

std::optional<LearnedMismatch> learned_on_mismatch(const LearnedOn& table, const LearnedOn& run) {
  if (!table.mpi.empty() && !run.mpi.empty() && table.mpi != run.mpi)
    return LearnedMismatch{"mpi", table.mpi, run.mpi};
  if (table.ranks > 0 && run.ranks > 0 && table.ranks != run.ranks)
    return LearnedMismatch{"ranks", std::to_string(table.ranks), std::to_string(run.ranks)};
  if (!table.nodes.empty() && !run.nodes.empty() && table.nodes != run.nodes)
    return LearnedMismatch{"nodes", table.nodes, run.nodes};
  return std::nullopt;
}

TuningTable TuningTable::parse(std::istream& in, const std::string& source) {
  TuningTable t;
  t.source_ = source;
  std::string raw;
  int line_no = 0;
  RecordLines record;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    if (parse_record_line(raw, where, line_no, record)) continue;
    const std::string text = raw.substr(0, raw.find('#'));
    std::istringstream fields(text);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.empty()) continue;
    if (f.size() < 6)
      throw Error(where + "expected OP RANKS PPN FROM TO ALGORITHM, got " +
                  std::to_string(f.size()) + " field(s)");
    TuningRow row;
    row.line = line_no;
    row.op = f[0];
    parse_field(where, "", [&] { operation_named(row.op); });
    parse_field(where, "RANKS must be a positive integer, got '" + f[1] + "'",
                [&] { row.ranks = parse_positive(f[1]); });
    parse_field(where, "PPN must be a positive integer, got '" + f[2] + "'", [&] { row.ppn = parse_positive(f[2]); });
    parse_field(where,
                "FROM and TO must be byte counts (e.g. 512, 4K, 1MiB; TO may be inf), got '" + f[3] + "' and '" +
                    f[4] + "'",
                [&] { row.from = parse_bytes(f[3], false), row.to = parse_bytes(f[4], true); });
    if (row.from > row.to) throw Error(where + "FROM " + f[3] + " is larger than TO " + f[4]);
    row.algo = f[5];
    parse_field(where, "", [&] {  // (the registries' Error for an unknown algorithm)
      if (row.algo == "auto") throw Error("'auto' cannot be a table entry (it is what the table decides)");
      algorithm_of(row.op, row.algo);
    });
    for (std::size_t k = 6; k < f.size(); ++k) {
      if (f[k].rfind("spread=", 0) == 0) {
        parse_field(where, "spread must be a number >= 1 (max / mean message), got '" + f[k] + "'", [&] {
          std::size_t used = 0;
          row.spread = std::stod(f[k].substr(7), &used);
          if (used != f[k].size() - 7 || !(row.spread >= 1.0)) throw std::invalid_argument("range");
        });
      } else if (f[k] == "topology=tree") {
        row.topology = true;
      } else {
        throw Error(where + "unknown field '" + f[k] + "' (valid: spread=S, topology=tree)");
      }
    }
    // Two rows of one shape must not claim the same size.
    for (const auto& o : t.rows_)
      if (o.op == row.op && o.ranks == row.ranks && o.ppn == row.ppn && o.spread == row.spread &&
          o.topology == row.topology && row.from <= o.to && o.from <= row.to)
        throw Error(where + "size range overlaps line " + std::to_string(o.line) + " of the same " +
                    row.op + " shape");
    t.rows_.push_back(std::move(row));
  }
  t.learned_on_ = finish_record(record, source);
  return t;
}

TuningTable TuningTable::load(const std::string& path) {
  std::ifstream in(path);
  require(static_cast<bool>(in), "tuning table: cannot read '" + path + "'");
  return parse(in, path);
}

namespace {
// The nearest measured shape to q among the rows of q.op, compared lexicographically
// (rank count, ranks per node, topology, then spread unless `with_spread` is false);
// strict '<' keeps the first (smallest, as tables list shapes in increasing order) of
// equally near shapes. nullptr when the table has no row for the operation.
const TuningRow* nearest_shape(const std::vector<TuningRow>& rows, const TuningQuery& q,
                               bool with_spread) {
  const TuningRow* shape = nullptr;
  auto key = [&](const TuningRow& r) {
    return std::array<double, 4>{
        log_distance(r.ranks, std::max(q.ranks, 1)), log_distance(r.ppn, std::max(q.ppn, 1)),
        r.topology == q.topology ? 0.0 : 1.0,
        with_spread ? log_distance(r.spread, std::max(q.spread, 1.0)) : 0.0};
  };
  // Rows measured with one rank per node say nothing about nodes of several ranks, and
  // the other way round: the inter-node step of a hierarchical scheme (one rank per node)
  // must not take rows measured on the whole multi-rank machine, as tune, which measures
  // without a table, never ran it that way.
  const bool one_per_node = q.ppn <= 1;
  for (const auto& r : rows) {
    if (r.op != q.op || (r.ppn == 1) != one_per_node) continue;
    if (shape == nullptr || key(r) < key(*shape) ||
        (key(r) == key(*shape) && r.ranks < shape->ranks))
      shape = &r;
  }
  return shape;
}
}  // namespace

std::optional<TuningPick> TuningTable::lookup(const TuningQuery& q) const {
  const TuningRow* shape = nearest_shape(rows_, q, true);
  if (shape == nullptr) return std::nullopt;
  for (const auto& r : rows_) {
    if (r.op != q.op || r.ranks != shape->ranks || r.ppn != shape->ppn ||
        r.topology != shape->topology || r.spread != shape->spread)
      continue;
    if (q.bytes < r.from || q.bytes > r.to) continue;
    std::string reason = "tuning table " + source_ + " line " + std::to_string(r.line) + " (" +
                         std::to_string(r.ranks) + " ranks, ppn " + std::to_string(r.ppn);
    if (r.op == "alltoallv") {
      std::ostringstream s;
      s << ", spread " << r.spread;
      reason += s.str();
    }
    if (r.topology) reason += ", switch tree";
    reason += ", " + std::to_string(r.from) + ".." + (r.to == kInf ? "inf" : std::to_string(r.to)) +
              " B)";
    if (r.ranks != q.ranks || r.ppn != q.ppn)
      reason += " nearest to P = " + std::to_string(q.ranks) + ", ppn " + std::to_string(q.ppn);
    return TuningPick{r.algo, reason};
  }
  return std::nullopt;
}

namespace {
// The active table and the check of its record. g_mutex guards everything but the epoch.
std::mutex g_mutex;
bool g_loaded = false;
std::shared_ptr<const TuningTable> g_table;
bool g_record_checked = false;           // a learned g_table's mpi and ranks records match this run
bool g_layout_checked = false;           // and its nodes record (or it has none)
std::optional<std::string> g_run_nodes;  // note_run_layout's layout
std::atomic<std::uint64_t> g_epoch{0};

bool mpi_running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

// Loads the environment's table at the first call (g_mutex held). A failed load is reported
// once and leaves no table behind.
void load_locked() {
  if (g_loaded) return;
  g_loaded = true;
  g_record_checked = g_layout_checked = false;
  const SettingsFile file = settings_file(Setting::Tuning, ".tune");
  if (!file.named && file.path.empty()) return;
  try {
    g_table = std::make_shared<const TuningTable>(TuningTable::load(file.path));
  } catch (const Error& e) {
    if (!file.named) throw;
    throw Error(std::string("LIBCOMM_TUNING: ") + e.what());
  }
}

// A learned g_table that does not match this run goes, with one warning from world rank 0.
void refuse_locked(const LearnedMismatch& m) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::fprintf(stderr,
                 "libcomm: warning: tuning table '%s' not used: it was learned with %s '%s', this "
                 "run has %s '%s' "
                 "(a learned table applies only to a run like the one it was learned on)\n",
                 g_table->source().c_str(), m.field.c_str(), m.table_value.c_str(), m.field.c_str(),
                 m.run_value.c_str());
    std::fflush(stderr);
  }
  // (No new epoch: no decision used the table before it was checked, so none remembered
  // under this one is stale. The epoch changes only with set_tuning_table, which every rank
  // calls alike; a verdict is reached on one rank's first call that asks, not on every rank
  // at once, so it must not drop remembered decisions.)
  g_table = nullptr;
}

// Checks what can be checked of a learned g_table's record (g_mutex held): nothing before
// MPI_Init; the MPI library and MPI_COMM_WORLD's size after; the node layout once known
// (note_run_layout, or `comm` when it spans MPI_COMM_WORLD). Each input is the same on every
// rank, so every rank comes to the same verdict.
void check_locked(const Comm* comm) {
  if (!g_table || !g_table->learned_on() || (g_record_checked && g_layout_checked) ||
      !mpi_running())
    return;
  const LearnedOn& recorded = *g_table->learned_on();
  LearnedOn run;
  run.mpi = mpi_library_version();
  MPI_Comm_size(MPI_COMM_WORLD, &run.ranks);
  if (recorded.nodes.empty()) {
    g_layout_checked = true;
  } else if (g_run_nodes) {
    run.nodes = *g_run_nodes;
  } else if (comm != nullptr && comm->size() == run.ranks) {
    run.nodes = node_layout_spec(comm->nodes());
  }
  if (const auto mismatch = learned_on_mismatch(recorded, run)) {
    refuse_locked(*mismatch);
    return;
  }
  g_record_checked = true;
  if (!run.nodes.empty()) g_layout_checked = true;
}

// The table after loading it and checking its record (with `comm`'s layout when given);
// `usable`: the table a decision may use, none while a learned table is not checked.
std::shared_ptr<const TuningTable> checked_table(const Comm* comm, bool usable) {
  std::lock_guard<std::mutex> lock(g_mutex);
  load_locked();
  check_locked(comm);
  if (usable && g_table && g_table->learned_on() && !(g_record_checked && g_layout_checked)) return nullptr;
  return g_table;
}
}  // namespace

std::shared_ptr<const TuningTable> active_tuning_table() { return checked_table(nullptr, false); }

std::shared_ptr<const TuningTable> tuning_table_for(const Comm& comm) { return checked_table(&comm, true); }

void note_run_layout(const Comm& comm) {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  require(comm.size() == world,
          "note_run_layout: the communicator has " + std::to_string(comm.size()) +
              " ranks, MPI_COMM_WORLD " + std::to_string(world) +
              ": the run's layout is that of a communicator spanning MPI_COMM_WORLD");
  std::lock_guard<std::mutex> lock(g_mutex);
  g_run_nodes = node_layout_spec(comm.nodes());
  if (g_loaded) check_locked(nullptr);
}

void set_tuning_table(std::shared_ptr<const TuningTable> table) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_loaded = true;
  if (table != g_table) g_record_checked = g_layout_checked = false;
  g_table = std::move(table);
  g_epoch.fetch_add(1, std::memory_order_acq_rel);
}

std::uint64_t tuning_table_epoch() {
  return g_epoch.load(std::memory_order_acquire);
}

TuningQuery tuning_query(std::string op, const Comm& comm, std::uint64_t bytes) {
  TuningQuery q;
  q.op = std::move(op);
  q.ranks = comm.size();
  q.ppn = 1;
  for (int n = 0; n < comm.nodes().num_nodes(); ++n)
    q.ppn = std::max(q.ppn, comm.nodes().node_size(n));
  q.bytes = bytes;
  q.topology = attached_topology(comm) != nullptr;
  return q;
}

std::vector<std::size_t> fastest_at_each_size(const char* who,
                                              const std::vector<std::uint64_t>& sizes,
                                              const std::vector<std::vector<double>>& times) {
  const std::size_t K = sizes.size(), A = times.size();
  const std::string name(who);
  require(K > 0 && A > 0, name + ": no sizes or no algorithms");
  for (std::size_t a = 0; a < A; ++a)
    require(times[a].size() == K, name + ": algorithm " + std::to_string(a) + " has " +
                                      std::to_string(times[a].size()) + " times for " +
                                      std::to_string(K) + " sizes");
  for (std::size_t k = 1; k < K; ++k)
    require(sizes[k] > sizes[k - 1], name + ": sizes must increase (" +
                                         std::to_string(sizes[k - 1]) + " then " +
                                         std::to_string(sizes[k]) + ")");
  std::vector<std::size_t> winner(K);
  for (std::size_t k = 0; k < K; ++k) {
    std::size_t best = A;
    for (std::size_t a = 0; a < A; ++a)
      if (std::isfinite(times[a][k]) && (best == A || times[a][k] < times[best][k])) best = a;
    require(best < A, name + ": no algorithm ran at " + std::to_string(sizes[k]) + " bytes");
    winner[k] = best;
  }
  return winner;
}

std::vector<std::uint64_t> refinement_sizes(const std::vector<std::uint64_t>& sizes,
                                            const std::vector<std::vector<double>>& times) {
  const auto winner = fastest_at_each_size("refinement_sizes", sizes, times);
  std::vector<std::uint64_t> out;
  for (std::size_t k = 0; k + 1 < sizes.size(); ++k) {
    if (winner[k] == winner[k + 1]) continue;
    const double mid = std::sqrt(static_cast<double>(sizes[k]) * static_cast<double>(sizes[k + 1]));
    const std::uint64_t m = static_cast<std::uint64_t>(mid) / 8 * 8;
    if (m > sizes[k] && m < sizes[k + 1]) out.push_back(m);
  }
  return out;
}

std::vector<TunedRange> tuned_ranges(const std::vector<std::uint64_t>& sizes,
                                     const std::vector<std::vector<double>>& times) {
  const std::size_t K = sizes.size(), A = times.size();
  const auto winner = fastest_at_each_size("tuned_ranges", sizes, times);
  auto ran = [&](std::size_t a, std::size_t k) { return std::isfinite(times[a][k]); };
  // Switches: (last size of the old algorithm, new algorithm), in size order.
  std::vector<std::pair<std::uint64_t, std::size_t>> switches;
  for (std::size_t k = 0; k + 1 < K; ++k) {
    const double x0 = static_cast<double>(sizes[k]), x1 = static_cast<double>(sizes[k + 1]);
    // The lower envelope of the lines of the algorithms that ran at both ends, walked from
    // x0: from the current line, go to the line that crosses it first (below it after).
    std::size_t cur = winner[k];
    double x = x0;
    auto slope = [&](std::size_t a) { return (times[a][k + 1] - times[a][k]) / (x1 - x0); };
    if (ran(cur, k + 1)) {
      for (;;) {
        std::size_t next = A;
        double cross = x1;
        for (std::size_t a = 0; a < A; ++a) {
          if (a == cur || !ran(a, k) || !ran(a, k + 1) || slope(a) >= slope(cur)) continue;
          // times[a][k] + slope(a) (s - x0) = times[cur][k] + slope(cur) (s - x0)
          const double s = x0 + (times[a][k] - times[cur][k]) / (slope(cur) - slope(a));
          if (s > x && (s < cross || (s == cross && next < A && slope(a) < slope(next))))
            next = a, cross = s;
        }
        if (next == A || cross >= x1) break;
        // Sizes up to floor(cross) stay with cur; a measured size keeps its measured winner.
        const auto last = static_cast<std::uint64_t>(std::floor(cross));
        switches.emplace_back(std::clamp(last, sizes[k], sizes[k + 1] - 1), next);
        cur = next, x = cross;
      }
    }
    if (cur != winner[k + 1]) {  // a tie at x1, or winner[k] has no line (it did not run at x1)
      const auto last = ran(winner[k], k + 1)
                            ? sizes[k + 1] - 1
                            : static_cast<std::uint64_t>(std::sqrt(x0 * x1));  // no line: halfway
      switches.emplace_back(std::clamp(last, sizes[k], sizes[k + 1] - 1), winner[k + 1]);
    }
  }
  std::vector<TunedRange> out{{0, kInf, winner[0]}};
  for (const auto& [last, algo] : switches) {
    if (algo == out.back().algo) continue;
    if (last < out.back().from) {  // two switches at one size: the later one takes it
      out.back().algo = algo;
      if (out.size() > 1 && out[out.size() - 2].algo == algo) out.pop_back(), out.back().to = kInf;
      continue;
    }
    out.back().to = last;
    out.push_back({last + 1, kInf, algo});
  }
  return out;
}

std::optional<TuningPick> tuned_choice(const TuningQuery& q) {
  const auto table = checked_table(nullptr, true);
  if (!table) return std::nullopt;
  return table->lookup(q);
}

}  // namespace libcomm
