// matvec: distributed dense matrix-vector product y = A x, vector-matrix product x^T A and
// rank-1 update A += y x^T in the layouts of paper 004, section 2 (rows or columns on a
// 1-D node array, a Pr x Pc node array in row-major or column-major order), built on
// libcomm's allgather and reduce_scatter. Every rank regenerates its part of the same
// seeded matrix and vectors; the result is checked against a serial Eigen product of the
// rows / columns the rank owns. See docs/apps/matvec_nbody.md.
//
// Flow (run): parse the options -> per layout and operation: build the variants (the
// applicable algorithms) -> a validated warm-up of each -> time them round-robin, the last
// repetition validated -> report.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "distributed_matrix.hpp"
#include "kernels/dense.hpp"
#include "libcomm/error.hpp"

namespace matvec {
namespace {

struct Settings {
  std::size_t n = 601, m = 0;
  std::string ops = "all", layouts = "all", grid, order = "binary";
  std::uint64_t seed = 2024;
  apps::RunOptions run = apps::RunOptions::defaults("all");
};

// What every case of a run shares: the parsed lists, the grid, the collectives' options,
// this rank's vector segments and serial references.
struct Setup {
  std::vector<Op> ops;
  std::vector<Layout> layouts;
  std::vector<AlgoPair> algos;
  kernels::Grid grid;
  libcomm::AllgatherOptions gopt;
  libcomm::ReduceScatterOptions ropt;
  std::vector<double> x_seg, v_seg, out;
  std::map<Op, std::vector<double>> ref_value, ref_bound;  // the product, and sum of |terms|
};

// One case (operation, layout) with one algorithm.
struct Variant {
  std::string op, layout, grid, skipped;
  const AlgoPair* algo = nullptr;
  std::string ran;
  std::vector<double> times, comm, compute;
  double error = 0, tol = 0;
  bool pass = false;
};

Settings parse(int argc, char** argv) {
  CLI::App app{"matvec: distributed y = A x, x^T A and A += y x^T on 1-D and 2-D node arrays "
               "(paper 004, s. 2) with libcomm's allgather and reduce_scatter; validated against "
               "a serial Eigen product of the same seeded matrix"};
  Settings s;
  app.add_option("--n", s.n, "matrix columns (length of x); also the rows unless --m is given")
      ->check(apps::number_in(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--m", s.m, "matrix rows (length of y); default: --n")->check(apps::number_in(0, 1 << 20));
  app.add_option("--op", s.ops, "matvec, vecmat, rank1 (comma list) or all")->capture_default_str();
  app.add_option("--layout", s.layouts, "rows, cols, grid_rowmajor, grid_colmajor (comma list) or all")
      ->capture_default_str();
  app.add_option("--grid", s.grid, "node array PrxPc of the grid layouts (default: most nearly square with Pr >= Pc)")
      ->check(apps::kNonEmpty);
  apps::add_run_options(app, s.run, apps::kAlgoOption | apps::kAutoOption | apps::kRepsOption | apps::kJsonOption |
                                        apps::kFlopModelOption,
                        "native, auto, ring, d_cycles, d_cycles_im, send_spread, butterfly (comma list) or all "
                        "(every applicable one except auto)",
                        "timed repetitions per case (median reported)");
  app.add_option("--order", s.order, "node order of ring: binary or gray")->capture_default_str();
  app.add_option("--seed", s.seed, "seed of the matrix and vectors")->check(apps::seed_number())->capture_default_str();
  apps::parse_command_line(app, argc, argv);
  apps::apply_run_options(app, s.run);
  if (s.m == 0 && !app.count("--m")) s.m = s.n;
  libcomm::require(s.n >= 1, "--n: the matrix needs at least 1 column (got 0)");
  libcomm::require(s.m >= 1, "--m: the matrix needs at least 1 row (got 0)");
  return s;
}

kernels::Grid parse_grid(const std::string& text, int p) {
  const auto x = text.find('x');
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 6 && std::all_of(s.begin(), s.end(), ::isdigit);
  };
  if (x == std::string::npos || !digits(text.substr(0, x)) || !digits(text.substr(x + 1)))
    throw libcomm::Error("--grid: '" + text + "' is not PrxPc (e.g. 2x3)");
  const int pr = std::stoi(text.substr(0, x)), pc = std::stoi(text.substr(x + 1));
  if (pr < 1 || pc < 1 || pr * pc != p)
    throw libcomm::Error("--grid " + text + ": Pr * Pc = " + std::to_string(pr * pc) + " but there are " +
                         std::to_string(p) + " ranks");
  return {pr, pc, kernels::GridOrder::ColMajor};
}

// The names of a list option, each turned into a value by from_name (an error names it).
template <class T, class FromName>
std::vector<T> parse_list(const std::string& text, const std::string& option, const std::vector<std::string>& all,
                          FromName from_name) {
  std::vector<T> out;
  for (const auto& name : apps::expand_list(text, option, all)) try {
      out.push_back(from_name(name));
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(option + ": " + e.what());
    }
  return out;
}

// Rows [first, first + count) of A x (transposed: columns of A^T v), the exact-as-possible
// value and the sum of |terms| (the scale of the rounding error), in chunks of 64 lines
// so that memory stays O(64 len).
void reference(Setup& su, Op op, std::uint64_t seed, std::size_t first, std::size_t count, std::size_t len) {
  const bool transposed = op == Op::VecMat;
  std::vector<double> x(len), absx(len), a(64 * len), &value = su.ref_value[op], &bound = su.ref_bound[op];
  value.assign(count, 0), bound.assign(count, 0);
  for (std::size_t j = 0; j < len; ++j) {
    x[j] = kernels::seeded_value(seed, transposed ? kVectorM : kVectorN, j, 0);
    absx[j] = std::abs(x[j]);
  }
  for (std::size_t i0 = 0; i0 < count; i0 += 64) {
    const std::size_t c = std::min<std::size_t>(64, count - i0);
    const auto product = transposed ? kernels::gemv_transposed : kernels::gemv;
    const std::size_t rows = transposed ? len : c, cols = transposed ? c : len;
    kernels::fill_seeded_block(a.data(), rows, cols, rows, seed, kMatrix, transposed ? 0 : first + i0,
                               transposed ? first + i0 : 0);
    product(a.data(), rows, cols, rows, x.data(), value.data() + i0);
    for (auto& v : a) v = std::abs(v);
    product(a.data(), rows, cols, rows, absx.data(), bound.data() + i0);
  }
}

Setup make_setup(const Settings& s, int rank, int p) {
  Setup su;
  su.ops = parse_list<Op>(s.ops, "--op", {"matvec", "vecmat", "rank1"}, op_from_name);
  su.layouts = parse_list<Layout>(s.layouts, "--layout", {"rows", "cols", "grid_rowmajor", "grid_colmajor"},
                                  layout_from_name);
  su.algos = parse_list<AlgoPair>(s.run.algo, "--algo", all_algo_names(), algo_pair_from_name);
  apps::reference_first(su.algos, [](const AlgoPair& a) { return a.name == "native"; });
  su.grid = s.grid.empty() ? kernels::square_grid(p, kernels::GridOrder::ColMajor) : parse_grid(s.grid, p);
  // The paper 004 tables show d_cycles only where a d-cube exists: its fallback to ring
  // would put ring's time under d_cycles' name, so this program refuses instead.
  su.gopt.allow_fallback = su.ropt.allow_fallback = false;
  try {
    su.gopt.order = su.ropt.order = libcomm::node_order_from_name(s.order);
  } catch (const libcomm::Error& e) {
    throw libcomm::Error(std::string("--order: ") + e.what());
  }
  // Vectors and references depend only on the rank (1-D distribution in rank order).
  const auto m_counts = kernels::even_counts(s.m, p), n_counts = kernels::even_counts(s.n, p);
  const auto m_offs = kernels::offsets_of(m_counts), n_offs = kernels::offsets_of(n_counts);
  const auto me = static_cast<std::size_t>(rank);
  for (std::size_t k = 0; k < n_counts[me]; ++k) su.x_seg.push_back(kernels::seeded_value(s.seed, kVectorN, n_offs[me] + k, 0));
  for (std::size_t k = 0; k < m_counts[me]; ++k) su.v_seg.push_back(kernels::seeded_value(s.seed, kVectorM, m_offs[me] + k, 0));
  for (Op op : su.ops) {
    if (op == Op::MatVec) reference(su, op, s.seed, m_offs[me], m_counts[me], s.n);
    if (op == Op::VecMat) reference(su, op, s.seed, n_offs[me], n_counts[me], s.m);
  }
  su.out.resize(std::max(m_counts[me], n_counts[me]) + 1);
  return su;
}

// Why `algo` cannot run `op` on this grid ("" when it can); the same on every rank.
std::string not_applicable(const AlgoPair& algo, Op op, const DistributedMatrix& dm, const Setup& su) {
  std::vector<std::pair<bool, int>> uses;  // (is allgather, sub-communicator size)
  if (op == Op::MatVec) uses = {{true, dm.column_size()}, {false, dm.row_size()}};
  if (op == Op::VecMat) uses = {{true, dm.row_size()}, {false, dm.column_size()}};
  if (op == Op::Rank1) uses = {{true, dm.row_size()}, {true, dm.column_size()}};
  for (auto [is_gather, size] : uses) try {
      if (size <= 1) continue;
      if (is_gather) libcomm::choose_allgather(algo.gather, size, su.gopt);
      else libcomm::choose_reduce_scatter(algo.reduce, size, su.ropt);
    } catch (const libcomm::Error& e) {
      return e.what();
    }
  return {};
}

// Every algorithm for this case; with --algo all the inapplicable ones are skipped, named
// they are an error.
std::vector<Variant> build_variants(const Settings& s, const Setup& su, Op op, Layout layout,
                                    const DistributedMatrix& dm) {
  std::vector<Variant> group;
  const std::string grid = std::to_string(dm.dist().grid.rows) + "x" + std::to_string(dm.dist().grid.cols);
  for (const auto& algo : su.algos) {
    Variant v;
    v.op = op_name(op);
    v.layout = layout_name(layout);
    v.grid = grid;
    v.algo = &algo;
    v.skipped = not_applicable(algo, op, dm, su);
    if (!v.skipped.empty() && s.run.algo != "all")
      throw libcomm::Error("--algo " + algo.name + " with layout " + v.layout + " (" + grid + "): " + v.skipped);
    group.push_back(v);
  }
  return group;
}

Phases run_once(const Variant& v, Op op, DistributedMatrix& dm, Setup& su, bool checked) {
  std::fill(su.out.begin(), su.out.end(), std::numeric_limits<double>::quiet_NaN());
  if (op == Op::Rank1) dm.reset_block();
  MPI_Barrier(MPI_COMM_WORLD);
  if (op == Op::MatVec) return dm.matvec(*v.algo, su.x_seg.data(), su.out.data(), checked, su.gopt, su.ropt);
  if (op == Op::VecMat) return dm.vecmat(*v.algo, su.v_seg.data(), su.out.data(), checked, su.gopt, su.ropt);
  return dm.rank1(*v.algo, su.v_seg.data(), su.x_seg.data(), checked, su.gopt);
}

// Largest relative error of this rank's result (NaN if anything is NaN): the product
// against the serial reference, the rank-1 update against the seeded entries.
double local_error(Op op, const DistributedMatrix& dm, const Setup& su, std::uint64_t seed) {
  double err = 0;
  if (op != Op::Rank1) {
    const auto &value = su.ref_value.at(op), &bound = su.ref_bound.at(op);
    for (std::size_t k = 0; k < value.size(); ++k) {
      const double d = std::abs(su.out[k] - value[k]), e = bound[k] > 0 ? d / bound[k] : d;
      if (std::isnan(e)) return e;
      err = std::max(err, e);
    }
    return err;
  }
  const std::size_t rows = dm.local_rows();
  for (std::size_t c = 0; c < dm.local_cols(); ++c)
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t i = dm.first_row() + r, j = dm.first_col() + c;
      const double a0 = kernels::seeded_value(seed, kMatrix, i, j), yx = kernels::seeded_value(seed, kVectorM, i, 0) *
                                                                        kernels::seeded_value(seed, kVectorN, j, 0);
      const double e = std::abs(dm.block()[r + c * rows] - (a0 + yx)) / (std::abs(a0) + std::abs(yx) + 1e-300);
      if (std::isnan(e)) return e;
      err = std::max(err, e);
    }
  return err;
}

// The verdict on every rank: the worst error over the ranks against the tolerance,
// 2 (n + P) eps for the products, 4 eps for the update.
void validate(Variant& v, Op op, const DistributedMatrix& dm, const Setup& su, const Settings& s, int p) {
  const double eps = std::numeric_limits<double>::epsilon(), err = local_error(op, dm, su, s.seed);
  const std::size_t len = op == Op::MatVec ? s.n : s.m;
  v.tol = op == Op::Rank1 ? 4.0 * eps : 2.0 * static_cast<double>(len + static_cast<std::size_t>(p)) * eps;
  const auto worst = apps::slowest({std::isnan(err) ? 1.0 : 0.0, std::isnan(err) ? 0.0 : err}, MPI_COMM_WORLD);
  v.error = worst[0] > 0 ? std::numeric_limits<double>::quiet_NaN() : worst[1];
  v.pass = worst[0] == 0 && worst[1] <= v.tol;
  v.ran = dm.gather_ran() + "/" + dm.reduce_ran();
}

// A validated warm-up (with the argument checks) of every variant, then --reps timed runs
// round-robin; the last one is validated again.
void time_group(std::vector<Variant>& group, Op op, DistributedMatrix& dm, Setup& su, const Settings& s, int p) {
  for (auto& v : group)
    if (v.skipped.empty()) run_once(v, op, dm, su, true), validate(v, op, dm, su, s, p);
  apps::round_robin(s.run.reps, group.size(), [&](int rep, std::size_t k) {
    Variant& v = group[k];
    if (!v.skipped.empty()) return;
    const Phases ph = run_once(v, op, dm, su, false);
    const auto worst = apps::slowest({ph.comm + ph.compute, ph.comm, ph.compute}, MPI_COMM_WORLD);
    v.times.push_back(worst[0]);
    v.comm.push_back(worst[1]);
    v.compute.push_back(worst[2]);
    const bool first_pass = v.pass;
    if (rep + 1 == s.run.reps) validate(v, op, dm, su, s, p), v.pass = v.pass && first_pass;
  });
}

const apps::Table kTable({{"op", 7, true}, {"layout", 14, true}, {"grid", 5, true}, {"algo", 12, true},
                          {"ran (allgather/rs)", 22, true}, {"time_ms", 10}, {"comm_ms", 10}, {"compute_ms", 10},
                          {"Mflop/s", 9}, {"ratio", 6}, {"rel_err", 9}, {"validation", 0, true, "  "}});

// Prints the group's rows (rank 0); in the JSON, "ran" is the requested name when both
// collectives ran as asked.
void print_group(std::vector<Variant>& group, const Settings& s, apps::Validation& validation) {
  double native = 0;
  for (auto& v : group) {
    if (!v.skipped.empty()) {
      if (apps::is_root())
        std::printf("%s not run: %s\n", kTable.row({v.op, v.layout, v.grid, v.algo->name}).c_str(), v.skipped.c_str());
      continue;
    }
    validation.add(v.pass);
    const double t = apps::median(v.times);
    if (v.algo->name == "native") native = t;
    const double mflops = t > 0 ? 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) / t / 1e6 : 0;
    if (apps::is_root())
      std::printf("%s\n", kTable.row({v.op, v.layout, v.grid, v.algo->name, v.ran, apps::fixed(t * 1e3, 4),
                                      apps::fixed(apps::median(v.comm) * 1e3, 4),
                                      apps::fixed(apps::median(v.compute) * 1e3, 4), apps::fixed(mflops, 1),
                                      apps::ratio(native > 0 ? std::optional<double>(t / native) : std::nullopt),
                                      apps::scientific(v.error, 2), v.pass ? "PASS" : "FAIL"}).c_str());
    const auto slash = v.ran.find('/');
    const std::string ag = v.ran.substr(0, slash), rs = v.ran.substr(slash + 1);
    if ((ag == "-" || ag == libcomm::allgather_algo_name(v.algo->gather)) &&
        (rs == "-" || rs == libcomm::reduce_scatter_algo_name(v.algo->reduce)))
      v.ran = v.algo->name;
  }
  std::fflush(stdout);
}

nlohmann::json record(const Settings& s, const std::vector<Variant>& all, int p, const apps::Validation& validation) {
  nlohmann::json j = {{"program", "matvec"}, {"ranks", p}, {"m", s.m}, {"n", s.n}, {"seed", s.seed},
                      {"reps", s.run.reps}, {"validation", validation.verdict()}, {"results", nlohmann::json::array()}};
  double native = 0;
  for (const auto& v : all) {
    const std::string kase = v.op + " " + v.layout + " " + v.grid;
    if (!v.skipped.empty()) {
      j["skipped"].push_back({{"case", kase}, {"algo", v.algo->name}, {"reason", v.skipped}});
      continue;
    }
    const double t = apps::median(v.times);
    if (v.algo->name == "native") native = t;
    j["results"].push_back(
        {{"algo", v.algo->name}, {"ran", v.ran}, {"case", kase}, {"op", v.op}, {"layout", v.layout},
         {"grid", v.grid}, {"block_bytes", 8 * s.n}, {"median_s", t}, {"comm_s", apps::median(v.comm)},
         {"compute_s", apps::median(v.compute)},
         {"mflops", t > 0 ? 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) / t / 1e6 : 0},
         {"times_s", v.times}, {"max_rel_error", v.error}, {"tolerance", v.tol},
         {"validation", v.pass ? "PASS" : "FAIL"},
         {"ratio_to_native", native > 0 ? nlohmann::json(t / native) : nlohmann::json(nullptr)}});
  }
  return j;
}

