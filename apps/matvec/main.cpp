// matvec: distributed dense matrix-vector product y = A x, vector-matrix product x^T A and
// rank-1 update A += y x^T in the layouts of paper 004, section 2 (rows or columns on a
// 1-D node array, a Pr x Pc node array in row-major or column-major order), built on
// libcomm's allgather and reduce_scatter. Every rank regenerates its part of the same
// seeded matrix and vectors; the result is checked against a serial Eigen product of the
// rows / columns the rank owns. See docs/apps/matvec_nbody.md.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common.hpp"
#include "distributed_matrix.hpp"
#include "kernels/dense.hpp"
#include "libcomm/error.hpp"

namespace matvec {
namespace {

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
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
    throw libcomm::Error("--grid " + text + ": Pr * Pc = " + std::to_string(pr * pc) +
                         " but there are " + std::to_string(p) + " ranks");
  return {pr, pc, kernels::GridOrder::ColMajor};
}

// The serial references this rank checks its segment against, built once per run with
// Eigen over the full rows / columns of the seeded matrix the segment depends on.
struct Reference {
  std::vector<double> value;  // the exact-as-possible result
  std::vector<double> bound;  // sum of |terms|: the scale of the rounding error
};

// Rows [row0, row0 + rows) of A x, in chunks of rows so that memory stays O(chunk * N).
Reference reference_matvec(std::uint64_t seed, std::size_t row0, std::size_t rows, std::size_t n) {
  Reference r{std::vector<double>(rows), std::vector<double>(rows)};
  std::vector<double> x(n), absx(n);
  for (std::size_t j = 0; j < n; ++j) {
    x[j] = kernels::seeded_value(seed, kVectorN, j, 0);
    absx[j] = std::abs(x[j]);
  }
  const std::size_t chunk = 64;
  std::vector<double> a(chunk * n);
  for (std::size_t i0 = 0; i0 < rows; i0 += chunk) {
    const std::size_t c = std::min(chunk, rows - i0);
    kernels::fill_seeded_block(a.data(), c, n, c, seed, kMatrix, row0 + i0, 0);
    kernels::gemv(a.data(), c, n, c, x.data(), r.value.data() + i0);
    for (auto& v : a) v = std::abs(v);
    kernels::gemv(a.data(), c, n, c, absx.data(), r.bound.data() + i0);
  }
  return r;
}

// Columns [col0, col0 + cols) of A^T v (v of length m).
Reference reference_vecmat(std::uint64_t seed, std::size_t col0, std::size_t cols, std::size_t m) {
  Reference r{std::vector<double>(cols), std::vector<double>(cols)};
  std::vector<double> v(m), absv(m);
  for (std::size_t i = 0; i < m; ++i) {
    v[i] = kernels::seeded_value(seed, kVectorM, i, 0);
    absv[i] = std::abs(v[i]);
  }
  const std::size_t chunk = 64;
  std::vector<double> a(m * chunk);
  for (std::size_t j0 = 0; j0 < cols; j0 += chunk) {
    const std::size_t c = std::min(chunk, cols - j0);
    kernels::fill_seeded_block(a.data(), m, c, m, seed, kMatrix, 0, col0 + j0);
    kernels::gemv_transposed(a.data(), m, c, m, v.data(), r.value.data() + j0);
    for (auto& e : a) e = std::abs(e);
    kernels::gemv_transposed(a.data(), m, c, m, absv.data(), r.bound.data() + j0);
  }
  return r;
}

// Largest |got - want| / bound (NaN if anything is NaN).
double relative_error(const double* got, const Reference& ref) {
  double err = 0;
  for (std::size_t k = 0; k < ref.value.size(); ++k) {
    const double d = std::abs(got[k] - ref.value[k]);
    const double e = ref.bound[k] > 0 ? d / ref.bound[k] : d;
    if (std::isnan(e)) return std::numeric_limits<double>::quiet_NaN();
    err = std::max(err, e);
  }
  return err;
}

// The local block after A += v x^T against the seeded entries.
double rank1_error(const DistributedMatrix& d, std::uint64_t seed) {
  double err = 0;
  const auto& a = d.block();
  const std::size_t rows = d.local_rows(), cols = d.local_cols();
  for (std::size_t c = 0; c < cols; ++c) {
    const std::size_t j = d.first_col() + c;
    const double xj = kernels::seeded_value(seed, kVectorN, j, 0);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t i = d.first_row() + r;
      const double a0 = kernels::seeded_value(seed, kMatrix, i, j);
      const double yi = kernels::seeded_value(seed, kVectorM, i, 0);
      const double want = a0 + yi * xj;
      const double e = std::abs(a[r + c * rows] - want) / (std::abs(a0) + std::abs(yi * xj) + 1e-300);
      if (std::isnan(e)) return std::numeric_limits<double>::quiet_NaN();
      err = std::max(err, e);
    }
  }
  return err;
}

