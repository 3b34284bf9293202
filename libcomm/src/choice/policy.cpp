// The Auto policies (policy.hpp): the model's cheapest prediction, the tuning table's row,
// and the online policy's measured sites.
#include "policy.hpp"

#include <algorithm>
#include <bit>
#include <iomanip>
#include <limits>
#include <mutex>
#include <numeric>
#include <sstream>

#include "../runtime/messages.hpp"
#include "../runtime/mpi_bytes.hpp"
#include "libcomm/error.hpp"
#include "libcomm/settings.hpp"
#include "libcomm/tuning.hpp"

namespace libcomm::detail {

namespace {

std::string seconds_text(double s) {
  std::ostringstream o;
  o << std::setprecision(3);
  if (s < 1e-3) o << s * 1e6 << " us";
  else o << s * 1e3 << " ms";
  return o.str();
}

std::string bytes_text(std::uint64_t b) {
  if (b >= (1ULL << 20) && b % (1ULL << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

const Candidate* find_candidate(const AutoQuestion& q, std::string_view name) {
  for (const Candidate& c : q.candidates)
    if (c.name == name) return &c;
  return nullptr;
}

// Cheapest first; ties: ours before native, then registry order. Native's formula is a
// guess at which of the same algorithms the MPI library picks (its decision rules, where
// known); an algorithm of ours predicted at the same cost runs what was predicted.
bool cheaper(const Candidate& a, const Candidate& b, int native) {
  if (a.predicted != b.predicted) return a.predicted < b.predicted;
  if ((a.algo == native) != (b.algo == native)) return b.algo == native;
  return a.algo < b.algo;
}

}  // namespace

AutoAnswer model_answer(const AutoQuestion& q) {
  require(!q.candidates.empty(), [&] { return std::string(q.op) + ": internal error: no candidate for auto"; });
  std::vector<const Candidate*> order;
  for (const Candidate& c : q.candidates) order.push_back(&c);
  std::sort(order.begin(), order.end(), [&](const Candidate* a, const Candidate* b) { return cheaper(*a, *b, q.native); });
  const Candidate& best = *order[0];
  std::string reason = "auto (model): " + std::string(best.name) + " predicted " + seconds_text(best.predicted);
  if (order.size() > 1)
    reason += ", next " + std::string(order[1]->name) + " " + seconds_text(order[1]->predicted);
  reason += " at " + bytes_text(q.bytes);
  return {best.algo, reason};
}

std::optional<AutoAnswer> table_answer(const AutoQuestion& q, std::string& why_not) {
  if (q.comm == nullptr) {
    why_not = "no communicator to look up";
    return std::nullopt;
  }
  const auto table = tuning_table_for(*q.comm);
  if (!table) {
    // (a learned table not yet checked against this run's node layout: README, "Tuning")
    why_not = active_tuning_table() ? "learned tuning table not checked yet" : "no tuning table";
    return std::nullopt;
  }
  TuningQuery tq = tuning_query(std::string(q.op), *q.comm, q.bytes);
  tq.spread = q.spread;
  const auto pick = table->lookup(tq);
  if (!pick) {
    why_not = "no tuning table row";
    return std::nullopt;
  }
  const Candidate* c = find_candidate(q, pick->algo);
  if (c == nullptr) {
    why_not = "the table's " + pick->algo + " cannot run here or is no candidate for auto";
    return std::nullopt;
  }
  return AutoAnswer{c->algo, "auto (table): " + pick->algo + " from " + pick->reason};
}

std::optional<AutoAnswer> exact_table_answer(const AutoQuestion& q) {
  const auto table = q.comm != nullptr ? tuning_table_for(*q.comm) : nullptr;
  if (!table) return std::nullopt;
  const TuningQuery tq = tuning_query(std::string(q.op), *q.comm, q.bytes);
  for (const TuningRow& r : table->rows()) {
    if (r.op != q.op || r.ranks != tq.ranks || r.ppn != tq.ppn || r.topology != tq.topology) continue;
    if (q.bytes < r.from || q.bytes > r.to) continue;
    const Candidate* c = find_candidate(q, r.algo);
    if (c == nullptr) continue;
    return AutoAnswer{c->algo, "auto (online): " + r.algo + " from " + table->source() + " line " +
                                   std::to_string(r.line) + " (learned for this shape, not measured again)"};
  }
  return std::nullopt;
}

OnlineSite::OnlineSite(std::vector<Candidate> candidates, int reps, int wait, int native) : wait_(wait) {
  prepare(std::move(candidates), reps, native);
}

int size_class(std::uint64_t bytes) { return bytes <= 1 ? 0 : std::bit_width(bytes - 1); }
std::uint64_t size_class_first(int k) { return k == 0 ? 0 : (std::uint64_t{1} << (k - 1)) + 1; }
std::uint64_t size_class_last(int k) {
  return k >= 64 ? std::numeric_limits<std::uint64_t>::max() : std::uint64_t{1} << k;
}

void OnlineSite::prepare(std::vector<Candidate> candidates, int reps, int native) {
  require(!candidates.empty(), "online: internal error: no candidate to measure");
  candidates_ = std::move(candidates);
  reps_ = reps;
  native_ = native;
  best_.assign(candidates_.size(), std::numeric_limits<double>::infinity());
}

bool OnlineSite::record(double seconds) {
  const std::size_t k = static_cast<std::size_t>(calls_) % candidates_.size();
  if (static_cast<std::size_t>(calls_) >= candidates_.size()) best_[k] = std::min(best_[k], seconds);
  ++calls_;
  return calls_ >= calls_needed();
}

void OnlineSite::agree(MPI_Comm comm) {
  agreed_.assign(best_.size(), 0.0);
  const int n = static_cast<int>(best_.size());
  run_agreement(
      comm, "auto", "the agreement on the online policy's winner", "MPI_Allreduce",
      [&] { return MPI_Allreduce(best_.data(), agreed_.data(), n, MPI_DOUBLE, MPI_MAX, comm); },
      [&](MPI_Request* r) { return MPI_Iallreduce(best_.data(), agreed_.data(), n, MPI_DOUBLE, MPI_MAX, comm, r); });
  // The fastest; ties: the earlier (native first).
  const auto fastest = static_cast<std::size_t>(std::min_element(agreed_.begin(), agreed_.end()) - agreed_.begin());
  // Native keeps the site unless the fastest beats it by the margin.
  std::size_t win = fastest;
  for (std::size_t k = 0; k < candidates_.size(); ++k)
    if (candidates_[k].algo == native_ && k != win && agreed_[win] > agreed_[k] * (1 - online_margin())) win = k;
  winner_ = candidates_[win].algo;
  std::ostringstream why;
  if (win != fastest) {
    why << "auto (online): native kept, " << seconds_text(agreed_[win]) << ": the fastest, "
        << candidates_[fastest].name << " " << seconds_text(agreed_[fastest]) << ", is not "
        << online_margin() * 100 << " % faster (LIBCOMM_ONLINE_MARGIN)";
  } else {
    why << "auto (online): " << candidates_[win].name << " measured fastest, " << seconds_text(agreed_[win]);
    std::size_t second = win == 0 && agreed_.size() > 1 ? 1 : 0;
    for (std::size_t k = 0; k < agreed_.size(); ++k)
      if (k != win && agreed_[k] < agreed_[second]) second = k;
    if (second != win) why << ", next " << candidates_[second].name << " " << seconds_text(agreed_[second]);
  }
  why << " (" << candidates_.size() << " candidates, " << reps_ << " timed runs each after one untimed, slowest rank)";
  reason_ = why.str();
}

void OnlineSite::settle(int algo, std::string reason) {
  winner_ = algo;
  reason_ = std::move(reason);
}

int online_reps() { return static_cast<int>(setting_count(Setting::OnlineReps)); }

int online_reps_for(std::uint64_t bytes) {
  return setting_is_set(Setting::OnlineReps) || bytes > kSmallDecisionBytes ? online_reps() : 4 * online_reps();
}

int online_after() { return static_cast<int>(setting_count(Setting::OnlineAfter)); }
double online_margin() { return setting_number(Setting::OnlineMargin); }

std::vector<Candidate> online_candidates(const AutoQuestion& q, bool one_node) {
  std::vector<Candidate> sorted = q.candidates;
  std::sort(sorted.begin(), sorted.end(), [&](const Candidate& a, const Candidate& b) { return cheaper(a, b, q.native); });
  std::vector<Candidate> out;
  if (const Candidate* native = find_candidate(q, "native")) out.push_back(*native);
  // Where the ranks share one node, the algorithms through its shared memory.
  if (one_node)
    for (const Candidate& c : sorted)
      if (c.node_memory && c.algo != q.native) out.push_back(c);
  const int limit = static_cast<int>(setting_count(Setting::OnlineCandidates));  // 0: all
  int taken = 0;
  for (const Candidate& c : sorted) {
    if (limit > 0 && taken >= limit) break;
    if (std::any_of(out.begin(), out.end(), [&](const Candidate& o) { return o.algo == c.algo; })) continue;
    out.push_back(c);
    ++taken;
  }
  return out;
}

namespace {
std::mutex g_learned_mutex;
std::vector<LearnedRow> g_learned;

std::string learned_rows_text(const std::vector<LearnedRow>& rows) {
  std::ostringstream out;
  out << "# libcomm tuning table learned by auto's online policy (LIBCOMM_AUTO=online):\n"
      << "# the winner of each measured size class; a later run starts from it with LIBCOMM_TUNING.\n";
  for (const LearnedRow& r : rows) {
    out << "# " << r.comment << "\n"
        << r.op << " " << r.ranks << " " << r.ppn << " " << r.from << " " << r.to << " " << r.algo
        << (r.topology ? " topology=tree" : "") << "\n";
  }
  return out.str();
}
}  // namespace

void record_learned(LearnedRow row) {
  std::lock_guard lock(g_learned_mutex);
  for (LearnedRow& r : g_learned)
    if (r.op == row.op && r.ranks == row.ranks && r.ppn == row.ppn && r.topology == row.topology &&
        r.from == row.from && r.to == row.to) {
      r = std::move(row);
      return;
    }
  g_learned.push_back(std::move(row));
}

}  // namespace libcomm::detail

namespace libcomm {

std::string learned_tuning_table() {
  std::lock_guard lock(detail::g_learned_mutex);
  return detail::learned_rows_text(detail::g_learned);
}

void save_learned_tuning_table(const std::string& path, const Comm& comm) {
  const std::string mine = learned_tuning_table();
  const int p = comm.size();
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
  detail::check_mpi(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm.internal()), "MPI_Gather");
  std::exclusive_scan(lens.begin(), lens.end(), displs.begin(), 0);
  const int total = displs.back() + lens.back();
  std::string all(static_cast<std::size_t>(comm.rank() == 0 ? total : 0), '\0');
  detail::check_mpi(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0,
                                comm.internal()),
                    "MPI_Gatherv");
  std::string failure;  // rank 0's, for every rank
  if (comm.rank() == 0) {
    try {
      // What the rows were learned on, for the check of a later run that loads them
      // (active_tuning_table): the run's rank count and MPI library, and the node layout
      // when comm spans the run (a sub-communicator's layout is not the run's).
      LearnedOn on;
      on.mpi = mpi_library_version();
      detail::check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &on.ranks), "MPI_Comm_size");
      if (comm.size() == on.ranks) on.nodes = node_layout_spec(comm.nodes());
      // Each row once (every rank 0 of a communicator learned its own), its comment with it.
      const std::string header = detail::learned_rows_text({});
      std::istringstream lines(all);
      std::ostringstream out;
      out << header << "# What it was learned on: a run of another rank count, node layout or MPI library\n"
          << "# does not use it (README, \"Tuning\").\n"
          << learned_on_text(on);
      std::vector<std::string> seen;
      std::string comment;
      for (std::string line; std::getline(lines, line);) {
        if (header.find(line + "\n") != std::string::npos) continue;
        if (line.rfind("#", 0) == 0) {
          comment = line;
        } else if (std::find(seen.begin(), seen.end(), line) == seen.end()) {
          seen.push_back(line);
          out << comment << "\n" << line << "\n";
        }
      }
      write_tuning_table_file(path, out.str());
    } catch (const std::exception& e) {  // (every rank must reach the broadcast below)
      failure = e.what();
      if (failure.empty()) failure = "cannot write '" + path + "'";
    }
  }
  int failure_len = static_cast<int>(failure.size());
  detail::check_mpi(MPI_Bcast(&failure_len, 1, MPI_INT, 0, comm.internal()), "MPI_Bcast");
  failure.resize(static_cast<std::size_t>(failure_len));
  detail::check_mpi(MPI_Bcast(failure.data(), failure_len, MPI_CHAR, 0, comm.internal()), "MPI_Bcast");
  require(failure.empty(), "save_learned_tuning_table: " + failure);
}

}  // namespace libcomm
