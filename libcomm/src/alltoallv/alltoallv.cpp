// Dispatcher of the irregular all-to-all: names, modes, the Auto choice, the collective
// argument check, statistics. The algorithms live one per file next to this one.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <limits>
#include <set>

#include "../core/algorithm_table.hpp"
#include "../core/check.hpp"
#include "../core/mpi_bytes.hpp"
#include "../core/comm_cache.hpp"
#include "../core/plan_state.hpp"
#include "../tuning/table_choice.hpp"
#include "alltoallv_internal.hpp"
#include "libcomm/tuning.hpp"

namespace libcomm {

const std::vector<AlltoallvAlgoInfo>& alltoallv_algorithms() {
  static const std::vector<AlltoallvAlgoInfo> all = {
      {AlltoallvAlgo::Auto, "auto",
       "tuning table (LIBCOMM_TUNING), else four_stage when 4 ceil(sqrt P) + 2 < P (fewer start-ups, paper 001 Table 3), else direct"},
      {AlltoallvAlgo::Native, "native", "the MPI library's MPI_Alltoallv (reference)"},
      {AlltoallvAlgo::Direct, "direct",
       "A1: P steps, step k sends to (me + k) % P (paper 001, s. 3.1.1)"},
      {AlltoallvAlgo::TwoStage, "two_stage",
       "A2: messages sliced evenly over P nodes by a counter scan, two all-to-all stages (s. "
       "3.1.2)"},
      {AlltoallvAlgo::Mesh, "mesh",
       "A3: row combine then column deliver on a sqrt(P) x sqrt(P) mesh; perfect squares only (s. "
       "3.1.3)"},
      {AlltoallvAlgo::FourStage, "four_stage",
       "A4: four balanced stages on ceil(sqrt P) columns, any P (pseudo-nodes, stalls; s. 3.2)"},
  };
  return all;
}

std::string_view alltoallv_algo_name(AlltoallvAlgo a) { return detail::name_in(alltoallv_algorithms(), a); }

AlltoallvAlgo alltoallv_algo_from_name(std::string_view name) {
  return detail::algorithm_in(alltoallv_algorithms(), name, "alltoallv");
}

AlltoallvAlgo alltoallv_algo_from_env(AlltoallvAlgo fallback) {
  return detail::algorithm_from_env(alltoallv_algorithms(), "LIBCOMM_ALLTOALLV", fallback, "alltoallv");
}

std::string_view alltoallv_mode_name(AlltoallvMode m) {
  switch (m) {
    case AlltoallvMode::Blocking:
      return "b";
    case AlltoallvMode::NonblockingSingle:
      return "n1";
    case AlltoallvMode::NonblockingDual:
      return "n2";
  }
  return "?";
}

AlltoallvMode alltoallv_mode_from_name(std::string_view name) {
  if (name == "b" || name == "blocking") return AlltoallvMode::Blocking;
  if (name == "n1" || name == "nonblocking_single") return AlltoallvMode::NonblockingSingle;
  if (name == "n2" || name == "nonblocking_dual") return AlltoallvMode::NonblockingDual;
  throw Error("unknown alltoallv mode '" + std::string(name) +
              "' (valid: b, blocking, n1, nonblocking_single, n2, nonblocking_dual)");
}

int AlltoallvStats::startups() const {
  int n = 0;
  for (const auto& s : stages) n += s.messages_sent;
  return n;
}
std::uint64_t AlltoallvStats::peak_buffer_bytes() const {
  std::uint64_t m = 0;
  for (const auto& s : stages) m = std::max(m, s.peak_buffer_bytes);
  return m;
}
std::uint64_t AlltoallvStats::max_send_buffer() const {
  std::uint64_t m = 0;
  for (const auto& s : stages) m = std::max(m, s.send_buffer_bytes);
  return m;
}
std::uint64_t AlltoallvStats::max_recv_buffer() const {
  std::uint64_t m = 0;
  for (const auto& s : stages) m = std::max(m, s.recv_buffer_bytes);
  return m;
}

int StagedSchedule::total_steps() const {
  int n = 0;
  for (const auto& s : stages) n += static_cast<int>(s.rounds.size());
  return n;
}

AlltoallvAlgo choose_alltoallv(AlltoallvAlgo requested, int p) {
  if (requested != AlltoallvAlgo::Auto) return requested;
  return 4 * detail::ceil_sqrt(p) + 2 < p ? AlltoallvAlgo::FourStage : AlltoallvAlgo::Direct;
}

AlltoallvChoice choose_alltoallv(AlltoallvAlgo requested, int p, const AlltoallvOptions& opts) {
  if (requested == AlltoallvAlgo::Mesh && detail::exact_sqrt(p) == 0) {
    require(opts.allow_fallback, [&] {
      return "alltoallv: mesh needs a perfect-square number of ranks (a sqrt(P) x sqrt(P) mesh), P = " +
             std::to_string(p) + " (fallback disabled; four_stage runs on any P)";
    });
    return {AlltoallvAlgo::FourStage, "mesh needs a perfect-square P, P = " + std::to_string(p) +
                                          ": ran four_stage instead (A4 runs on any P)"};
  }
  if (requested != AlltoallvAlgo::Auto) return AlltoallvChoice::requested(requested);
  return {choose_alltoallv(requested, p), "auto: the start-up rule"};
}

AlltoallvCountStats alltoallv_count_stats(std::span<const std::int64_t> counts, int p) {
  require(counts.size() == static_cast<std::size_t>(p) * static_cast<std::size_t>(p),
          "alltoallv_count_stats: the count matrix has " + std::to_string(counts.size()) +
              " entries, P x P = " + std::to_string(static_cast<long long>(p) * p));
  AlltoallvCountStats st;
  double total = 0;
  for (auto c : counts) {
    st.max_bytes = std::max<std::uint64_t>(st.max_bytes, static_cast<std::uint64_t>(c));
    total += static_cast<double>(c);
  }
  st.mean_bytes = counts.empty() ? 0 : total / static_cast<double>(counts.size());
  return st;
}

namespace {
// MPI_Op of alltoallv_count_stats over pairs of doubles: max of the first, sum of the second.
void combine_max_and_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const double*>(in);
  auto* b = static_cast<double*>(inout);
  for (int i = 0; i < *len; ++i) {
    b[2 * i] = std::max(a[2 * i], b[2 * i]);
    b[2 * i + 1] += a[2 * i + 1];
  }
}
}  // namespace

