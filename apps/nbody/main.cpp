// nbody: direct gravitational N-body (Plummer softening, leapfrog) where every step
// all-gathers positions and masses with a libcomm allgather algorithm, or shifts them
// around a ring overlapped with the force computation (systolic). Each run is checked
// against a serial computation of the same steps on rank 0; energy drift is reported.
// See docs/apps/matvec_nbody.md.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "kernels/nbody.hpp"
#include "libcomm/error.hpp"
#include "parallel_nbody.hpp"

namespace nbody {
namespace {

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

struct Row {
  std::string algo, ran, note;
  bool run = false, pass = false;
  double median = 0, comm = 0, compute = 0, rate = 0, error = 0, drift = 0;
  std::optional<double> ratio;
  std::vector<double> times;
};

int run(int argc, char** argv) {
  CLI::App app{"nbody: direct N-body whose every step all-gathers positions and masses with a "
               "libcomm allgather algorithm (or a systolic ring overlapped with the forces); "
               "validated against a serial computation of the same steps"};
  Params prm;
  std::string algo_list = "all", order = "binary", json_path;
  double tol = 1e-9;
  int reps = 1;
  app.add_option("--n", prm.n, "number of bodies")->check(apps::number_in(0, 1 << 24))->capture_default_str();
  app.add_option("--steps", prm.steps, "leapfrog steps")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--dt", prm.dt, "time step")->check(apps::positive_number(1e6))->capture_default_str();
  app.add_option("--eps", prm.eps, "softening length")->check(apps::positive_number(1e6))->capture_default_str();
  app.add_option("--reps", reps, "simulations per algorithm, run round-robin (medians over all "
                                 "their steps)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--seed", prm.seed, "seed of the initial state")->check(apps::seed_number())->capture_default_str();
  app.add_option("--algo", algo_list,
                 "native, auto, ring, d_cycles, d_cycles_im, send_spread, butterfly, systolic (comma "
                 "list) or all (every applicable one except auto)")
      ->capture_default_str();
  app.add_option("--order", order, "node order of ring: binary or gray")->capture_default_str();
  app.add_option("--tolerance", tol, "largest allowed distance between a body and its serial "
                                     "reference position after the last step (system radius 1)")
      ->check(apps::number_in(0, 1e6))
      ->capture_default_str();
  app.add_option("--json", json_path, "also write the results as JSON to this file")->check(apps::kWritableFile);
  double model_gflops = 0;
  apps::add_flop_model_option(app, model_gflops);
  apps::parse_command_line(app, argc, argv);
  apps::apply_flop_model(model_gflops);
  libcomm::require(prm.n >= 1, "--n: need at least 1 body (got 0)");
  // The validation gathers all bodies on rank 0 with int counts and displacements.
  libcomm::require(prm.n <= static_cast<std::size_t>(INT_MAX / 4),
                   "--n: at most " + std::to_string(INT_MAX / 4) + " bodies (got " +
                       std::to_string(prm.n) + ")");

  libcomm::Comm comm(MPI_COMM_WORLD);
  const int rank = comm.rank(), p = comm.size();
  libcomm::AllgatherOptions opts;
  // The paper 004 comparisons show d_cycles only where a d-cube exists: its fallback to
  // ring would put ring's time under d_cycles' name, so this program refuses instead.
  opts.allow_fallback = false;
  try {
    opts.order = libcomm::node_order_from_name(order);
  } catch (const libcomm::Error& e) {
    throw libcomm::Error(std::string("--order: ") + e.what());
  }
  const bool all_algos = algo_list == "all";
  const std::vector<std::string> names =
      all_algos ? std::vector<std::string>{"native", "ring", "d_cycles", "d_cycles_im", "send_spread",
                                           "butterfly", "systolic"}
                : split_list(algo_list);
  libcomm::require(!names.empty(), "--algo: no algorithm named");
  struct Choice {
    std::string name;
    bool systolic = false;
    libcomm::AllgatherAlgo algo = libcomm::AllgatherAlgo::Native;
    std::string not_applicable;
  };
  std::vector<Choice> choices;
  for (const auto& name : names) {
    Choice c;
    c.name = name;
    if (name == "systolic") {
      c.systolic = true;
    } else {
      try {
        c.algo = libcomm::allgather_algo_from_name(name);
      } catch (const libcomm::Error& e) {
        throw libcomm::Error(std::string("--algo: ") + e.what() + " (or systolic)");
      }
      try {
        libcomm::choose_allgather(c.algo, p, opts);
      } catch (const libcomm::Error& e) {
        if (!all_algos) throw libcomm::Error("--algo " + name + ": " + e.what());
        c.not_applicable = e.what();
      }
    }
    choices.push_back(c);
  }

  // The reference first: every ratio divides by its median.
  std::stable_partition(choices.begin(), choices.end(), [](const Choice& c) { return c.name == "native"; });

  // The serial reference on rank 0: the same initial state and steps, all bodies at once.
  const double eps2 = prm.eps * prm.eps;
  std::vector<double> ref_bodies, ref_vel;
  double e0 = 0, ref_drift = 0;
  if (rank == 0) {
    ref_bodies.resize(4 * prm.n);
    ref_vel.resize(3 * prm.n);
    kernels::initial_bodies(prm.seed, prm.n, 0, prm.n, ref_bodies.data(), ref_vel.data());
    e0 = kernels::total_energy(ref_bodies.data(), ref_vel.data(), prm.n, eps2);
    kernels::serial_leapfrog(ref_bodies.data(), ref_vel.data(), prm.n, prm.steps, prm.dt, eps2);
    ref_drift = std::abs(kernels::total_energy(ref_bodies.data(), ref_vel.data(), prm.n, eps2) - e0) /
                std::abs(e0);
    std::printf("nbody: %zu bodies, %d steps of dt %g, softening %g (seed %llu), %d ranks; time = "
                "median over steps (and --reps runs) of the slowest rank; serial reference energy drift %.2e\n",
                prm.n, prm.steps, prm.dt, prm.eps, static_cast<unsigned long long>(prm.seed), p,
                ref_drift);
    std::printf("%-12s %-12s %12s %10s %10s %14s %6s %10s %11s  %s\n", "algo", "ran", "step_ms",
                "comm_ms", "compute_ms", "interactions/s", "ratio", "max_dpos", "energy_drift",
                "validation");
  }

  ParallelNBody sim(comm, prm);
  std::vector<Row> rows;
  int failures = 0;
  double native_median = 0;
  const std::size_t steps = static_cast<std::size_t>(prm.steps);
  std::vector<int> recv_counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
  for (int k = 0; k < p; ++k) {
    recv_counts[static_cast<std::size_t>(k)] = static_cast<int>(4 * sim.counts()[static_cast<std::size_t>(k)]);
    displs[static_cast<std::size_t>(k)] = static_cast<int>(4 * sim.offsets()[static_cast<std::size_t>(k)]);
  }
  // Runs round-robin: repetition r runs every algorithm once, so load on the shared
  // machine hits all of them alike. Every run is validated.
  for (const auto& c : choices) {
    Row row;
    row.algo = c.name;
    row.note = c.not_applicable;
    row.run = c.not_applicable.empty();
    row.pass = true;
    rows.push_back(row);
  }
  std::vector<std::vector<double>> comm_t(rows.size()), comp_t(rows.size());
  for (int rep = 0; rep < reps; ++rep)
    for (std::size_t k = 0; k < choices.size(); ++k) {
      const auto& c = choices[k];
      Row& row = rows[k];
      if (!row.run) continue;
      MPI_Barrier(comm.mpi());
      const auto phases = sim.run(c.systolic, c.algo, opts);
      row.ran = sim.ran();
      // Slowest rank per step; the medians are taken over all steps of all repetitions.
      std::vector<double> local(3 * steps), worst(3 * steps);
      for (std::size_t s = 0; s < steps; ++s) {
        local[3 * s] = phases[s].comm + phases[s].compute;
        local[3 * s + 1] = phases[s].comm;
        local[3 * s + 2] = phases[s].compute;
      }
      MPI_Allreduce(local.data(), worst.data(), static_cast<int>(3 * steps), MPI_DOUBLE, MPI_MAX,
                    comm.mpi());
      for (std::size_t s = 0; s < steps; ++s) {
        row.times.push_back(worst[3 * s]);
        comm_t[k].push_back(worst[3 * s + 1]);
        comp_t[k].push_back(worst[3 * s + 2]);
      }
      // Validation: final positions against the serial reference, on rank 0.
      std::vector<double> final_bodies(rank == 0 ? 4 * prm.n : 0);
      MPI_Gatherv(sim.bodies().data(), static_cast<int>(sim.bodies().size()), MPI_DOUBLE,
                  final_bodies.data(), recv_counts.data(), displs.data(), MPI_DOUBLE, 0, comm.mpi());
      std::vector<double> final_vel(rank == 0 ? 3 * prm.n : 0);
      std::vector<int> vcounts(recv_counts), vdispls(displs);
      for (std::size_t q = 0; q < vcounts.size(); ++q) {
        vcounts[q] = vcounts[q] / 4 * 3;
        vdispls[q] = vdispls[q] / 4 * 3;
      }
      MPI_Gatherv(sim.velocities().data(), static_cast<int>(sim.velocities().size()), MPI_DOUBLE,
                  final_vel.data(), vcounts.data(), vdispls.data(), MPI_DOUBLE, 0, comm.mpi());
      int pass = 0;
      if (rank == 0) {
        double err = 0;
        bool nan = false;
        for (std::size_t b = 0; b < prm.n; ++b) {
          double d2 = 0;
          for (int q = 0; q < 3; ++q) {
            const double d = final_bodies[4 * b + q] - ref_bodies[4 * b + q];
            d2 += d * d;
          }
          nan |= std::isnan(d2);
          err = std::max(err, std::sqrt(d2));
        }
        row.error = (nan || std::isnan(row.error)) ? NAN : std::max(row.error, err);
        row.drift = std::abs(kernels::total_energy(final_bodies.data(), final_vel.data(), prm.n, eps2) - e0) /
                    std::abs(e0);
        pass = !nan && err <= tol;
      }
      MPI_Bcast(&pass, 1, MPI_INT, 0, comm.mpi());
      row.pass = row.pass && pass != 0;
    }
  const double pairs = static_cast<double>(prm.n) * static_cast<double>(prm.n - 1);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    Row& row = rows[k];
    if (!row.run) {
      if (rank == 0) std::printf("%-12s not run: %s\n", row.algo.c_str(), row.note.c_str());
      continue;
    }
    row.median = apps::median(row.times);
    row.comm = apps::median(comm_t[k]);
    row.compute = apps::median(comp_t[k]);
    row.rate = row.median > 0 ? pairs / row.median : 0;
    if (row.algo == "native") native_median = row.median;
    if (native_median > 0) row.ratio = row.median / native_median;
    failures += row.pass ? 0 : 1;
    if (rank == 0) {
      std::ostringstream ratio;
      if (row.ratio) ratio << std::fixed << std::setprecision(2) << *row.ratio;
      std::printf("%-12s %-12s %12.4f %10.4f %10.4f %14.3e %6s %10.2e %11.2e  %s\n", row.algo.c_str(),
                  row.ran.c_str(), row.median * 1e3, row.comm * 1e3, row.compute * 1e3, row.rate,
                  ratio.str().c_str(), row.error, row.drift, row.pass ? "PASS" : "FAIL");
      std::fflush(stdout);
    }
  }
  int ran = 0;
  for (const auto& r : rows) ran += r.run;
  const bool ok = failures == 0 && ran > 0;
  if (rank == 0) {
    std::printf("(max_dpos: largest distance of a body from its serial reference position after "
                "the last step, tolerance %.1e; energy_drift: |E_end - E_0| / |E_0|)\n", tol);
    if (ok)
      std::printf("validation: PASS (%d runs match the serial computation)\n", ran);
    else if (ran == 0)
      std::printf("validation: FAIL (no run)\n");
    else
      std::printf("validation: FAIL (%d of %d runs differ from the serial computation)\n", failures, ran);
    if (!json_path.empty()) {
      nlohmann::json j;
      j["program"] = "nbody";
      j["ranks"] = p;
      j["n"] = prm.n;
      j["steps"] = prm.steps;
      j["dt"] = prm.dt;
      j["eps"] = prm.eps;
      j["seed"] = prm.seed;
      j["reps"] = reps;
      j["tolerance"] = tol;
      j["reference_energy_drift"] = ref_drift;
      j["validation"] = ok ? "PASS" : "FAIL";
      j["results"] = nlohmann::json::array();
      for (const auto& r : rows) {
        if (!r.run) {
          j["skipped"].push_back({{"algo", r.algo}, {"reason", r.note}});
          continue;
        }
        nlohmann::json e = {{"algo", r.algo}, {"ran", r.ran}, {"block_bytes", 32 * prm.n},
                            {"median_s", r.median}, {"comm_s", r.comm}, {"compute_s", r.compute},
                            {"interactions_per_s", r.rate}, {"times_s", r.times},
                            {"max_position_error", r.error}, {"energy_drift", r.drift},
                            {"validation", r.pass ? "PASS" : "FAIL"}};
        e["ratio_to_native"] = r.ratio ? nlohmann::json(*r.ratio) : nlohmann::json(nullptr);
        j["results"].push_back(e);
      }
      std::ofstream f(json_path);
      libcomm::require(static_cast<bool>(f), "--json: cannot write '" + json_path + "'");
      f << j.dump(2) << "\n";
    }
  }
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace nbody

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "nbody", nbody::run); }
