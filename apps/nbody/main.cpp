// nbody: direct gravitational N-body (Plummer softening, leapfrog) where every step
// all-gathers positions and masses with a libcomm allgather algorithm, or shifts them
// around a ring overlapped with the force computation (systolic). Each run is checked
// against a serial computation of the same steps on rank 0; energy drift is reported.
// See docs/apps/matvec_nbody.md.
//
// Flow (run): parse the options -> build the variants (one per algorithm) -> the serial
// reference -> simulate every variant --reps times, round-robin, each run timed per step
// and validated -> report.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "kernels/nbody.hpp"
#include "libcomm/error.hpp"
#include "parallel_nbody.hpp"

namespace nbody {
namespace {

struct Settings {
  Params prm;
  apps::RunOptions run = apps::RunOptions::defaults("all", 1);
  std::string order = "binary";
  double tolerance = 1e-9;
};

// One timed configuration: an allgather algorithm, or the systolic ring.
struct Variant {
  std::string name, ran, skipped;  // skipped: why it cannot run here
  bool systolic = false;
  libcomm::AllgatherAlgo algo = libcomm::AllgatherAlgo::Native;
  std::vector<double> step, comm, compute;  // per step of every run, slowest rank
  double error = 0, drift = 0;              // worst over the runs
  bool pass = true;
};

// The serial computation on rank 0: the same initial state and steps, all bodies at once.
struct Reference {
  std::vector<double> bodies;
  double e0 = 0, drift = 0;
};

Settings parse(int argc, char** argv) {
  CLI::App app{"nbody: direct N-body whose every step all-gathers positions and masses with a "
               "libcomm allgather algorithm (or a systolic ring overlapped with the forces); "
               "validated against a serial computation of the same steps"};
  Settings s;
  app.add_option("--n", s.prm.n, "number of bodies")->check(apps::number_in(0, 1 << 24))->capture_default_str();
  app.add_option("--steps", s.prm.steps, "leapfrog steps")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--dt", s.prm.dt, "time step")->check(apps::positive_number(1e6))->capture_default_str();
  app.add_option("--eps", s.prm.eps, "softening length")->check(apps::positive_number(1e6))->capture_default_str();
  app.add_option("--seed", s.prm.seed, "seed of the initial state")->check(apps::seed_number())->capture_default_str();
  apps::add_run_options(app, s.run, apps::kAlgoOption | apps::kAutoOption | apps::kRepsOption | apps::kJsonOption |
                                        apps::kFlopModelOption,
                        "native, auto, ring, d_cycles, d_cycles_im, send_spread, butterfly, systolic (comma "
                        "list) or all (every applicable one except auto)",
                        "simulations per algorithm, run round-robin (medians over all their steps)");
  app.add_option("--order", s.order, "node order of ring: binary or gray")->capture_default_str();
  app.add_option("--tolerance", s.tolerance, "largest allowed distance between a body and its serial "
                                             "reference position after the last step (system radius 1)")
      ->check(apps::number_in(0, 1e6))
      ->capture_default_str();
  apps::parse_command_line(app, argc, argv);
  apps::apply_run_options(app, s.run);
  libcomm::require(s.prm.n >= 1, "--n: need at least 1 body (got 0)");
  // The validation gathers all bodies on rank 0 with int counts and displacements.
  libcomm::require(s.prm.n <= static_cast<std::size_t>(INT_MAX / 4),
                   "--n: at most " + std::to_string(INT_MAX / 4) + " bodies (got " + std::to_string(s.prm.n) + ")");
  return s;
}

libcomm::AllgatherOptions allgather_options(const Settings& s) {
  libcomm::AllgatherOptions opts;
  // The paper 004 comparisons show d_cycles only where a d-cube exists: its fallback to
  // ring would put ring's time under d_cycles' name, so this program refuses instead.
  opts.allow_fallback = false;
  try {
    opts.order = libcomm::node_order_from_name(s.order);
  } catch (const libcomm::Error& e) {
    throw libcomm::Error(std::string("--order: ") + e.what());
  }
  return opts;
}

// Every named algorithm, native first (every ratio divides by its median). With "all", an
// algorithm that cannot run on P ranks is listed as skipped; named, it is an error.
std::vector<Variant> build_variants(const Settings& s, int p, const libcomm::AllgatherOptions& opts) {
  const bool all = s.run.algo == "all";
  std::vector<Variant> variants;
  for (const auto& name : apps::expand_list(s.run.algo, "--algo", {"native", "ring", "d_cycles", "d_cycles_im",
                                                                   "send_spread", "butterfly", "systolic"})) {
    Variant v;
    v.name = name;
    v.systolic = name == "systolic";
    if (!v.systolic) {
      try {
        v.algo = libcomm::allgather_algo_from_name(name);
      } catch (const libcomm::Error& e) {
        throw libcomm::Error(std::string("--algo: ") + e.what() + " (or systolic)");
      }
      try {
        libcomm::choose_allgather(v.algo, p, opts);
      } catch (const libcomm::Error& e) {
        if (!all) throw libcomm::Error("--algo " + name + ": " + e.what());
        v.skipped = e.what();
      }
    }
    variants.push_back(v);
  }
  apps::reference_first(variants, [](const Variant& v) { return v.name == "native"; });
  return variants;
}

Reference serial_reference(const Params& prm, bool root) {
  Reference ref;
  if (!root) return ref;
  const double eps2 = prm.eps * prm.eps;
  std::vector<double> vel(3 * prm.n);
  ref.bodies.resize(4 * prm.n);
  kernels::initial_bodies(prm.seed, prm.n, 0, prm.n, ref.bodies.data(), vel.data());
  ref.e0 = kernels::total_energy(ref.bodies.data(), vel.data(), prm.n, eps2);
  kernels::serial_leapfrog(ref.bodies.data(), vel.data(), prm.n, prm.steps, prm.dt, eps2);
  ref.drift = std::abs(kernels::total_energy(ref.bodies.data(), vel.data(), prm.n, eps2) - ref.e0) / std::abs(ref.e0);
  return ref;
}

// Gathers this rank's `per_body` values per body of the simulation to rank 0.
std::vector<double> gather_to_root(const ParallelNBody& sim, const std::vector<double>& mine, int per_body,
                                   const libcomm::Comm& comm) {
  std::vector<int> counts, displs;
  for (std::size_t q = 0; q < sim.counts().size(); ++q) {
    counts.push_back(static_cast<int>(per_body * sim.counts()[q]));
    displs.push_back(static_cast<int>(per_body * sim.offsets()[q]));
  }
  std::vector<double> all(comm.rank() == 0 ? static_cast<std::size_t>(displs.back() + counts.back()) : 0);
  MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), counts.data(), displs.data(),
              MPI_DOUBLE, 0, comm.mpi());
  return all;
}

