// The measurement loop of commbench and tune (timing.hpp).
#include "timing.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>

#include <mpi.h>

#include "apps/common.hpp"
#include "libcomm/buffer.hpp"
#include "libcomm/error.hpp"
#include "libcomm/sim.hpp"

namespace commbench {
namespace {

// --arrival-skew: this rank's generator and mean wait (0: off).
struct ArrivalSkew {
  std::mt19937_64 draw;
  double mean_s = 0;
};
ArrivalSkew g_skew;

// --synchronized-start: on, and this rank's calls that reached the agreed instant late.
bool g_synchronized_start = false;
long long g_late_starts = 0;

// After the barrier: every rank waits (simulated time) until one agreed instant.
void start_together(MPI_Comm comm) {
  if (!g_synchronized_start) return;
  double out = MPI_Wtime(), last_out = 0;
  MPI_Allreduce(&out, &last_out, 1, MPI_DOUBLE, MPI_MAX, comm);
  double lag = MPI_Wtime() - last_out, agreement = 0;
  MPI_Allreduce(&lag, &agreement, 1, MPI_DOUBLE, MPI_MAX, comm);
  // The second agreement ends about 2 `agreement` after the last one out: one more of margin.
  const double wait = last_out + 3 * agreement - MPI_Wtime();
  if (wait < 0) ++g_late_starts;
  else libcomm::sim::charge_seconds(wait);
}

// Waits this call's skew on this rank (simulated time in a simulation).
void wait_arrival_skew() {
  if (g_skew.mean_s <= 0) return;
  const double wait = 2 * g_skew.mean_s * std::uniform_real_distribution<double>(0.0, 1.0)(g_skew.draw);
  if (libcomm::built_for_simulation()) return libcomm::sim::charge_seconds(wait);
  for (const double until = MPI_Wtime() + wait; MPI_Wtime() < until;) {
  }
}

void add_arrival_skew_option(CLI::App& app, std::vector<double>& seed_us) {
  app.add_option("--arrival-skew", seed_us,
                 "SEED,US: the ranks reach every timed call apart: after its barrier each rank waits uniform "
                 "[0, 2 US] microseconds (its own generator, seeded by SEED and the rank) before its clock starts; "
                 "simulated time in a SimGrid build, a busy wait on a real machine; one seed repeats a simulation")
      ->delimiter(',')
      ->expected(1, 2)
      ->check(CLI::Range(0.0, 1e12));
}

std::vector<std::size_t> size_range(std::size_t lo, std::size_t hi) {
  libcomm::require(lo <= hi, "--min (" + std::to_string(lo) + ") is larger than --max (" +
                                 std::to_string(hi) + ")");
  std::vector<std::size_t> sizes;
  if (lo == 0) sizes.push_back(0), lo = 1;
  for (std::size_t s = lo; s <= hi; s *= 2) {
    sizes.push_back(s);
    if (s > hi / 2) break;
  }
  return sizes;
}

}  // namespace

void add_size_options(CLI::App& app, SizeOptions& o, const std::string& reps_help) {
  app.add_option("--min", o.min, "smallest block per destination (bytes; K/M/G suffixes)")->capture_default_str();
  app.add_option("--max", o.max, "largest block per destination; sizes double from --min")->capture_default_str();
  app.add_option("--sizes", o.sizes, "explicit comma-separated block sizes (e.g. 8,1K,64K,1M); overrides --min/--max")
      ->check(apps::kNonEmpty);
  app.add_option("--reps", o.reps, reps_help)->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--warmup", o.warmup,
                 "untimed runs before timing (0: time each algorithm from its first call, for "
                 "deterministic simulations where a run leaves nothing warm)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--nodes", o.nodes, "node map: shared | flat | ppn=N | sizes=A,B,.. | map=N0,N1,.. | file:PATH")
      ->capture_default_str();
  add_arrival_skew_option(app, o.arrival_skew);
  app.add_flag("--synchronized-start", o.synchronized_start,
               "start every rank's clock at one agreed simulated instant after the barrier, so that the "
               "barrier's own exit skew is not in the time (a SimGrid build without --host-speed)");
}

void apply_synchronized_start(bool on) {
  if (!on) return;
  libcomm::require(libcomm::built_for_simulation(),
                   "--synchronized-start: needs the simulator's one clock (run the program through "
                   "scripts/simulate.sh); real ranks' clocks do not agree to the microsecond");
  libcomm::sim::require_cost_model_applies("--synchronized-start");
  g_synchronized_start = true;
}

std::string describe_synchronized_start() {
  return "synchronized start: every rank's clock starts at one agreed instant after the barrier "
         "(--synchronized-start)";
}

long long late_starts(MPI_Comm comm) {
  long long late = g_late_starts;
  MPI_Allreduce(MPI_IN_PLACE, &late, 1, MPI_LONG_LONG, MPI_SUM, comm);
  return late;
}

void apply_arrival_skew(const std::vector<double>& seed_us, int rank) {
  if (seed_us.empty()) return;
  libcomm::require(seed_us.size() == 2, "--arrival-skew: needs SEED,US (two values), got " +
                                            std::to_string(seed_us.size()));
  if (libcomm::built_for_simulation()) libcomm::sim::require_cost_model_applies("--arrival-skew");
  std::seed_seq seq{static_cast<std::uint64_t>(seed_us[0]), static_cast<std::uint64_t>(rank)};
  g_skew.draw.seed(seq);
  g_skew.mean_s = seed_us[1] * 1e-6;
}

std::string describe_arrival_skew(const std::vector<double>& seed_us) {
  if (seed_us.empty()) return "";
  std::ostringstream s;
  s << "arrival skew: each rank starts every call after uniform [0, " << 2 * seed_us[1] << "] us (seed "
    << static_cast<std::uint64_t>(seed_us[0]) << ", --arrival-skew)";
  return s.str();
}

