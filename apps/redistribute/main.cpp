// redistribute: an irregular redistribution mini-app on libcomm::alltoallv (paper 001).
//
// Every rank holds records (a 64-bit key and a payload) in arbitrary order. Their
// destinations come either from a traffic pattern (--case pattern) or from the bucket
// exchange of a parallel sample sort of random keys (--case sort, the default). Each
// repetition
//   compose:     count records per destination and place them grouped by destination
//                (one scan, a counting placement: no sort),
//   communicate: exchange the counts (MPI_Alltoall) and move the records with
//                alltoallv --algo NAME --mode MODE,
//   decompose:   sort: sort the received records by key; pattern: gather them per source.
// and validates that every record arrived exactly once at the right rank (count and an
// order-independent checksum of the multiset, payload recomputed from the key,
// destination check) and, for the sort, that the result is globally sorted.
#include <cmath>
#include "libcomm/sim.hpp"
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>

#include "apps/common.hpp"
#include "kernels/traffic.hpp"
#include "libcomm/libcomm.hpp"

namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Record: [key: 8 bytes][payload: rec - 8 bytes derived from the key].
void make_record(std::byte* r, std::uint64_t key, std::size_t rec) {
  std::memcpy(r, &key, 8);
  std::uint64_t h = mix(key);
  for (std::size_t b = 8; b < rec; ++b) {
    if ((b - 8) % 8 == 0) h = mix(h);
    r[b] = static_cast<std::byte>(h >> (8 * ((b - 8) % 8)));
  }
}
bool record_ok(const std::byte* r, std::size_t rec) {
  std::uint64_t key;
  std::memcpy(&key, r, 8);
  std::uint64_t h = mix(key);
  for (std::size_t b = 8; b < rec; ++b) {
    if ((b - 8) % 8 == 0) h = mix(h);
    if (r[b] != static_cast<std::byte>(h >> (8 * ((b - 8) % 8)))) return false;
  }
  return true;
}
std::uint64_t key_of(const std::byte* r) {
  std::uint64_t k;
  std::memcpy(&k, r, 8);
  return k;
}

struct Checksum {
  std::uint64_t count = 0, sum = 0, sumsq = 0;
  void add(std::uint64_t key) {
    const std::uint64_t h = mix(key ^ 0x5bd1e995ULL);
    ++count, sum += h, sumsq += h * (h | 1);
  }
};

struct Timing {
  std::vector<double> compose, communicate, decompose;
};