// The final positions against the serial reference, on rank 0; the verdict goes to every rank.
void validate(Variant& v, const ParallelNBody& sim, const Settings& s, const Reference& ref,
              const libcomm::Comm& comm) {
  const auto bodies = gather_to_root(sim, sim.bodies(), 4, comm);
  const auto vel = gather_to_root(sim, sim.velocities(), 3, comm);
  int pass = 0;
  if (comm.rank() == 0) {
    double err = 0;
    bool nan = false;
    for (std::size_t b = 0; b < s.prm.n; ++b) {
      double d2 = 0;
      for (int q = 0; q < 3; ++q) {
        const double d = bodies[4 * b + q] - ref.bodies[4 * b + q];
        d2 += d * d;
      }
      nan |= std::isnan(d2);
      err = std::max(err, std::sqrt(d2));
    }
    v.error = (nan || std::isnan(v.error)) ? NAN : std::max(v.error, err);
    const double eps2 = s.prm.eps * s.prm.eps;
    v.drift = std::abs(kernels::total_energy(bodies.data(), vel.data(), s.prm.n, eps2) - ref.e0) / std::abs(ref.e0);
    pass = !nan && err <= s.tolerance;
  }
  MPI_Bcast(&pass, 1, MPI_INT, 0, comm.mpi());
  v.pass = v.pass && pass != 0;
}

// One simulation of variant v: the slowest rank's time of every step, then validated.
void simulate(Variant& v, ParallelNBody& sim, const libcomm::AllgatherOptions& opts, const Settings& s,
              const Reference& ref, const libcomm::Comm& comm) {
  MPI_Barrier(comm.mpi());
  const auto phases = sim.run(v.systolic, v.algo, opts);
  v.ran = sim.ran();
  std::vector<double> local;
  for (const auto& ph : phases) local.insert(local.end(), {ph.comm + ph.compute, ph.comm, ph.compute});
  const auto worst = apps::slowest(local, comm.mpi());
  for (std::size_t k = 0; k < worst.size(); k += 3) {
    v.step.push_back(worst[k]);
    v.comm.push_back(worst[k + 1]);
    v.compute.push_back(worst[k + 2]);
  }
  validate(v, sim, s, ref, comm);
}

