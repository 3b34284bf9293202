// The irregular all-to-all as an operation of the one driver (driver/driver.hpp): its
// registry, shape, argument check, modes, the count statistics Auto decides on, the terms
// of its cost formulas and the schedules as data; the public entry points are calls of the
// driver. The algorithms live one per file next to this one, each with its descriptor.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <limits>
#include <set>

#include "../runtime/check.hpp"
#include "../runtime/mpi_bytes.hpp"
#include "../runtime/comm_cache.hpp"
#include "../runtime/messages.hpp"
#include "../runtime/plan_state.hpp"
#include "alltoallv_internal.hpp"
#include "libcomm/tuning.hpp"
#include "../program/enum_table.hpp"

namespace libcomm {

std::string_view alltoallv_mode_name(AlltoallvMode m) {
  static constexpr std::string_view kNames[] = {"b", "n1", "n2"};
  return detail::enum_table<AlltoallvMode::NonblockingDual>(kNames, m, std::string_view("?"));
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
namespace {
std::uint64_t max_over(const std::vector<AlltoallvStageStats>& stages,
                       std::uint64_t AlltoallvStageStats::*field) {
  std::uint64_t m = 0;
  for (const auto& s : stages) m = std::max(m, s.*field);
  return m;
}
}  // namespace
std::uint64_t AlltoallvStats::peak_buffer_bytes() const {
  return max_over(stages, &AlltoallvStageStats::peak_buffer_bytes);
}
std::uint64_t AlltoallvStats::max_send_buffer() const {
  return max_over(stages, &AlltoallvStageStats::send_buffer_bytes);
}
std::uint64_t AlltoallvStats::max_recv_buffer() const {
  return max_over(stages, &AlltoallvStageStats::recv_buffer_bytes);
}

int StagedSchedule::total_steps() const {
  int n = 0;
  for (const auto& s : stages) n += static_cast<int>(s.rounds.size());
  return n;
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
  struct PairOp {  // (freed however the agreement ends)
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    ~PairOp() {
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
      if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
    }
  } pair;
  detail::check_mpi(MPI_Type_contiguous(2, MPI_DOUBLE, &pair.type), "MPI_Type_contiguous");
  detail::check_mpi(MPI_Type_commit(&pair.type), "MPI_Type_commit");
  detail::check_mpi(MPI_Op_create(&combine_max_and_sum, 1, &pair.op), "MPI_Op_create");
  const MPI_Comm c = comm.internal();
  detail::run_agreement(
      c, "auto", "the agreement on alltoallv's count statistics", "MPI_Allreduce",
      [&] { return MPI_Allreduce(v.data(), g.data(), 1, pair.type, pair.op, c); },
      [&](MPI_Request* r) { return MPI_Iallreduce(v.data(), g.data(), 1, pair.type, pair.op, c, r); });
  const double pairs = static_cast<double>(comm.size()) * comm.size();
  return {static_cast<std::uint64_t>(g[0]), g[1] / pairs};
}

namespace detail {
std::unique_ptr<StagedAlgorithm> make_staged(AlltoallvAlgo algo, int p) {
  const auto& e = entry_of<AlltoallvOp>(algo);
  require(e.extra.staged != nullptr, [&] { return "alltoallv: '" + std::string(e.name) + "' is not a staged algorithm"; });
  return e.extra.staged(p);
}
}  // namespace detail

StagedSchedule alltoallv_schedule(AlltoallvAlgo algo, int p) {
  require(p > 0, "alltoallv_schedule: P must be positive, got " + std::to_string(p));
  AlltoallvOptions strict;
  strict.allow_fallback = false;  // (mesh on a non-square is an Error here, not four_stage)
  algo = algo == AlltoallvAlgo::Auto ? choose_alltoallv(algo, p) : choose_alltoallv(algo, p, strict).algo;
  if (algo == AlltoallvAlgo::Direct) return detail::direct_schedule(p);
  require(algo != AlltoallvAlgo::Native,
          "alltoallv_schedule: native has no schedule (it is MPI_Alltoallv)");
  return detail::make_staged(algo, p)->schedule();
}

VerifyResult verify_staged_schedule(const StagedSchedule& s) {
  VerifyResult res;
  const int p = s.nprocs;
  for (std::size_t st = 0; st < s.stages.size(); ++st) {
    std::set<std::pair<int, int>> seen;
    for (std::size_t k = 0; k < s.stages[st].rounds.size(); ++k) {
      std::vector<int> sends(static_cast<std::size_t>(p), 0), recvs(static_cast<std::size_t>(p), 0);
      for (const Transfer& t : s.stages[st].rounds[k].transfers) {
        const std::string where =
            "stage " + std::to_string(st) + " step " + std::to_string(k + 1) + ": ";
        if (t.src < 0 || t.src >= p || t.dst < 0 || t.dst >= p) {
          res.fail(where + "rank out of range");
          continue;
        }
        if (++sends[static_cast<std::size_t>(t.src)] > 1)
          res.fail(where + "rank " + std::to_string(t.src) + " sends twice");
        if (++recvs[static_cast<std::size_t>(t.dst)] > 1)
          res.fail(where + "rank " + std::to_string(t.dst) + " receives twice");
        if (!seen.insert({t.src, t.dst}).second)
          res.fail(where + std::to_string(t.src) + "->" + std::to_string(t.dst) +
                  " appears twice in the stage");
      }
    }
  }
  return res;
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
  const AlltoallvAlgo a =
      algo == AlltoallvAlgo::Auto ? choose_alltoallv(algo, nprocs) : choose_alltoallv(algo, nprocs, o).algo;
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


namespace detail {

extern const AlltoallvAlgorithm native_alltoallv_entry, direct_alltoallv, two_stage_alltoallv, mesh_alltoallv,
    four_stage_alltoallv;

const AlltoallvAlgorithm auto_alltoallv{
    .algo = AlltoallvAlgo::Auto, .name = "auto",
    .summary = "the Auto policy (LIBCOMM_AUTO: online, model or table), decided per site "
               "(AlltoallvOptions::site) and agreed size class from the count statistics", .paper = ""};

std::span<const AlltoallvAlgorithm> AlltoallvOp::algorithms() {
  static const auto all = registry<AlltoallvOp>({&auto_alltoallv, &native_alltoallv_entry, &direct_alltoallv,
                                                 &two_stage_alltoallv, &mesh_alltoallv, &four_stage_alltoallv});
  return all;
}

namespace alltoallv_cost {
constexpr double kHeader = 24;  // bytes before every run of a staged message
double mean(const AlltoallvOp::Shape& s) { return s.stats.mean_bytes; }
double spike(const AlltoallvOp::Shape& s, const CostParams& c) {
  const double extra = std::max(0.0, s.stats.max_bytes - mean(s));
  return extra * c.beta_at(static_cast<double>(s.stats.max_bytes));
}
double chained_spikes(const AlltoallvOp::Shape& s) {
  if (s.p <= 2) return 1;
  const double spread_steps = cost::log2_ceil(s.p);  // steps a delay takes to reach every rank
  const double long_messages = static_cast<double>(s.p) * s.p / s.stats.spread();
  return std::max(1.0, std::min(long_messages, (s.p - 1) / spread_steps));
}
double ring_order_steps(const AlltoallvOp::Shape& s, const CostParams& c) {
  const double m = mean(s);
  return cost::one_exchange_per_round(layout_of(s), c, m) + chained_spikes(s) * spike(s, c) + cost::copy(c, m);
}
double posted_at_once(const AlltoallvOp::Shape& s, const CostParams& c) {
  const double m = mean(s);
  return cost::all_at_once(layout_of(s), c, m) + spike(s, c) + cost::copy(c, m);
}
double stage(const Layout& l, const CostParams& c, double steps, double bytes, double runs) {
  if (steps <= 0) return cost::copy(c, bytes);
  const double per_step = (bytes + kHeader * runs) / steps;
  const double exchange = l.nodes == 1 ? cost::exchange_round(l, c, per_step, 1)
                                       : cost::exchange_round(l, c, per_step, l.ppn);
  return steps * exchange + 2 * cost::copy(c, bytes);
}
double pieces(const AlltoallvOp::Shape& s, double parts) {
  const double elements =
      std::max(1.0, mean(s) / static_cast<double>(std::max<std::size_t>(1, s.opts->element_bytes)));
  return s.p * std::min(parts, elements);
}
}  // namespace alltoallv_cost

void AlltoallvOp::on_run(const Args& a, const Shape& s, const Comm& comm, AlltoallvAlgo ran) {
  AlltoallvStats* st = s.opts->stats;
  if (st == nullptr) return;
  st->algo = ran;
  st->mode = s.opts->mode;
  st->stages.clear();
  if (ran == AlltoallvAlgo::Direct) st->stages = {direct_stats(a.sc, a.rc, comm.rank())};
}

AlltoallvOp::Shape AlltoallvOp::shape(int p, const NodeMap& nodes, const AlltoallvCountStats& stats,
                                      const Options& o) {
  Shape s;
  s.p = p;
  s.nodes = &nodes;
  s.opts = &o;
  s.equal = false;
  s.skip_when_empty = false;  // a rank with nothing of its own may route others' runs
  s.key_bytes = o.site;
  s.stats = stats;
  s.global = true;
  s.decision_bytes = stats.max_bytes;
  s.spread = stats.spread();
  return s;
}

AlltoallvOp::Shape AlltoallvOp::shape(const Args& a, const Comm& comm, const Options& o) {
  Shape s = shape(comm.size(), comm.nodes(), {}, o);
  s.global = false;
  s.sc = a.sc, s.sd = a.sd, s.rc = a.rc, s.rd = a.rd;
  const auto up = static_cast<std::size_t>(s.p);
  if (a.sc.size() != up || a.sd.size() != up || a.rc.size() != up || a.rd.size() != up) {
    s.problem = "sendcounts/sdispls/recvcounts/rdispls hold " + std::to_string(a.sc.size()) + "/" +
                std::to_string(a.sd.size()) + "/" + std::to_string(a.rc.size()) + "/" + std::to_string(a.rd.size()) +
                " entries, need P = " + std::to_string(s.p);
    return s;
  }
  // The plans are kept for these counts and displacements (hashed into the key, compared
  // in full). (The Comm's vector: no allocation per call once grown.)
  std::vector<std::size_t>& key = comm.cache().shape;
  key.clear();
  for (auto v : {a.sc, a.sd, a.rc, a.rd})
    for (auto x : v) key.push_back(static_cast<std::size_t>(x));
  s.sizes = key;
  s.plan_variant = !native_fits_int(a.sc, a.sd, a.rc, a.rd);  // (the check decides it for every rank alike)
  return s;
}

void AlltoallvOp::agree(Shape& s, const Comm& comm) {
  if (s.global) return;
  s.stats = alltoallv_count_stats(s.sc, comm);
  s.global = true;
  s.decision_bytes = s.stats.max_bytes;
  s.spread = s.stats.spread();
}

std::optional<Choice<AlltoallvAlgo>> AlltoallvOp::unmeasured_default(const Shape& s) {
  if (s.global) return std::nullopt;
  return Choice<AlltoallvAlgo>(AlltoallvAlgo::Direct,
                               "auto: direct (a non-blocking call cannot agree on the count statistics; direct needs no "
                               "collective, the staged algorithms would first gather the count matrix)");
}

std::optional<Choice<AlltoallvAlgo>> AlltoallvOp::nothing_to_exchange(const Shape& s) {
  if (!s.global || s.stats.max_bytes != 0) return std::nullopt;
  static const std::string* const why =
      intern_reason("auto: direct (every count on every rank is zero, as the ranks agreed: it sends nothing)");
  return Choice<AlltoallvAlgo>(AlltoallvAlgo::Direct, why);
}

std::uint64_t AlltoallvOp::options(const Shape& s) {
  return (static_cast<std::uint64_t>(s.opts->element_bytes) * 4 + static_cast<std::uint64_t>(s.opts->mode)) * 2 +
         s.opts->allow_fallback;
}

ArgumentCheck AlltoallvOp::argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo,
                                          const Options& o, bool have_buffers) {
  const int p = s.p, me = comm.rank();
  const auto up = static_cast<std::size_t>(p);
  ArgumentCheck c;
  c.local = s.problem;
  auto extent = [&](std::span<const std::int64_t> cnt, std::span<const std::int64_t> d, const char* cn,
                    const char* dn, std::uint64_t& ext) {
    const auto e = static_cast<std::int64_t>(o.element_bytes);
    for (std::size_t k = 0; k < up && c.local.empty(); ++k) {
      if (e > 1 && (cnt[k] % e != 0 || d[k] % e != 0))
        c.local = std::string(cnt[k] % e != 0 ? cn : dn) + "[" + std::to_string(k) + "] = " +
                  std::to_string(cnt[k] % e != 0 ? cnt[k] : d[k]) + " is not a multiple of element_bytes " +
                  std::to_string(e);
      else if (cnt[k] < 0)
        c.local = std::string(cn) + "[" + std::to_string(k) + "] = " + std::to_string(cnt[k]) + " is negative";
      else if (d[k] < 0)
        c.local = std::string(dn) + "[" + std::to_string(k) + "] = " + std::to_string(d[k]) + " is negative";
      else {
        const auto lim = static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());
        const auto end = static_cast<std::uint64_t>(cnt[k]) + static_cast<std::uint64_t>(d[k]);
        if (end > lim)
          c.local = std::string(cn) + "[" + std::to_string(k) + "] + " + dn + "[" + std::to_string(k) +
                    "] bytes overflow the address space";
        else if (cnt[k] > 0)
          ext = std::max<std::uint64_t>(ext, end);
      }
    }
  };
  std::uint64_t sext = 0, rext = 0;
  const bool spans_ok = s.problem.empty();
  if (spans_ok) {
    extent(a.sc, a.sd, "sendcounts", "sdispls", sext);
    extent(a.rc, a.rd, "recvcounts", "rdispls", rext);
    if (c.local.empty() && have_buffers && sext > 0 && a.send == nullptr)
      c.local = "send buffer is null but sendcounts are not all zero";
    if (c.local.empty() && have_buffers && rext > 0 && a.recv == nullptr)
      c.local = "recv buffer is null but recvcounts are not all zero";
    if (c.local.empty() && have_buffers && sext > 0 && rext > 0) {
      const auto* sp = static_cast<const std::byte*>(a.send);
      const auto* rp = static_cast<const std::byte*>(a.recv);
      if (sp < rp + rext && rp < sp + sext) c.local = "send and recv buffers overlap";
    }
  }
  // What every rank sends me must be what I expect.
  std::vector<std::int64_t> mine(up, 0), theirs(up, 0);
  if (spans_ok) std::copy(a.sc.begin(), a.sc.end(), mine.begin());
  check_mpi(MPI_Alltoall(mine.data(), 1, MPI_INT64_T, theirs.data(), 1, MPI_INT64_T, comm.internal()), "MPI_Alltoall");
  if (c.local.empty() && spans_ok)
    for (std::size_t k = 0; k < up; ++k)
      if (theirs[k] != a.rc[k]) {
        c.local = "recvcounts[" + std::to_string(k) + "] = " + std::to_string(a.rc[k]) + " but rank " +
                  std::to_string(k) + " sends " + std::to_string(theirs[k]) + " bytes (its sendcounts[" +
                  std::to_string(me) + "])";
        break;
      }
  c.mode = ((static_cast<std::uint64_t>(o.element_bytes) * 16 + static_cast<std::uint64_t>(algo)) * 16 +
            static_cast<std::uint64_t>(o.mode)) * 2 + (o.allow_fallback ? 1 : 0);
  c.extra = spans_ok && native_fits_int(a.sc, a.sd, a.rc, a.rd) ? 0 : 1;
  return c;
}

std::string AlltoallvOp::modes_differ(Algo algo, const Options& o) {
  return "ranks asked for different algorithms, modes, fallback switches or element sizes (this rank: " +
         std::string(alltoallv_algo_name(algo)) + ", " + std::string(alltoallv_mode_name(o.mode)) +
         ", element_bytes " + std::to_string(o.element_bytes) + ")";
}

void AlltoallvOp::check_agreement(const Args& a, const Comm& comm, const Options&) {
  check_counts_match(comm, "alltoallv", "bytes", a.sc, {"sendcounts"}, a.rc, {"recvcounts"});
}

}  // namespace detail

}  // namespace libcomm