int run(int argc, char** argv) {
  CLI::App app{
      "redistribute: move records to the ranks their keys or a traffic pattern assign them, with\n"
      "libcomm::alltoallv, and validate exactly-once delivery (and global order for the sort)."};
  std::string algos = "native,direct,four_stage", mode_s = "n1", kase = "sort",
              pattern = "pattern1", json_path;
  std::string nodes = "shared";
  std::int64_t records = 20000;
  std::size_t rec = 48;
  std::uint64_t seed = 1;
  int reps = 3;
  app.add_option(
         "--algo", algos,
         "comma-separated alltoallv algorithms (native, auto, direct, two_stage, mesh, four_stage)")
      ->capture_default_str();
  app.add_option("--mode", mode_s, "alltoallv mode: b, n1 or n2 (paper 001, s. 3.4)")
      ->capture_default_str();
  app.add_option("--case", kase,
                 "sort: bucket exchange of a sample sort; pattern: destinations from --pattern")
      ->check(CLI::IsMember({"sort", "pattern"}))
      ->capture_default_str();
  std::vector<std::string> pnames;
  for (const auto& [n, p] : kernels::traffic_patterns()) pnames.emplace_back(n);
  app.add_option("--pattern", pattern, "traffic pattern for --case pattern")
      ->check(CLI::IsMember(pnames))
      ->capture_default_str();
  app.add_option("--records", records, "records per rank (sort), or M_max in records (pattern)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--record-bytes", rec, "bytes per record: an 8-byte key plus payload")
      ->check(CLI::Range(std::size_t{8}, std::size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--seed", seed, "seed of keys and pattern choices")->check(apps::seed_number())->capture_default_str();
  app.add_option("--reps", reps, "repetitions (median reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--nodes", nodes, "node map (see commbench --help)")->capture_default_str();
  app.add_option("--json", json_path, "write the results as JSON to this file")->check(apps::kWritableFile);
  double model_gflops = 0, model_copy_gbs = 0;
  apps::add_flop_model_option(app, model_gflops);
  app.add_option("--model-copy", model_copy_gbs,
                 "with --model-flops: charge the composition and decomposition their bytes moved, and "
                 "the algorithms' bucket copies theirs, at this many GB/s")
      ->check(apps::positive_number(1e6));
  apps::parse_command_line(app, argc, argv);
  libcomm::require(model_copy_gbs == 0 || model_gflops > 0, "--model-copy goes with --model-flops");
  apps::apply_flop_model(model_gflops);
  // The modelled local work of the redistribution itself: its bytes moved at the copy rate
  // (sim::charge_copy, as the algorithms' own copies), the decomposition's sort n log2 n
  // comparisons as flops.
  libcomm::sim::set_copy_rate(model_copy_gbs * 1e9);
  const libcomm::Comm comm = apps::world_comm(nodes);
  const int p = comm.size(), me = comm.rank();
  const auto mode = [&] {
    try {
      return libcomm::alltoallv_mode_from_name(mode_s);
    } catch (const libcomm::Error& e) {
      throw libcomm::Error(std::string("--mode: ") + e.what());
    }
  }();
  std::vector<libcomm::AlltoallvAlgo> list;
  {
    std::stringstream ss(algos);
    std::string a;
    while (std::getline(ss, a, ',')) {
      try {
        list.push_back(libcomm::alltoallv_algo_from_name(a));
      } catch (const libcomm::Error& e) {
        throw libcomm::Error(std::string("--algo: ") + e.what());
      }
    }
    libcomm::require(!list.empty(), "--algo: empty list");
    for (auto a : list) {
      const auto c = libcomm::choose_alltoallv(a, p);
      if (c != libcomm::AlltoallvAlgo::Native && c != libcomm::AlltoallvAlgo::Direct)
        libcomm::alltoallv_schedule(c, p);  // mesh on a non-square P: a clear error on every rank
    }
  }

  // ---- the records this rank starts with, in arbitrary order, and their destinations
  std::vector<std::byte> data;
  std::vector<int> dest;
  std::vector<std::uint64_t> splitters;  // sort: rank r receives keys in [s[r-1], s[r])
  std::mt19937_64 rng(mix(seed * 1000003ULL + static_cast<std::uint64_t>(me)));
  if (kase == "sort") {
    data.resize(static_cast<std::size_t>(records) * rec);
    for (std::int64_t k = 0; k < records; ++k) make_record(data.data() + k * rec, rng(), rec);
    // Sample sort: 4P samples per rank, P - 1 splitters from the gathered samples.
    const int per = 4 * p;
    std::vector<std::uint64_t> sample(per), all(static_cast<std::size_t>(per) * p);
    for (int k = 0; k < per; ++k)
      sample[k] = records > 0 ? key_of(data.data() + (rng() % records) * rec) : rng();
    MPI_Allgather(sample.data(), per, MPI_UINT64_T, all.data(), per, MPI_UINT64_T, comm.mpi());
    std::sort(all.begin(), all.end());
    for (int r = 1; r < p; ++r) splitters.push_back(all[static_cast<std::size_t>(r) * per]);
  } else {
    kernels::TrafficSpec spec;
    spec.pattern = kernels::traffic_pattern_from_name(pattern);
    spec.mmax = records;
    spec.seed = seed;
    const auto m = kernels::traffic_matrix(spec, p);
    std::int64_t total = 0;
    for (int j = 0; j < p; ++j) total += m[static_cast<std::size_t>(me) * p + j];
    data.resize(static_cast<std::size_t>(total) * rec);
    std::int64_t at = 0;
    for (int j = 0; j < p; ++j)
      for (std::int64_t k = 0; k < m[static_cast<std::size_t>(me) * p + j]; ++k, ++at)
        make_record(data.data() + at * rec,
                    (static_cast<std::uint64_t>(me) << 44) | (static_cast<std::uint64_t>(j) << 24) |
                        static_cast<std::uint64_t>(k),
                    rec);
    // Arbitrary order: shuffle the records.
    for (std::int64_t k = total - 1; k > 0; --k) {
      const auto o = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(k + 1));
      std::swap_ranges(data.begin() + k * rec, data.begin() + (k + 1) * rec,
                       data.begin() + o * rec);
    }
  }
  const auto n_local = static_cast<std::int64_t>(data.size() / rec);
  auto destination = [&](const std::byte* r) {
    const std::uint64_t key = key_of(r);
    if (kase == "sort")
      return static_cast<int>(std::upper_bound(splitters.begin(), splitters.end(), key) -
                              splitters.begin());
    return static_cast<int>((key >> 24) & 0xfffff);
  };
  Checksum before;
  for (std::int64_t k = 0; k < n_local; ++k) before.add(key_of(data.data() + k * rec));
  std::uint64_t gb[3] = {before.count, before.sum, before.sumsq};
  MPI_Allreduce(MPI_IN_PLACE, gb, 3, MPI_UINT64_T, MPI_SUM, comm.mpi());

  nlohmann::json results = nlohmann::json::array();
  bool all_ok = true;
  std::vector<std::pair<std::string, double>> medians;
  if (apps::is_root())
    std::cout << "redistribute: case=" << kase << (kase == "pattern" ? " pattern=" + pattern : "")
              << " ranks=" << p << " records/rank=" << n_local << " (rank 0) record=" << rec
              << " B mode=" << mode_s << " reps=" << reps << "\n\n"
              << std::left << std::setw(14) << "algo" << std::setw(12) << "ran" << std::right
              << std::setw(13) << "compose_us" << std::setw(16) << "communicate_us" << std::setw(15)
              << "decompose_us" << std::setw(9) << "ratio"
              << "  validation\n";
  double native_comm = 0;
  std::vector<std::byte> send(data.size()), recv;
  std::vector<std::int64_t> sc(p), sd(p), rc(p), rd(p), scb(p), sdb(p), rcb(p), rdb(p);
  for (auto algo : list) {
    Timing t;
    std::string problem, ran_name;
    for (int rep = 0; rep < reps + 1; ++rep) {  // rep 0: warm-up (checked arguments)
      MPI_Barrier(comm.mpi());
      double t0 = MPI_Wtime();
      // compose: one scan counts, a prefix sum, one scan places (no sort)
      std::fill(sc.begin(), sc.end(), 0);
      for (std::int64_t k = 0; k < n_local; ++k) ++sc[destination(data.data() + k * rec)];
      std::int64_t acc = 0;
      for (int j = 0; j < p; ++j) sd[j] = acc, acc += sc[j];
      std::vector<std::int64_t> fill = sd;
      for (std::int64_t k = 0; k < n_local; ++k) {
        const std::byte* r = data.data() + k * rec;
        std::memcpy(send.data() + (fill[destination(r)]++) * rec, r, rec);
      }
      libcomm::sim::charge_copy(static_cast<double>(n_local * static_cast<std::int64_t>(rec)));
      double t1 = MPI_Wtime();
      // communicate
      MPI_Alltoall(sc.data(), 1, MPI_INT64_T, rc.data(), 1, MPI_INT64_T, comm.mpi());
      acc = 0;
      for (int j = 0; j < p; ++j) rd[j] = acc, acc += rc[j];
      recv.resize(static_cast<std::size_t>(acc) * rec);
      libcomm::AlltoallvOptions o;
      o.mode = mode;
      o.element_bytes = rec;  // the staged algorithms deal whole records
      o.check_args = rep == 0;
      const auto bytes = [&](const std::vector<std::int64_t>& records, std::vector<std::int64_t>& out) {
        for (int j = 0; j < p; ++j) out[j] = records[j] * static_cast<std::int64_t>(rec);
        return std::span<const std::int64_t>(out);
      };  // libcomm counts bytes
      const auto ran = libcomm::alltoallv(send.data(), bytes(sc, scb), bytes(sd, sdb), recv.data(), bytes(rc, rcb),
                                          bytes(rd, rdb), comm, algo, o);
      ran_name = std::string(libcomm::alltoallv_algo_name(ran));
      double t2 = MPI_Wtime();
      // decompose
      const auto n_in = acc;
      std::vector<std::byte> out(recv.size());
      if (kase == "sort") {
        std::vector<std::pair<std::uint64_t, std::int64_t>> order(static_cast<std::size_t>(n_in));
        for (std::int64_t k = 0; k < n_in; ++k) order[k] = {key_of(recv.data() + k * rec), k};
        std::sort(order.begin(), order.end());
        for (std::int64_t k = 0; k < n_in; ++k)
          std::memcpy(out.data() + k * rec, recv.data() + order[k].second * rec, rec);
        libcomm::sim::charge_flops(static_cast<double>(n_in) * std::log2(std::max<double>(2.0, static_cast<double>(n_in))));
      } else {
        out = recv;  // already grouped by source by alltoallv's layout
      }
      libcomm::sim::charge_copy(static_cast<double>(recv.size()));
      double t3 = MPI_Wtime();
      double d[3] = {t1 - t0, t2 - t1, t3 - t2};
      MPI_Allreduce(MPI_IN_PLACE, d, 3, MPI_DOUBLE, MPI_MAX, comm.mpi());
      if (rep > 0)
        t.compose.push_back(d[0]), t.communicate.push_back(d[1]), t.decompose.push_back(d[2]);
      // validation (not timed)
      Checksum after;
      std::string local;
      for (std::int64_t k = 0; k < n_in && local.empty(); ++k) {
        const std::byte* r = out.data() + k * rec;
        after.add(key_of(r));
        if (!record_ok(r, rec))
          local = "record " + std::to_string(k) + " has a corrupt payload";
        else if (destination(r) != me)
          local = "record with key " + std::to_string(key_of(r)) + " landed on the wrong rank";
        else if (kase == "sort" && k > 0 && key_of(r) < key_of(r - rec))
          local = "local order broken";
      }
      std::uint64_t ga[3] = {after.count, after.sum, after.sumsq};
      MPI_Allreduce(MPI_IN_PLACE, ga, 3, MPI_UINT64_T, MPI_SUM, comm.mpi());
      if (local.empty() && (ga[0] != gb[0] || ga[1] != gb[1] || ga[2] != gb[2]))
        local = "multiset checksum: " + std::to_string(ga[0]) + " records arrived, " +
                std::to_string(gb[0]) + " sent";
      if (kase == "sort") {
        // global order: the last key of rank r <= the first key of the next non-empty rank
        std::uint64_t mm[3] = {n_in > 0 ? 1ULL : 0ULL, n_in > 0 ? key_of(out.data()) : 0,
                               n_in > 0 ? key_of(out.data() + (n_in - 1) * rec) : 0};
        std::vector<std::uint64_t> allmm(3 * static_cast<std::size_t>(p));
        MPI_Allgather(mm, 3, MPI_UINT64_T, allmm.data(), 3, MPI_UINT64_T, comm.mpi());
        std::uint64_t last = 0;
        bool any = false;
        for (int r = 0; r < p; ++r)
          if (allmm[3 * r]) {
            if (any && allmm[3 * r + 1] < last && local.empty())
              local = "global order broken between ranks";
            last = allmm[3 * r + 2], any = true;
          }
      }
      int bad = local.empty() ? 0 : 1, anybad = 0;
      MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm.mpi());
      if (!local.empty())
        std::cerr << "redistribute: rank " << me << ": " << libcomm::alltoallv_algo_name(algo)
                  << ": " << local << "\n";
      if (anybad && problem.empty()) problem = local.empty() ? "another rank failed" : local;
    }
    const double mc = apps::median(t.communicate);
    if (algo == libcomm::AlltoallvAlgo::Native) native_comm = mc;
    const double ratio = native_comm > 0 ? mc / native_comm : 0;
    const bool ok = problem.empty();
    all_ok &= ok;
    std::int64_t bytes = n_local * static_cast<std::int64_t>(rec);
    if (apps::is_root())
      std::cout << std::left << std::setw(14) << libcomm::alltoallv_algo_name(algo) << std::setw(12)
                << ran_name << std::right << std::fixed << std::setprecision(1) << std::setw(13)
                << apps::median(t.compose) * 1e6 << std::setw(16) << mc * 1e6 << std::setw(15)
                << apps::median(t.decompose) * 1e6 << std::setprecision(2) << std::setw(9) << ratio
                << "  " << (ok ? "PASS" : "FAIL") << "\n";
    results.push_back(
        {{"algo", std::string(libcomm::alltoallv_algo_name(algo)) + "/" + mode_s},
         {"ran", ran_name + "/" + mode_s},
         {"block_bytes", bytes},
         {"median_s", mc},
         {"compose_median_s", apps::median(t.compose)},
         {"decompose_median_s", apps::median(t.decompose)},
         {"ratio_to_native", native_comm > 0 ? nlohmann::json(ratio) : nlohmann::json(nullptr)},
         {"times_s", t.communicate},
         {"validation", ok ? "PASS" : "FAIL"}});
  }
  if (apps::is_root()) {
    std::cout << "(times: median over reps of the slowest rank; ratio = communicate / native "
                 "communicate)\n";
    std::cout << (all_ok ? "validation: PASS (every record arrived exactly once at its rank: count "
                           "and multiset checksum "
                           "match, payloads intact" +
                               std::string(kase == "sort" ? ", globally sorted)" : ")")
                         : "validation: FAIL (see the messages above)")
              << "\n";
    if (!json_path.empty()) {
      nlohmann::json j;
      j["program"] = "redistribute";
      j["case"] = kase;
      j["ranks"] = p;
      j["mode"] = mode_s;
      j["record_bytes"] = rec;
      j["validation"] = all_ok ? "PASS" : "FAIL";
      j["results"] = results;
      std::ofstream out(json_path);
      libcomm::require(static_cast<bool>(out), "--json: cannot write '" + json_path + "'");
      out << j.dump(2) << "\n";
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return apps::mpi_main(argc, argv, "redistribute", run);
}
