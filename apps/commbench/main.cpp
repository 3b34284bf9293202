// commbench: times libcomm's collective algorithms side by side with the MPI library's own
// collective, over a range of block sizes, validating every run.
//
// For every size, each repetition runs every selected algorithm once, in turn (so noise
// on a shared machine hits all of them alike); the time of one run is that of the slowest
// rank; the table reports the median over repetitions and the ratio to `native`.
#include <CLI/CLI.hpp>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "apps/common.hpp"
#include "libcomm/libcomm.hpp"

namespace {

using libcomm::AlltoallAlgo;

struct Row {
  std::string algo;  // requested name
  std::string ran;   // what ran (differs for auto and fallbacks)
  std::string note;
  std::size_t block = 0;
  std::vector<double> times;
  long long bad_bytes = 0;
  double median = 0, min = 0, ratio = 0;
};

std::vector<AlltoallAlgo> select_algos(const std::string& list) {
  std::vector<AlltoallAlgo> out;
  if (list == "all") {
    for (const auto& info : libcomm::alltoall_algorithms()) out.push_back(info.algo);
    return out;
  }
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ',')) {
    try {
      out.push_back(libcomm::alltoall_algo_from_name(name));
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--algo: ") + e.what());
    }
  }
  libcomm::require(!out.empty(), "--algo: empty list");
  return out;
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