AlltoallvCountStats alltoallv_count_stats(std::span<const std::int64_t> sendcounts, const Comm& comm) {
  // [longest message, total bytes] over all ranks; doubles keep the sum exact enough
  // for a ratio and cannot overflow.
  std::array<double, 2> v = {0, 0};
  for (auto c : sendcounts) {
    const auto bytes = static_cast<double>(c);
    v[0] = std::max(v[0], bytes);
    v[1] += bytes;
  }
  // One MPI_Allreduce over a (max, sum) pair type with its own operation: half the
  // latency of a MAX and a SUM call.
  std::array<double, 2> g = {0, 0};
  MPI_Datatype pair = MPI_DATATYPE_NULL;
  MPI_Op max_and_sum = MPI_OP_NULL;
  detail::check_mpi(MPI_Type_contiguous(2, MPI_DOUBLE, &pair), "MPI_Type_contiguous");
  detail::check_mpi(MPI_Type_commit(&pair), "MPI_Type_commit");
  detail::check_mpi(MPI_Op_create(&combine_max_and_sum, 1, &max_and_sum), "MPI_Op_create");
  const int rc = MPI_Allreduce(v.data(), g.data(), 1, pair, max_and_sum, comm.internal());
  MPI_Op_free(&max_and_sum);
  MPI_Type_free(&pair);
  detail::check_mpi(rc, "MPI_Allreduce");
  const double pairs = static_cast<double>(comm.size()) * comm.size();
  return {static_cast<std::uint64_t>(g[0]), g[1] / pairs};
}

AlltoallvChoice choose_alltoallv(AlltoallvAlgo requested, const AlltoallvCountStats& counts,
                                 const Comm& comm) {
  const int p = comm.size();
  if (requested != AlltoallvAlgo::Auto) return AlltoallvChoice::requested(requested);
  auto rule = [&](const std::string& why) {
    const AlltoallvAlgo a = choose_alltoallv(requested, p);
    return AlltoallvChoice{a, "auto: " + std::string(alltoallv_algo_name(a)) + ": 4 ceil(sqrt P) + 2 = " +
                                  std::to_string(4 * detail::ceil_sqrt(p) + 2) + (a == AlltoallvAlgo::FourStage ? " < " : " >= ") +
                                  "P = " + std::to_string(p) + " start-ups (" + why + ")"};
  };
  auto q = tuning_query("alltoallv", comm, counts.max_bytes);
  q.spread = counts.spread();
  const auto pick = tuned_choice(q);
  if (!pick) return rule("no tuning table row");
  const AlltoallvAlgo tuned = alltoallv_algo_from_name(pick->algo);
  if (tuned == AlltoallvAlgo::Mesh && detail::exact_sqrt(p) == 0)  // A3 needs a perfect square
    return rule("the table's mesh cannot run on P = " + std::to_string(p));
  return {tuned, "auto: " + pick->algo + " from " + pick->reason};
}