nlohmann::json record(const Settings& s, const std::vector<Variant>& variants, const Reference& ref, int p,
                      const apps::Validation& validation) {
  nlohmann::json j = {{"program", "nbody"}, {"ranks", p}, {"n", s.prm.n}, {"steps", s.prm.steps},
                      {"dt", s.prm.dt}, {"eps", s.prm.eps}, {"seed", s.prm.seed}, {"reps", s.run.reps},
                      {"tolerance", s.tolerance}, {"reference_energy_drift", ref.drift},
                      {"validation", validation.verdict()}, {"results", nlohmann::json::array()}};
  const double native = variants.empty() || variants[0].name != "native" ? 0 : apps::median(variants[0].step);
  const double pairs = static_cast<double>(s.prm.n) * static_cast<double>(s.prm.n - 1);
  for (const auto& v : variants) {
    if (!v.skipped.empty()) {
      j["skipped"].push_back({{"algo", v.name}, {"reason", v.skipped}});
      continue;
    }
    const double step = apps::median(v.step);
    j["results"].push_back({{"algo", v.name}, {"ran", v.ran}, {"block_bytes", 32 * s.prm.n}, {"median_s", step},
                            {"comm_s", apps::median(v.comm)}, {"compute_s", apps::median(v.compute)},
                            {"interactions_per_s", step > 0 ? pairs / step : 0}, {"times_s", v.step},
                            {"max_position_error", v.error}, {"energy_drift", v.drift},
                            {"validation", v.pass ? "PASS" : "FAIL"},
                            {"ratio_to_native", native > 0 ? nlohmann::json(step / native) : nlohmann::json(nullptr)}});
  }
  return j;
}

// The table (rank 0), the validation line, the JSON record; the exit status.
int report(const Settings& s, const std::vector<Variant>& variants, const Reference& ref, int p) {
  const apps::Table table({{"algo", 12, true}, {"ran", 12, true}, {"step_ms", 12}, {"comm_ms", 10},
                           {"compute_ms", 10}, {"interactions/s", 14}, {"ratio", 6}, {"max_dpos", 10},
                           {"energy_drift", 11}, {"validation", 0, true, "  "}});
  apps::Validation validation;
  const double pairs = static_cast<double>(s.prm.n) * static_cast<double>(s.prm.n - 1);
  std::string out = table.header() + "\n";
  double native = 0;
  for (const auto& v : variants) {
    if (!v.skipped.empty()) {
      out += table.row({v.name}) + " not run: " + v.skipped + "\n";
      continue;
    }
    validation.add(v.pass);
    const double step = apps::median(v.step);
    if (v.name == "native") native = step;
    out += table.row({v.name, v.ran, apps::fixed(step * 1e3, 4), apps::fixed(apps::median(v.comm) * 1e3, 4),
                      apps::fixed(apps::median(v.compute) * 1e3, 4), apps::scientific(step > 0 ? pairs / step : 0, 3),
                      apps::ratio(native > 0 ? std::optional<double>(step / native) : std::nullopt),
                      apps::scientific(v.error, 2), apps::scientific(v.drift, 2), v.pass ? "PASS" : "FAIL"}) +
           "\n";
  }
  if (apps::is_root()) {
    std::printf("%s(max_dpos: largest distance of a body from its serial reference position after the last step, "
                "tolerance %.1e; energy_drift: |E_end - E_0| / |E_0|)\n%s\n",
                out.c_str(), s.tolerance,
                validation.line("runs match the serial computation", "runs differ from the serial computation").c_str());
    apps::write_json(s.run.json, record(s, variants, ref, p, validation));
  }
  return validation.ok() ? 0 : 1;
}

int run(int argc, char** argv) {
  const Settings s = parse(argc, argv);
  const libcomm::Comm comm(MPI_COMM_WORLD);
  const libcomm::AllgatherOptions opts = allgather_options(s);
  std::vector<Variant> variants = build_variants(s, comm.size(), opts);
  const Reference ref = serial_reference(s.prm, comm.rank() == 0);
  if (comm.rank() == 0)
    std::printf("nbody: %zu bodies, %d steps of dt %g, softening %g (seed %llu), %d ranks; time = median over steps "
                "(and --reps runs) of the slowest rank; serial reference energy drift %.2e\n",
                s.prm.n, s.prm.steps, s.prm.dt, s.prm.eps, static_cast<unsigned long long>(s.prm.seed), comm.size(),
                ref.drift);
  ParallelNBody sim(comm, s.prm);
  apps::round_robin(s.run.reps, variants.size(), [&](int, std::size_t k) {
    if (variants[k].skipped.empty()) simulate(variants[k], sim, opts, s, ref, comm);
  });
  return report(s, variants, ref, comm.size());
}

}  // namespace
}  // namespace nbody

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "nbody", nbody::run); }