struct Row {
  std::string op, layout, grid, algo, ran, note;
  bool run = false, pass = false;
  double median = 0, comm = 0, compute = 0, mflops = 0, error = 0, tol = 0;
  std::optional<double> ratio;
  std::vector<double> times;
};

int run(int argc, char** argv) {
  CLI::App app{"matvec: distributed y = A x, x^T A and A += y x^T on 1-D and 2-D node arrays "
               "(paper 004, s. 2) with libcomm's allgather and reduce_scatter; validated against "
               "a serial Eigen product of the same seeded matrix"};
  std::size_t n = 601, m = 0;
  std::string ops_list = "all", layouts_list = "all", algo_list = "all", grid_text, order = "binary",
              json_path;
  int reps = 5;
  std::uint64_t seed = 2024;
  app.add_option("--n", n, "matrix columns (length of x); also the rows unless --m is given")
      ->check(apps::number_in(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--m", m, "matrix rows (length of y); default: --n")->check(apps::number_in(0, 1 << 20));
  app.add_option("--op", ops_list, "matvec, vecmat, rank1 (comma list) or all")->capture_default_str();
  app.add_option("--layout", layouts_list,
                 "rows, cols, grid_rowmajor, grid_colmajor (comma list) or all")
      ->capture_default_str();
  app.add_option("--grid", grid_text, "node array PrxPc of the grid layouts (default: most nearly "
                                      "square with Pr >= Pc)")
      ->check(apps::kNonEmpty);
  app.add_option("--algo", algo_list,
                 "native, auto, ring, d_cycles, d_cycles_im, send_spread, butterfly (comma list) or "
                 "all (every applicable one except auto)")
      ->capture_default_str();
  app.add_option("--order", order, "node order of ring: binary or gray")->capture_default_str();
  app.add_option("--reps", reps, "timed repetitions per case (median reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--seed", seed, "seed of the matrix and vectors")->check(apps::seed_number())->capture_default_str();
  app.add_option("--json", json_path, "also write the results as JSON to this file")->check(apps::kWritableFile);
  double model_gflops = 0;
  apps::add_flop_model_option(app, model_gflops);
  apps::parse_command_line(app, argc, argv);
  apps::apply_flop_model(model_gflops);

  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (m == 0 && !app.count("--m")) m = n;
  libcomm::require(n >= 1, "--n: the matrix needs at least 1 column (got 0)");
  libcomm::require(m >= 1, "--m: the matrix needs at least 1 row (got 0)");

  std::vector<Op> ops;
  for (const auto& s : split_list(ops_list == "all" ? "matvec,vecmat,rank1" : ops_list)) try {
      ops.push_back(op_from_name(s));
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--op: ") + e.what());
    }
  std::vector<Layout> layouts;
  for (const auto& s :
       split_list(layouts_list == "all" ? "rows,cols,grid_rowmajor,grid_colmajor" : layouts_list)) try {
      layouts.push_back(layout_from_name(s));
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--layout: ") + e.what());
    }
  const bool all_algos = algo_list == "all";
  std::vector<AlgoPair> algos;
  for (const auto& s : all_algos ? all_algo_names() : split_list(algo_list)) try {
      algos.push_back(algo_pair_from_name(s));
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--algo: ") + e.what());
    }
  // The reference first: every ratio divides by its median.
  std::stable_partition(algos.begin(), algos.end(), [](const AlgoPair& a) { return a.name == "native"; });
  libcomm::require(!ops.empty() && !layouts.empty() && !algos.empty(),
                   "--op, --layout and --algo need at least one name each");
  const kernels::Grid grid = grid_text.empty() ? kernels::square_grid(p, kernels::GridOrder::ColMajor)
                                               : parse_grid(grid_text, p);
  libcomm::AllgatherOptions gopt;
  libcomm::ReduceScatterOptions ropt;
  // The paper 004 tables show d_cycles only where a d-cube exists: its fallback to ring
  // would put ring's time under d_cycles' name, so this program refuses instead.
  gopt.allow_fallback = ropt.allow_fallback = false;
  try {
    gopt.order = ropt.order = libcomm::node_order_from_name(order);
  } catch (const libcomm::Error& e) {
    throw libcomm::Error(std::string("--order: ") + e.what());
  }

  // Vectors and references depend only on the rank (1-D distribution in rank order).
  const auto m_counts = kernels::even_counts(m, p), n_counts = kernels::even_counts(n, p);
  const auto m_offs = kernels::offsets_of(m_counts), n_offs = kernels::offsets_of(n_counts);
  const auto me = static_cast<std::size_t>(rank);
  std::vector<double> x_seg(n_counts[me]), v_seg(m_counts[me]);
  for (std::size_t k = 0; k < x_seg.size(); ++k)
    x_seg[k] = kernels::seeded_value(seed, kVectorN, n_offs[me] + k, 0);
  for (std::size_t k = 0; k < v_seg.size(); ++k)
    v_seg[k] = kernels::seeded_value(seed, kVectorM, m_offs[me] + k, 0);
  std::map<Op, Reference> refs;
  for (Op op : ops) {
    if (op == Op::MatVec) refs[op] = reference_matvec(seed, m_offs[me], m_counts[me], n);
    if (op == Op::VecMat) refs[op] = reference_vecmat(seed, n_offs[me], n_counts[me], m);
  }
  const double eps = std::numeric_limits<double>::epsilon();

  if (rank == 0) {
    std::printf("matvec: A is %zu x %zu (seed %llu), %d ranks, %d reps; vectors spread evenly "
                "over the ranks; times = median over reps of the slowest rank\n",
                m, n, static_cast<unsigned long long>(seed), p, reps);
    std::printf("%-7s %-14s %-5s %-12s %-22s %10s %10s %10s %9s %6s %9s  %s\n", "op", "layout",
                "grid", "algo", "ran (allgather/rs)", "time_ms", "comm_ms", "compute_ms",
                "Mflop/s", "ratio", "rel_err", "validation");
  }
  std::vector<Row> rows;
  int failures = 0;
  std::vector<double> out(std::max(m_counts[me], n_counts[me]) + 1);
  for (Layout layout : layouts) {
    const kernels::Grid g = layout_grid(layout, p, grid);
    DistributedMatrix dm(MPI_COMM_WORLD, m, n, g, seed);
    const std::string grid_name = std::to_string(g.rows) + "x" + std::to_string(g.cols);
    for (Op op : ops) {
      // Every applicable algorithm of this op and layout, then the repetitions round-robin
      // over them (as commbench does), so that a burst of load on the shared machine hits
      // all of them alike rather than one.
      std::vector<Row> group;
      std::vector<const AlgoPair*> group_algo;
      std::vector<std::vector<double>> comm_t, comp_t;
      for (const auto& algo : algos) {
        Row row;
        row.op = op_name(op);
        row.layout = layout_name(layout);
        row.grid = grid_name;
        row.algo = algo.name;
        // Which collectives run on which sub-communicator sizes (size 1: none).
        std::vector<std::pair<bool, int>> uses;  // (is allgather, size)
        if (op == Op::MatVec) uses = {{true, dm.column_size()}, {false, dm.row_size()}};
        if (op == Op::VecMat) uses = {{true, dm.row_size()}, {false, dm.column_size()}};
        if (op == Op::Rank1) uses = {{true, dm.row_size()}, {true, dm.column_size()}};
        std::string why;
        for (auto [is_gather, size] : uses) {
          if (size <= 1) continue;
          try {
            if (is_gather) libcomm::choose_allgather(algo.gather, size, gopt);
            else libcomm::choose_reduce_scatter(algo.reduce, size, ropt);
          } catch (const libcomm::Error& e) {
            why = e.what();
            break;
          }
        }
        if (!why.empty()) {
          // Same decision on every rank (it depends on the grid only).
          if (!all_algos) throw libcomm::Error("--algo " + algo.name + " with layout " + row.layout +
                                               " (" + grid_name + "): " + why);
          row.note = why;
        } else {
          row.run = true;
        }
        group.push_back(row);
        group_algo.push_back(&algo);
        comm_t.emplace_back();
        comp_t.emplace_back();
      }
      auto once = [&](const AlgoPair& algo, bool checked) {
        std::fill(out.begin(), out.end(), std::numeric_limits<double>::quiet_NaN());
        if (op == Op::Rank1) dm.reset_block();
        MPI_Barrier(MPI_COMM_WORLD);
        if (op == Op::MatVec) return dm.matvec(algo, x_seg.data(), out.data(), checked, gopt, ropt);
        if (op == Op::VecMat) return dm.vecmat(algo, v_seg.data(), out.data(), checked, gopt, ropt);
        return dm.rank1(algo, v_seg.data(), x_seg.data(), checked, gopt);
      };
      for (std::size_t k = 0; k < group.size(); ++k)
        if (group[k].run) once(*group_algo[k], true);  // warm-up with argument checks, not timed
      for (int r = 0; r < reps; ++r)
        for (std::size_t k = 0; k < group.size(); ++k) {
          if (!group[k].run) continue;
          Row& row = group[k];
          const AlgoPair& algo = *group_algo[k];
          const Phases ph = once(algo, false);
          double local[3] = {ph.comm + ph.compute, ph.comm, ph.compute}, worst[3];
          MPI_Allreduce(local, worst, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          row.times.push_back(worst[0]);
          comm_t[k].push_back(worst[1]);
          comp_t[k].push_back(worst[2]);
          if (r + 1 < reps) continue;
          // Validation of the last repetition, before the next algorithm overwrites it.
          double err = 0;
          if (op == Op::MatVec) {
            err = relative_error(out.data(), refs[op]);
            row.tol = 2.0 * static_cast<double>(n + static_cast<std::size_t>(p)) * eps;
          } else if (op == Op::VecMat) {
            err = relative_error(out.data(), refs[op]);
            row.tol = 2.0 * static_cast<double>(m + static_cast<std::size_t>(p)) * eps;
          } else {
            err = rank1_error(dm, seed);
            row.tol = 4.0 * eps;
          }
          double bad_local = std::isnan(err) ? 1.0 : 0.0, bad = 0;
          MPI_Allreduce(&bad_local, &bad, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          double worst_err = 0;
          if (std::isnan(err)) err = 0;
          MPI_Allreduce(&err, &worst_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          row.error = bad ? std::numeric_limits<double>::quiet_NaN() : worst_err;
          row.pass = !bad && worst_err <= row.tol;
          const std::string ag = dm.gather_ran(), rs = dm.reduce_ran();
          row.ran = ag + "/" + rs;
        }
      double native_median = 0;
      for (std::size_t k = 0; k < group.size(); ++k) {
        Row& row = group[k];
        const AlgoPair& algo = *group_algo[k];
        if (!row.run) {
          if (rank == 0)
            std::printf("%-7s %-14s %-5s %-12s not run: %s\n", row.op.c_str(), row.layout.c_str(),
                        grid_name.c_str(), algo.name.c_str(), row.note.c_str());
          rows.push_back(row);
          continue;
        }
        failures += row.pass ? 0 : 1;
        row.median = apps::median(row.times);
        row.comm = apps::median(comm_t[k]);
        row.compute = apps::median(comp_t[k]);
        row.mflops = row.median > 0 ? 2.0 * static_cast<double>(m) * static_cast<double>(n) / row.median / 1e6 : 0;
        if (algo.name == "native") native_median = row.median;
        if (native_median > 0) row.ratio = row.median / native_median;
        if (rank == 0) {
          std::ostringstream ratio;
          if (row.ratio) ratio << std::fixed << std::setprecision(2) << *row.ratio;
          std::printf("%-7s %-14s %-5s %-12s %-22s %10.4f %10.4f %10.4f %9.1f %6s %9.2e  %s\n",
                      row.op.c_str(), row.layout.c_str(), grid_name.c_str(), algo.name.c_str(),
                      row.ran.c_str(), row.median * 1e3, row.comm * 1e3, row.compute * 1e3,
                      row.mflops, ratio.str().c_str(), row.error, row.pass ? "PASS" : "FAIL");
          std::fflush(stdout);
        }
        // "ran" in the JSON: the requested name when both collectives ran as asked.
        const auto slash = row.ran.find('/');
        const std::string ag = row.ran.substr(0, slash), rs = row.ran.substr(slash + 1);
        if ((ag == "-" || ag == libcomm::allgather_algo_name(algo.gather)) &&
            (rs == "-" || rs == libcomm::reduce_scatter_algo_name(algo.reduce)))
          row.ran = algo.name;
        rows.push_back(row);
      }
    }
  }
  int ran = 0;
  for (const auto& r : rows) ran += r.run;
  if (rank == 0) {
    std::printf("(rel_err: largest |y - y_ref| / (|A| |x|) over the result entries, against a serial "
                "Eigen product; tolerance 2 (n + P) eps for products, 4 eps for rank-1)\n");
    if (failures == 0 && ran > 0)
      std::printf("validation: PASS (%d cases match the serial Eigen reference)\n", ran);
    else if (ran == 0)
      std::printf("validation: FAIL (no case ran)\n");
    else
      std::printf("validation: FAIL (%d of %d cases differ from the serial Eigen reference)\n",
                  failures, ran);
    if (!json_path.empty()) {
      nlohmann::json j;
      j["program"] = "matvec";
      j["ranks"] = p;
      j["m"] = m;
      j["n"] = n;
      j["seed"] = seed;
      j["reps"] = reps;
      j["validation"] = failures == 0 && ran > 0 ? "PASS" : "FAIL";
      j["results"] = nlohmann::json::array();
      for (const auto& r : rows) {
        if (!r.run) {
          j["skipped"].push_back({{"case", r.op + " " + r.layout + " " + r.grid}, {"algo", r.algo},
                                  {"reason", r.note}});
          continue;
        }
        nlohmann::json e = {{"algo", r.algo}, {"ran", r.ran}, {"case", r.op + " " + r.layout + " " + r.grid},
                            {"op", r.op}, {"layout", r.layout}, {"grid", r.grid},
                            {"block_bytes", 8 * n}, {"median_s", r.median}, {"comm_s", r.comm},
                            {"compute_s", r.compute}, {"mflops", r.mflops}, {"times_s", r.times},
                            {"max_rel_error", r.error}, {"tolerance", r.tol},
                            {"validation", r.pass ? "PASS" : "FAIL"}};
        e["ratio_to_native"] = r.ratio ? nlohmann::json(*r.ratio) : nlohmann::json(nullptr);
        j["results"].push_back(e);
      }
      std::ofstream f(json_path);
      libcomm::require(static_cast<bool>(f), "--json: cannot write '" + json_path + "'");
      f << j.dump(2) << "\n";
    }
  }
  return failures == 0 && ran > 0 ? 0 : 1;
}

}  // namespace
}  // namespace matvec

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "matvec", matvec::run); }