namespace {
// DecisionKey options of the question "is there one answer for any counts?".
constexpr std::uint64_t kAnyCounts = 1;
// DecisionKey options of Auto's built-in start-up rule (no tuning table).
constexpr std::uint64_t kStartupRule = 3;

// Auto's choice when the table makes it without the counts (see lookup_any_size), else
// Auto: the counts decide.
AlltoallvChoice choose_alltoallv_any_counts(const Comm& comm) {
  const auto table = active_tuning_table();
  const auto pick = table ? table->lookup_any_size(tuning_query("alltoallv", comm, 0)) : std::nullopt;
  if (!pick) return {AlltoallvAlgo::Auto, "the counts decide"};
  const int p = comm.size();
  const AlltoallvAlgo tuned = alltoallv_algo_from_name(pick->algo);
  if (tuned == AlltoallvAlgo::Mesh && detail::exact_sqrt(p) == 0)  // as choose_alltoallv
    return {choose_alltoallv(AlltoallvAlgo::Auto, p), "the table's mesh cannot run here"};
  return {tuned, "auto: " + pick->algo + " from " + pick->reason};
}

// Whether the active table's answer for comm can depend on the spread of the counts
// (remembered on comm like a decision: a table scan per call would cost more than the
// MPI_Allreduce it saves).
bool spread_matters(const Comm& comm) {
  constexpr std::uint64_t kSpreadMatters = 2;
  const DecisionKey key{"alltoallv", 0, 0.0, kSpreadMatters};
  const std::uint64_t epoch = tuning_table_epoch();
  if (const auto hit = comm.remembered_decision(key, epoch)) return hit->algo != 0;
  const auto table = active_tuning_table();
  const bool matters = table && table->spread_matters(tuning_query("alltoallv", comm, 0));
  comm.remember_decision(key, epoch, {matters ? 1 : 0, nullptr});
  return matters;
}

// The longest message over all ranks (one MPI_MAX), with the spread left at 1.
AlltoallvCountStats longest_message_stats(std::span<const std::int64_t> sendcounts, const Comm& comm) {
  std::uint64_t mine = 0, longest = 0;
  for (auto c : sendcounts) mine = std::max<std::uint64_t>(mine, static_cast<std::uint64_t>(c));
  detail::check_mpi(MPI_Allreduce(&mine, &longest, 1, MPI_UINT64_T, MPI_MAX, comm.internal()), "MPI_Allreduce");
  return {longest, 0.0};
}
}  // namespace

namespace detail {
std::unique_ptr<StagedAlgorithm> make_staged(AlltoallvAlgo algo, int p) {
  switch (algo) {
    case AlltoallvAlgo::TwoStage:
      return make_two_stage(p);
    case AlltoallvAlgo::Mesh:
      return make_mesh(p);
    case AlltoallvAlgo::FourStage:
      return make_four_stage(p);
    default:
      throw Error("alltoallv: '" + std::string(alltoallv_algo_name(algo)) +
                  "' is not a staged algorithm");
  }
}
}  // namespace detail

StagedSchedule alltoallv_schedule(AlltoallvAlgo algo, int p) {
  require(p > 0, "alltoallv_schedule: P must be positive, got " + std::to_string(p));
  algo = choose_alltoallv(algo, p);
  if (algo == AlltoallvAlgo::Direct) return detail::direct_schedule(p);
  require(algo != AlltoallvAlgo::Native,
          "alltoallv_schedule: native has no schedule (it is MPI_Alltoallv)");
  return detail::make_staged(algo, p)->schedule();
}

