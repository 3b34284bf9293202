// transpose: a distributed N x N matrix transpose with libcomm::alltoall, the template of a
// validated, timed app (docs/apps/template.md). Rank r holds rows [rR, rR + R) of A, with
// R = N / P and A[i][j] = i N + j; afterwards it holds the same rows of A^T.
#include <CLI/CLI.hpp>
#include <cstdio>
#include "apps/common.hpp"
#include "libcomm/libcomm.hpp"

struct Settings {
  std::size_t n = 512;
  apps::RunOptions run = apps::RunOptions::defaults("native,pairwise,bruck");
};

struct Variant {  // one algorithm: what ran, its times, whether every run was right
  std::string name, ran;
  libcomm::AlltoallAlgo algo{};
  std::vector<double> times;
  bool pass = true;
};

Settings parse(int argc, char** argv) {
  CLI::App app{"transpose: an N x N matrix transposed across the ranks by libcomm::alltoall"};
  Settings s;
  app.add_option("--n", s.n, "matrix size N, a multiple of the ranks")
      ->check(CLI::Range(1, 1 << 14))->capture_default_str();
  apps::add_run_options(app, s.run, apps::kAlgoOption | apps::kAutoOption | apps::kRepsOption |
                                        apps::kJsonOption, "all-to-all algorithms (comma list)");
  apps::parse_command_line(app, argc, argv);
  apps::apply_run_options(app, s.run);
  return s;
}

std::vector<Variant> build_variants(const Settings& s) {
  std::vector<Variant> variants;
  for (const auto& name : apps::split_list(s.run.algo, "--algo")) try {
      variants.push_back({name, "", libcomm::alltoall_algo_from_name(name)});
    } catch (const libcomm::Error& e) {
      throw libcomm::Error("--algo: " + std::string(e.what()));
    }
  apps::reference_first(variants, [](const Variant& v) { return v.name == "native"; });
  return variants;
}

// One transpose, checked: my rows go out as one R x R block per destination; row a of the
// result is column r R + a of the blocks that arrive. Returns the exchange's seconds.
double transpose(Variant& v, std::size_t n, const libcomm::Comm& comm, bool first) {
  const std::size_t p = comm.size(), r = comm.rank(), rows = n / p;
  std::vector<double> send(rows * n), recv(rows * n);
  for (std::size_t k = 0; k < rows * n; ++k)  // block d, row a, column b: A[rR + a][dR + b]
    send[k] = double((r * rows + k / rows % rows) * n + k / (rows * rows) * rows + k % rows);
  libcomm::AlltoallOptions opts;
  opts.check_args = first;  // the first run also checks the arguments on every rank
  MPI_Barrier(comm.mpi());
  const double t0 = MPI_Wtime();
  v.ran = libcomm::alltoall_algo_name(libcomm::alltoall<double>(send, recv, comm, v.algo, opts));
  const double seconds = MPI_Wtime() - t0;
  for (std::size_t a = 0; a < rows; ++a)  // A^T[rR + a][j] = A[j][rR + a]: block j/R, (j%R, a)
    for (std::size_t j = 0; j < n; ++j)
      v.pass &= recv[j * rows + a] == double(j * n + r * rows + a);
  return seconds;
}

int report(const Settings& s, std::vector<Variant>& variants, const libcomm::Comm& comm) {
  const apps::Table table({{"algo", 12, true}, {"ran", 14, true}, {"median_us", 12},
                           {"ratio", 7}, {"valid", 0, true, "  "}});
  apps::Validation validation;
  nlohmann::json j = {{"program", "transpose"}, {"ranks", comm.size()}, {"n", s.n}};
  std::string text = table.header() + "\n";
  for (auto& v : variants) {
    v.pass = apps::slowest(v.pass ? 0.0 : 1.0, comm.mpi()) == 0;  // right on every rank
    validation.add(v.pass);
    const double t = apps::median(v.times), ratio = t / apps::median(variants[0].times);
    const char* verdict = v.pass ? "PASS" : "FAIL";
    text += table.row({v.name, v.ran, apps::fixed(t * 1e6, 1), apps::fixed(ratio, 2), verdict});
    text += "\n";
    j["results"].push_back({{"algo", v.name}, {"ran", v.ran}, {"median_s", t}, {"valid", verdict}});
  }
  j["validation"] = validation.verdict();
  if (apps::is_root()) {
    std::printf("%s%s\n", text.c_str(), validation.line("algorithms", "algorithms").c_str());
    apps::write_json(s.run.json, j);
  }
  return validation.ok() ? 0 : 1;
}

int run(int argc, char** argv) {
  const Settings s = parse(argc, argv);                                      // parse
  const libcomm::Comm comm(MPI_COMM_WORLD);
  libcomm::require(s.n % comm.size() == 0, "--n: must be a multiple of the number of ranks");
  std::vector<Variant> variants = build_variants(s);                         // build variants
  for (auto& v : variants) transpose(v, s.n, comm, true);                    // validate
  apps::round_robin(s.run.reps, variants.size(), [&](int, std::size_t k) {   // time
    const double seconds = transpose(variants[k], s.n, comm, false);
    variants[k].times.push_back(apps::slowest(seconds, comm.mpi()));
  });
  return report(s, variants, comm);                                          // report
}

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "transpose", run); }