int run(int argc, char** argv) {
  const Settings s = parse(argc, argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  Setup su = make_setup(s, rank, p);
  if (rank == 0)
    std::printf("matvec: A is %zu x %zu (seed %llu), %d ranks, %d reps; vectors spread evenly over the ranks; times = "
                "median over reps of the slowest rank\n%s\n",
                s.m, s.n, static_cast<unsigned long long>(s.seed), p, s.run.reps, kTable.header().c_str());
  std::vector<Variant> all;
  apps::Validation validation;
  for (Layout layout : su.layouts) {
    DistributedMatrix dm(MPI_COMM_WORLD, s.m, s.n, layout_grid(layout, p, su.grid), s.seed);
    for (Op op : su.ops) {
      std::vector<Variant> group = build_variants(s, su, op, layout, dm);
      time_group(group, op, dm, su, s, p);
      print_group(group, s, validation);
      all.insert(all.end(), group.begin(), group.end());
    }
  }
  if (rank == 0) {
    std::printf("(rel_err: largest |y - y_ref| / (|A| |x|) over the result entries, against a serial Eigen product; "
                "tolerance 2 (n + P) eps for products, 4 eps for rank-1)\n%s\n",
                validation.line("cases match the serial Eigen reference", "cases differ from the serial Eigen reference")
                    .c_str());
    apps::write_json(s.run.json, record(s, all, p, validation));
  }
  return validation.ok() ? 0 : 1;
}

}  // namespace
}  // namespace matvec

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "matvec", matvec::run); }