VerifyResult verify_staged_schedule(const StagedSchedule& s) {
  VerifyResult res;
  auto problem = [&](const std::string& what) {
    res.ok = false;
    if (res.problems.size() < 40) res.problems.push_back(what);
  };
  const int p = s.nprocs;
  for (std::size_t st = 0; st < s.stages.size(); ++st) {
    std::set<std::pair<int, int>> seen;
    for (std::size_t k = 0; k < s.stages[st].rounds.size(); ++k) {
      std::vector<int> sends(static_cast<std::size_t>(p), 0), recvs(static_cast<std::size_t>(p), 0);
      for (const Transfer& t : s.stages[st].rounds[k].transfers) {
        const std::string where =
            "stage " + std::to_string(st) + " step " + std::to_string(k + 1) + ": ";
        if (t.src < 0 || t.src >= p || t.dst < 0 || t.dst >= p) {
          problem(where + "rank out of range");
          continue;
        }
        if (++sends[static_cast<std::size_t>(t.src)] > 1)
          problem(where + "rank " + std::to_string(t.src) + " sends twice");
        if (++recvs[static_cast<std::size_t>(t.dst)] > 1)
          problem(where + "rank " + std::to_string(t.dst) + " receives twice");
        if (!seen.insert({t.src, t.dst}).second)
          problem(where + std::to_string(t.src) + "->" + std::to_string(t.dst) +
                  " appears twice in the stage");
      }
    }
  }
  return res;
}

namespace {

// Collective argument check (see AlltoallvOptions::check_args). Returns whether native
// must take its large-count path.
bool check_alltoallv_args(const void* send, std::span<const std::int64_t> sc,
                          std::span<const std::int64_t> sd, void* recv,
                          std::span<const std::int64_t> rc, std::span<const std::int64_t> rd,
                          const Comm& comm, AlltoallvAlgo algo,
                          AlltoallvMode mode, bool allow_fallback, std::size_t element_bytes,
                          bool have_buffers = true) {
  const int p = comm.size(), me = comm.rank();
  const auto up = static_cast<std::size_t>(p);
  std::string local;
  auto extent = [&](std::span<const std::int64_t> c, std::span<const std::int64_t> d,
                    const char* cn, const char* dn, std::uint64_t& ext) {
    const auto e = static_cast<std::int64_t>(element_bytes);
    for (std::size_t k = 0; k < up && local.empty(); ++k) {
      if (e > 1 && (c[k] % e != 0 || d[k] % e != 0))
        local = std::string(c[k] % e != 0 ? cn : dn) + "[" + std::to_string(k) + "] = " +
                std::to_string(c[k] % e != 0 ? c[k] : d[k]) + " is not a multiple of element_bytes " +
                std::to_string(e);
      else if (c[k] < 0)
        local = std::string(cn) + "[" + std::to_string(k) + "] = " + std::to_string(c[k]) +
                " is negative";
      else if (d[k] < 0)
        local = std::string(dn) + "[" + std::to_string(k) + "] = " + std::to_string(d[k]) +
                " is negative";
      else {
        const auto lim = static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());
        const auto end = static_cast<std::uint64_t>(c[k]) + static_cast<std::uint64_t>(d[k]);
        if (end > lim)
          local = std::string(cn) + "[" + std::to_string(k) + "] + " + dn + "[" + std::to_string(k) +
                  "] bytes overflow the address space";
        else if (c[k] > 0)
          ext = std::max<std::uint64_t>(ext, end);
      }
    }
  };
  std::uint64_t sext = 0, rext = 0;
  bool spans_ok = true;
  if (sc.size() != up || sd.size() != up || rc.size() != up || rd.size() != up) {
    local = "sendcounts/sdispls/recvcounts/rdispls hold " + std::to_string(sc.size()) + "/" +
            std::to_string(sd.size()) + "/" + std::to_string(rc.size()) + "/" +
            std::to_string(rd.size()) + " entries, need P = " + std::to_string(p);
    spans_ok = false;
  } else {
    extent(sc, sd, "sendcounts", "sdispls", sext);
    extent(rc, rd, "recvcounts", "rdispls", rext);
    if (local.empty() && have_buffers && sext > 0 && send == nullptr)
      local = "send buffer is null but sendcounts are not all zero";
    if (local.empty() && have_buffers && rext > 0 && recv == nullptr)
      local = "recv buffer is null but recvcounts are not all zero";
    if (local.empty() && have_buffers && sext > 0 && rext > 0) {
      const auto* s = static_cast<const std::byte*>(send);
      const auto* r = static_cast<const std::byte*>(recv);
      if (s < r + rext && r < s + sext) local = "send and recv buffers overlap";
    }
  }
  // What every rank sends me must be what I expect.
  std::vector<std::int64_t> mine(up, 0), theirs(up, 0);
  if (spans_ok) std::copy(sc.begin(), sc.end(), mine.begin());
  detail::check_mpi(
      MPI_Alltoall(mine.data(), 1, MPI_INT64_T, theirs.data(), 1, MPI_INT64_T, comm.internal()),
      "MPI_Alltoall");
  if (local.empty() && spans_ok)
    for (std::size_t k = 0; k < up; ++k)
      if (theirs[k] != rc[k]) {
        local = "recvcounts[" + std::to_string(k) + "] = " + std::to_string(rc[k]) + " but rank " +
                std::to_string(k) + " sends " + std::to_string(theirs[k]) +
                " bytes (its sendcounts[" + std::to_string(me) + "])";
        break;
      }
  const bool fits = spans_ok && detail::native_fits_int(sc, sd, rc, rd);
  using u64 = unsigned long long;
  const u64 am = ((static_cast<u64>(element_bytes) * 16 + static_cast<u64>(algo)) * 16 + static_cast<u64>(mode)) * 2 +
                 (allow_fallback ? 1 : 0);
  std::array<u64, 4> v = {local.empty() ? 0ULL : static_cast<u64>(p - me), am, ~am, fits ? 0ULL : 1ULL};
  detail::check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, v.data(), 4, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm.internal()),
      "MPI_Allreduce");
  const std::string where = "alltoallv: rank " + std::to_string(me) + ": ";
  if (!local.empty()) throw Error(where + local);
  if (v[0] != 0)
    throw Error(where + "rank " + std::to_string(p - static_cast<int>(v[0])) +
                " reported an invalid argument (see its message)");
  if (v[1] != ~v[2])
    throw Error(where + "ranks asked for different algorithms, modes, fallback switches or element sizes (this rank: " +
                std::string(alltoallv_algo_name(algo)) + ", " + std::string(alltoallv_mode_name(mode)) +
                ", element_bytes " + std::to_string(element_bytes) + ")");
  return v[3] != 0;
}