std::vector<std::size_t> block_sizes(const std::string& min_s, const std::string& max_s,
                                     const std::string& sizes_list) {
  if (sizes_list.empty())
    return size_range(apps::parse_size(min_s, "--min"), apps::parse_size(max_s, "--max"));
  return size_list(sizes_list);
}

std::vector<std::size_t> size_list(const std::string& text) {
  std::vector<std::size_t> sizes;
  for (const auto& item : apps::split_list(text, "--sizes")) sizes.push_back(apps::parse_size(item, "--sizes"));
  return sizes;
}

namespace {

// One run on every rank, timed from a barrier (and this rank's --arrival-skew) to the slowest
// rank's return: {run time, charged local work} and what ran.
std::string timed_run(Operation& operation, const libcomm::Comm& comm, const std::string& algo, bool checked,
                      double t[2]) {
  operation.reset();
  const PolicyScope policy(algo);  // (auto:POLICY: set before the clock starts, for every row alike)
  MPI_Barrier(comm.mpi());
  start_together(comm.mpi());
  wait_arrival_skew();
  const double charged0 = libcomm::sim::charged_seconds();
  const double t0 = MPI_Wtime();
  std::string ran = operation.run(algo, checked);
  t[0] = MPI_Wtime() - t0;
  t[1] = libcomm::sim::charged_seconds() - charged0;
  MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, comm.mpi());
  return ran;
}

// Auto's warm-up: its online policy measures candidates on its first calls of a size class;
// they run (and are checked) until it has decided. Every rank decides alike.
constexpr int kMaxWarmupCalls = 10000;
void warm_up_auto(Operation& operation, const libcomm::Comm& comm, const std::string& algo, bool simulated,
                  Row& row) {
  do {
    double t[2];
    timed_run(operation, comm, algo, row.warmup_calls == 0, t);
    ++row.warmup_calls;
    row.warmup_s += t[0];
    if (!simulated) row.bad += operation.check(algo);
  } while (operation.measuring() && row.warmup_calls < kMaxWarmupCalls);
}

}  // namespace

std::vector<Row> time_algorithms(Operation& operation, const libcomm::Comm& comm,
                                 const std::vector<std::string>& algos,
                                 const std::vector<std::size_t>& sizes, int reps, int warmup,
                                 bool simulated, std::ostream* progress) {
  std::vector<Row> rows;
  for (std::size_t b : sizes) {
    operation.prepare(b);
    std::vector<Row> size_rows(algos.size());
    for (std::size_t k = 0; k < algos.size(); ++k) {
      size_rows[k].algo = algos[k];
      size_rows[k].block = b;
      size_rows[k].mean_message = operation.mean_message();
      if (parse_timed(algos[k]).algo == "auto") warm_up_auto(operation, comm, algos[k], simulated, size_rows[k]);
    }
    for (int rep = 0; rep < warmup + reps; ++rep) {
      // Each repetition runs the algorithms in its own order (a shuffle seeded by the
      // repetition, so the same on every rank): an algorithm with large temporaries leaves
      // the caches cold for whichever runs next (at 256 KiB on 2 real ranks, direct took
      // 1.8x its time when it always followed four_stage), and a fixed order would charge
      // that to the same algorithm every time.
      std::vector<std::size_t> order(algos.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      if (rep > 0) {
        std::mt19937 shuffle(static_cast<std::mt19937::result_type>(rep));
        for (std::size_t i = order.size(); i > 1; --i)  // Fisher-Yates, portable across libraries
          std::swap(order[i - 1], order[shuffle() % i]);
      }
      for (std::size_t k : order) {
        Row& row = size_rows[k];
        double t[2];
        const std::string ran = timed_run(operation, comm, algos[k], rep == 0, t);
        if (rep >= warmup) row.times.push_back(t[0]), row.local_work.push_back(t[1]);
        if (rep == 0) {
          row.ran = ran;
          row.note = operation.note(algos[k], b);
          row.model_us = operation.predict_us(algos[k], b);
        }
        if (!simulated) row.bad += operation.check(algos[k]);
      }
    }
    std::ostringstream line;
    line << "  " << apps::format_size(b) << ":";
    for (auto& row : size_rows) {
      MPI_Allreduce(MPI_IN_PLACE, &row.bad, 1, MPI_LONG_LONG, MPI_SUM, comm.mpi());
      row.median = apps::median(row.times);
      row.min = *std::min_element(row.times.begin(), row.times.end());
      row.ratio = size_rows[0].median > 0 ? row.median / size_rows[0].median : 0.0;
      line << " " << row.algo << "=" << row.median * 1e6 << (row.bad != 0 ? "(invalid)" : "");
      rows.push_back(row);
    }
    if (progress != nullptr && apps::is_root()) *progress << line.str() << " us" << std::endl;
  }
  return rows;
}

void add_copy_model_option(CLI::App& app, double& gbs) {
  app.add_option("--model-copy", gbs,
                 "SimGrid builds without --host-speed: charge the algorithms' local block copies "
                 "(hierarchical staging, Bruck's rotations, self-copies) at this many GB/s, as "
                 "fft3d --model-copy does (default 0: copies cost no simulated time)")
      ->check(apps::number_in(0, 1e6));
}

void apply_copy_model(double gbs) {
  if (gbs <= 0) return;
  libcomm::sim::require_cost_model_applies("--model-copy");
  libcomm::sim::set_copy_rate(gbs * 1e9);
}

std::string describe_copy_model(double gbs) {
  if (gbs <= 0) return "";
  std::ostringstream s;
  s << "local copies charged at " << gbs << " GB/s (--model-copy)";
  return s.str();
}

}  // namespace commbench