int run(int argc, char** argv) {
  CLI::App app{
      "commbench: time libcomm collective algorithms against the MPI library's own collective.\n"
      "Every run is validated byte for byte; the table shows medians over --reps of the\n"
      "slowest rank's time and the ratio to native measured in the same run."};
  std::string op = "alltoall", algo_list = "all", min_s = "8", max_s = "4MiB", nodes = "shared",
              json_path, sizes_list;
  int reps = 5, warmup = 1;
  bool no_fallback = false, list = false;
  app.add_option("--op", op, "operation to time")
      ->check(CLI::IsMember({"alltoall"}))
      ->capture_default_str();
  app.add_option("--algo", algo_list,
                 "comma-separated algorithm names, or 'all' (see --list); 'native' is always "
                 "timed as the reference")
      ->capture_default_str();
  app.add_option("--min", min_s, "smallest block per destination (bytes; K/M/G suffixes)")
      ->capture_default_str();
  app.add_option("--max", max_s, "largest block per destination; sizes double from --min")
      ->capture_default_str();
  app.add_option("--sizes", sizes_list,
                 "explicit comma-separated block sizes (e.g. 8,1K,64K,1M); overrides --min/--max");
  app.add_option("--reps", reps, "timed repetitions per size and algorithm (median reported)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", warmup, "untimed runs before timing (at least 1; it checks arguments)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--nodes", nodes,
                 "node map: shared | flat | ppn=N | sizes=A,B,.. | map=N0,N1,.. | file:PATH")
      ->capture_default_str();
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  app.add_flag("--no-fallback", no_fallback,
               "fail instead of running the documented fallback when an algorithm does not apply "
               "(e.g. pairwise on P not a power of two)");
  app.add_flag("--list", list, "list the algorithms and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (apps::is_root()) app.exit(e);
    throw;
  }
  if (list) {
    if (apps::is_root())
      for (const auto& info : libcomm::alltoall_algorithms())
        std::cout << std::left << std::setw(16) << info.name << info.summary << "\n";
    return 0;
  }

  std::vector<std::size_t> sizes;
  if (sizes_list.empty()) {
    sizes = size_range(apps::parse_size(min_s, "--min"), apps::parse_size(max_s, "--max"));
  } else {
    std::stringstream ss(sizes_list);
    std::string item;
    while (std::getline(ss, item, ',')) sizes.push_back(apps::parse_size(item, "--sizes"));
    libcomm::require(!sizes.empty(), "--sizes: empty list");
  }
  const std::size_t lo = *std::min_element(sizes.begin(), sizes.end());
  auto algos = select_algos(algo_list);
  if (std::find(algos.begin(), algos.end(), AlltoallAlgo::Native) == algos.end())
    algos.insert(algos.begin(), AlltoallAlgo::Native);
  else  // native first, so every ratio has its reference
    std::stable_partition(algos.begin(), algos.end(), [](AlltoallAlgo a) { return a == AlltoallAlgo::Native; });

  const libcomm::Comm comm(MPI_COMM_WORLD, nodes);
  const int p = comm.size(), me = comm.rank();
  libcomm::AlltoallOptions checked, timed;
  checked.allow_fallback = timed.allow_fallback = !no_fallback;
  timed.check_args = false;

  // Fail early, on every rank alike, when an algorithm does not apply.
  for (auto a : algos) libcomm::choose_alltoall(a, lo, p, checked);

  if (apps::is_root())
    std::cout << "commbench: op=" << op << " ranks=" << p << " (" << comm.nodes().describe()
              << ") reps=" << reps << " warmup=" << warmup
              << "\ntime = median over reps of the slowest rank; ratio = time / native time\n\n";

  std::vector<Row> rows;
  for (std::size_t b : sizes) {
    const std::size_t total = b * static_cast<std::size_t>(p);
    std::vector<std::byte> send(total), recv(total);
    for (int dst = 0; dst < p; ++dst) apps::fill_pattern(send.data() + dst * b, me, dst, b);
    std::vector<Row> size_rows(algos.size());
    for (std::size_t k = 0; k < algos.size(); ++k) {
      size_rows[k].algo = std::string(libcomm::alltoall_algo_name(algos[k]));
      size_rows[k].block = b;
    }
    for (int rep = 0; rep < warmup + reps; ++rep) {
      for (std::size_t k = 0; k < algos.size(); ++k) {
        Row& row = size_rows[k];
        std::memset(recv.data(), 0xA5, total);
        MPI_Barrier(comm.mpi());
        const double t0 = MPI_Wtime();
        const AlltoallAlgo ran = libcomm::alltoall(send.data(), recv.data(), b, comm, algos[k],
                                                   rep == 0 ? checked : timed);
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm.mpi());
        if (rep >= warmup) row.times.push_back(t);
        if (rep == 0) {
          row.ran = std::string(libcomm::alltoall_algo_name(ran));
          row.note = libcomm::choose_alltoall(algos[k], b, p, checked).reason;
        }
        for (int src = 0; src < p; ++src) {
          const std::size_t at = apps::check_pattern(recv.data() + src * b, src, me, b);
          if (at != b) {
            if (row.bad_bytes == 0)
              std::cerr << "commbench: rank " << me << ": " << row.algo << " block " << b
                        << " B from rank " << src << " differs at byte " << at << "\n";
            ++row.bad_bytes;
          }
        }
      }
    }
    for (auto& row : size_rows) {
      MPI_Allreduce(MPI_IN_PLACE, &row.bad_bytes, 1, MPI_LONG_LONG, MPI_SUM, comm.mpi());
      row.median = apps::median(row.times);
      row.min = *std::min_element(row.times.begin(), row.times.end());
      row.ratio = size_rows[0].median > 0 ? row.median / size_rows[0].median : 0.0;
      rows.push_back(row);
    }
  }

  long long failures = 0;
  for (const auto& r : rows) failures += r.bad_bytes ? 1 : 0;
  if (apps::is_root()) {
    std::cout << std::left << std::setw(10) << "op" << std::setw(26) << "algo" << std::setw(7)
              << "ranks" << std::setw(11) << "block" << std::right << std::setw(13)
              << "median_us" << std::setw(12) << "min_us" << std::setw(9) << "ratio"
              << "  validation\n";
    for (const auto& r : rows) {
      const std::string name = r.ran == r.algo ? r.algo : r.algo + "->" + r.ran;
      std::cout << std::left << std::setw(10) << op << std::setw(26) << name << std::setw(7) << p
                << std::setw(11) << apps::format_size(r.block) << std::right << std::fixed
                << std::setprecision(1) << std::setw(13) << r.median * 1e6 << std::setw(12)
                << r.min * 1e6 << std::setprecision(2) << std::setw(9) << r.ratio << "  "
                << (r.bad_bytes ? "FAIL" : "PASS") << "\n";
    }
    std::set<std::string> notes;
    for (const auto& r : rows)
      if (r.ran != r.algo && notes.insert(r.algo + ": " + r.note).second)
        std::cout << "note: " << r.note << "\n";
    if (failures == 0)
      std::cout << "validation: PASS (" << rows.size() << " algorithm/size pairs, every run "
                << "byte-identical to the expected blocks that native also delivered)\n";
    else
      std::cout << "validation: FAIL (" << failures << " of " << rows.size()
                << " algorithm/size pairs delivered wrong bytes)\n";
    if (!json_path.empty()) {
      nlohmann::json j;
      j["program"] = "commbench";
      j["op"] = op;
      j["ranks"] = p;
      j["nodes"] = comm.nodes().describe();
      j["reps"] = reps;
      j["validation"] = failures == 0 ? "PASS" : "FAIL";
      for (const auto& r : rows)
        j["results"].push_back({{"algo", r.algo}, {"ran", r.ran}, {"block_bytes", r.block},
                                {"median_s", r.median}, {"min_s", r.min},
                                {"ratio_to_native", r.ratio}, {"times_s", r.times},
                                {"validation", r.bad_bytes ? "FAIL" : "PASS"}});
      std::ofstream out(json_path);
      libcomm::require(static_cast<bool>(out), "--json: cannot write '" + json_path + "'");
      out << j.dump(2) << "\n";
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "commbench", run); }