// What a blocking call runs. Auto with a tuning table needs the count statistics of the
// whole call (an MPI_Allreduce), so that every rank makes the same choice, unless the
// table names one algorithm for every size and spread of this shape.
AlltoallvChoice resolve(AlltoallvAlgo algo, std::span<const std::int64_t> sendcounts, const Comm& comm,
                        const AlltoallvOptions& opts) {
  const auto rule = [&] { return choose_alltoallv(algo, comm.size(), opts); };
  if (algo != AlltoallvAlgo::Auto) return rule();
  if (!active_tuning_table()) return detail::decided_choice(algo, comm, {"alltoallv", 0, 0.0, kStartupRule}, rule);
  const AlltoallvChoice any = detail::decided_choice(algo, comm, {"alltoallv", 0, 0.0, kAnyCounts},
                                                     [&] { return choose_alltoallv_any_counts(comm); });
  if (any.algo != AlltoallvAlgo::Auto) return any;
  // The spread only when the table measured several (the combined Allreduce costs as much
  // as two plain ones at 2 ranks); else one MPI_MAX of the longest message.
  const auto stats = spread_matters(comm) ? alltoallv_count_stats(sendcounts, comm)
                                          : longest_message_stats(sendcounts, comm);
  return detail::decided_choice(algo, comm, {"alltoallv", stats.max_bytes, stats.spread(), 0},
                                [&] { return choose_alltoallv(algo, stats, comm); });
}

}  // namespace

AlltoallvChoice alltoallv(const void* send, std::span<const std::int64_t> sendcounts,
                          std::span<const std::int64_t> sdispls, void* recv, std::span<const std::int64_t> recvcounts,
                          std::span<const std::int64_t> rdispls, const Comm& comm, AlltoallvAlgo algo,
                          const AlltoallvOptions& opts) {
  bool large = false;
  if (check_mode())
    detail::check_counts_match(comm, "alltoallv", "bytes", sendcounts, {"sendcounts"}, recvcounts, {"recvcounts"});
  if (opts.check_args)
    large = check_alltoallv_args(send, sendcounts, sdispls, recv, recvcounts, rdispls, comm, algo, opts.mode,
                                 opts.allow_fallback, opts.element_bytes);
  const AlltoallvChoice c = resolve(algo, sendcounts, comm, opts);
  const AlltoallvAlgo ran = c.algo;
  const auto* s = static_cast<const std::byte*>(send);
  auto* r = static_cast<std::byte*>(recv);
  if (opts.stats != nullptr) {
    opts.stats->algo = ran;
    opts.stats->mode = opts.mode;
    opts.stats->stages.clear();
  }
  switch (ran) {
    case AlltoallvAlgo::Native:
      detail::native_alltoallv(s, sendcounts, sdispls, r, recvcounts, rdispls, comm.mpi(),
                               large);
      break;
    case AlltoallvAlgo::Direct: {
      if (opts.stats != nullptr)
        opts.stats->stages = {detail::direct_stats(sendcounts, recvcounts, comm.rank())};
      // The plan is kept for these counts and displacements (hashed into the key, compared in full).
      // (The Comm's vector: no allocation per call once grown, and no thread_local, whose
      // access from a shared library is a __tls_get_addr call.)
      std::vector<std::size_t>& shape = comm.cache().shape;
      shape.clear();
      for (auto v : {sendcounts, sdispls, recvcounts, rdispls}) shape.insert(shape.end(), v.begin(), v.end());
      const PlanKey key{"alltoallv", static_cast<int>(ran), detail::hash_sizes(shape),
                        static_cast<std::uint64_t>(opts.mode)};
      detail::run_cached(comm, key, shape, s, r, [&] {
        return detail::program_plan(comm,
                                    detail::direct_alltoallv_program(sendcounts, sdispls, recvcounts, rdispls,
                                                                     comm.rank(), opts.mode),
                                    c.reason(), false);
      });
      break;
    }
    case AlltoallvAlgo::Auto:
      throw Error("alltoallv: internal error, Auto was not resolved");
    default:
      detail::run_staged(ran, s, sendcounts, sdispls, r, recvcounts, rdispls, comm,
                         opts.mode, opts.stats, static_cast<std::int64_t>(opts.element_bytes));
  }
  return c;
}

namespace {

// The plan state of the non-blocking and persistent forms. A staged algorithm routes every
// rank's runs, so it needs the whole count matrix: a persistent plan gathers it when it is
// made (collective, like MPI_Alltoallv_init); a request (`deferred`) posts an
// MPI_Iallgather at start and builds its program once that has completed.
std::shared_ptr<detail::PlanState> alltoallv_state(const Comm& comm, std::span<const std::int64_t> sendcounts,
                                                   std::span<const std::int64_t> sdispls,
                                                   std::span<const std::int64_t> recvcounts,
                                                   std::span<const std::int64_t> rdispls, AlltoallvAlgo algo,
                                                   const AlltoallvOptions& opts, bool large, bool deferred) {
  require(sendcounts.size() == static_cast<std::size_t>(comm.size()) && sdispls.size() == sendcounts.size() &&
              recvcounts.size() == sendcounts.size() && rdispls.size() == sendcounts.size(),
          [&] {
            return "alltoallv: rank " + std::to_string(comm.rank()) + ": counts and displacements need P = " +
                   std::to_string(comm.size()) + " entries each";
          });
  // Auto picks direct here (the blocking rule would need the counts' statistics).
  const AlltoallvChoice resolved =
      algo == AlltoallvAlgo::Auto
          ? AlltoallvChoice(AlltoallvAlgo::Direct,
                            "auto: direct (the staged algorithms first gather the count matrix; direct needs no "
                            "collective)")
          : choose_alltoallv(algo, comm.size(), opts);
  const AlltoallvAlgo ran = resolved.algo;
  const std::string& reason = resolved.reason();
  if (ran == AlltoallvAlgo::Native)
    return detail::native_plan(comm, "native", reason,
                               detail::native_ialltoallv(sendcounts, sdispls, recvcounts, rdispls,
                                                         comm.mpi(), large));
  if (ran == AlltoallvAlgo::Direct)
    return detail::program_plan(
        comm, detail::direct_alltoallv_program(sendcounts, sdispls, recvcounts, rdispls, comm.rank(), opts.mode),
        reason, true);
  const int p = comm.size(), me = comm.rank();
  const auto up = static_cast<std::size_t>(p);
  const auto unit = static_cast<std::int64_t>(opts.element_bytes);
  auto matrix = std::make_shared<std::vector<std::int64_t>>(up * up);
  if (!deferred) {
    detail::check_mpi(MPI_Allgather(sendcounts.data(), p, MPI_INT64_T, matrix->data(), p, MPI_INT64_T, comm.internal()),
                      "MPI_Allgather");
    return detail::program_plan(
        comm, detail::staged_alltoallv_program(ran, p, me, *matrix, sdispls, rdispls, opts.mode, unit), reason,
        true);
  }
  // The request keeps its own copies of what it reads after this call returns.
  auto row = std::make_shared<const std::vector<std::int64_t>>(sendcounts.begin(), sendcounts.end());
  auto sd = std::make_shared<const std::vector<std::int64_t>>(sdispls.begin(), sdispls.end());
  auto rd = std::make_shared<const std::vector<std::int64_t>>(rdispls.begin(), rdispls.end());
  const MPI_Comm mc = comm.internal();
  const AlltoallvMode mode = opts.mode;
  return detail::deferred_program_plan(
      comm, std::string(alltoallv_algo_name(ran)), reason,
      [row, matrix, p, mc](MPI_Request* q) {
        detail::check_mpi(MPI_Iallgather(row->data(), p, MPI_INT64_T, matrix->data(), p, MPI_INT64_T, mc, q),
                          "MPI_Iallgather");
      },
      [=] { return detail::staged_alltoallv_program(ran, p, me, *matrix, *sd, *rd, mode, unit); });
}

}  // namespace

Plan plan_alltoallv(const Comm& comm, std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> sdispls,
                    std::span<const std::int64_t> recvcounts, std::span<const std::int64_t> rdispls,
                    AlltoallvAlgo algo, const AlltoallvOptions& opts) {
  // Collective like MPI_Alltoallv_init: the argument check runs once here, without buffers,
  // and decides native's large-count path on every rank alike.
  bool large = !detail::native_fits_int(sendcounts, sdispls, recvcounts, rdispls);
  if (opts.check_args)
    large = check_alltoallv_args(nullptr, sendcounts, sdispls, nullptr, recvcounts, rdispls, comm, algo,
                                 opts.mode, opts.allow_fallback, opts.element_bytes, false);
  return Plan(alltoallv_state(comm, sendcounts, sdispls, recvcounts, rdispls, algo, opts, large, false));
}

StepProgram alltoallv_program(AlltoallvAlgo algo, int nprocs, int rank, std::span<const std::int64_t> m,
                              std::span<const std::int64_t> sdispls, std::span<const std::int64_t> rdispls,
                              AlltoallvMode mode, std::size_t element_bytes) {
  const auto up = static_cast<std::size_t>(nprocs);
  require(nprocs > 0 && rank >= 0 && rank < nprocs && m.size() == up * up, [&] {
    return "alltoallv_program: rank " + std::to_string(rank) + " of P = " + std::to_string(nprocs) +
           " with a count matrix of " + std::to_string(m.size()) + " entries";
  });
  AlltoallvOptions o;
  o.allow_fallback = false;
  const AlltoallvAlgo a = choose_alltoallv(algo, nprocs, o).algo;
  require(a != AlltoallvAlgo::Native, "alltoallv_program: native has no step program");
  if (a != AlltoallvAlgo::Direct)
    return detail::staged_alltoallv_program(a, nprocs, rank, m, sdispls, rdispls, mode,
                                            static_cast<std::int64_t>(element_bytes));
  std::vector<std::int64_t> sc(up), rc(up);
  for (std::size_t k = 0; k < up; ++k) {
    sc[k] = m[static_cast<std::size_t>(rank) * up + k];
    rc[k] = m[k * up + static_cast<std::size_t>(rank)];
  }
  return detail::direct_alltoallv_program(sc, sdispls, rc, rdispls, rank, mode);
}

Request ialltoallv(const void* send, std::span<const std::int64_t> sendcounts, std::span<const std::int64_t> sdispls,
                   void* recv, std::span<const std::int64_t> recvcounts, std::span<const std::int64_t> rdispls,
                   const Comm& comm, AlltoallvAlgo algo, const AlltoallvOptions& opts) {
  // No blocking collective inside a non-blocking call: no argument check, and the staged
  // algorithms gather their count matrix non-blocking.
  const bool large = !detail::native_fits_int(sendcounts, sdispls, recvcounts, rdispls);
  Plan plan(alltoallv_state(comm, sendcounts, sdispls, recvcounts, rdispls, algo, opts, large, true));
  plan.start(send, recv);
  return plan;
}

}  // namespace libcomm
