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
//
// Flow (run): parse the options -> the records and their destinations -> build the
// variants (one per algorithm) -> a validated warm-up of each -> time them round-robin,
// every run validated -> report.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <numeric>
#include <random>

#include "apps/common.hpp"
#include "kernels/traffic.hpp"
#include "libcomm/libcomm.hpp"
#include "libcomm/sim.hpp"

namespace {

struct Settings {
  std::string mode = "n1", kase = "sort", pattern = "pattern1";
  std::int64_t records = 20000;
  std::size_t rec = 48;  // bytes per record
  std::uint64_t seed = 1;
  double model_copy_gbs = 0;
  apps::RunOptions run = apps::RunOptions::defaults("native,direct,four_stage", 3);
};

// Record: [key: 8 bytes][payload: rec - 8 bytes derived from the key].
std::uint64_t key_of(const std::byte* r) {
  std::uint64_t k;
  std::memcpy(&k, r, 8);
  return k;
}
std::byte payload_byte(std::uint64_t& h, std::size_t b) {
  if ((b - 8) % 8 == 0) h = apps::splitmix64(h);
  return static_cast<std::byte>(h >> (8 * ((b - 8) % 8)));
}
void make_record(std::byte* r, std::uint64_t key, std::size_t rec) {
  std::memcpy(r, &key, 8);
  std::uint64_t h = apps::splitmix64(key);
  for (std::size_t b = 8; b < rec; ++b) r[b] = payload_byte(h, b);
}
bool record_ok(const std::byte* r, std::size_t rec) {
  std::uint64_t h = apps::splitmix64(key_of(r));
  for (std::size_t b = 8; b < rec; ++b)
    if (r[b] != payload_byte(h, b)) return false;
  return true;
}

// An order-independent checksum of a multiset of keys.
struct Checksum {
  std::uint64_t sum[3] = {0, 0, 0};  // count, sum and weighted sum of hashes
  void add(std::uint64_t key) {
    const std::uint64_t h = apps::splitmix64(key ^ 0x5bd1e995ULL);
    ++sum[0], sum[1] += h, sum[2] += h * (h | 1);
  }
  Checksum global(MPI_Comm comm) const {
    Checksum g = *this;
    MPI_Allreduce(MPI_IN_PLACE, g.sum, 3, MPI_UINT64_T, MPI_SUM, comm);
    return g;
  }
};

// This rank's records in arbitrary order, where each must go, and the global checksum.
struct Records {
  std::vector<std::byte> data;
  std::vector<std::uint64_t> splitters;  // sort: rank r receives keys in [s[r-1], s[r])
  bool sort = true;
  std::size_t rec = 0;
  Checksum before;
  std::int64_t count() const { return static_cast<std::int64_t>(data.size() / rec); }
  int destination(const std::byte* r) const {
    if (sort) return static_cast<int>(std::upper_bound(splitters.begin(), splitters.end(), key_of(r)) - splitters.begin());
    return static_cast<int>((key_of(r) >> 24) & 0xfffff);
  }
};

struct Variant {
  libcomm::AlltoallvAlgo algo;
  std::string ran, problem;
  std::vector<double> compose, communicate, decompose;
};

// What one run leaves: the received records in their final order, and the counts.
struct Buffers {
  std::vector<std::byte> send, recv, out;
  std::vector<std::int64_t> sc, sd, rc, rd;
};

Settings parse(int argc, char** argv) {
  CLI::App app{"redistribute: move records to the ranks their keys or a traffic pattern assign them, with\n"
               "libcomm::alltoallv, and validate exactly-once delivery (and global order for the sort)."};
  Settings s;
  apps::add_run_options(app, s.run, apps::kAlgoOption | apps::kAutoOption,
                        "comma-separated alltoallv algorithms (native, auto, direct, two_stage, mesh, four_stage)");
  app.add_option("--mode", s.mode, "alltoallv mode: b, n1 or n2 (paper 001, s. 3.4)")->capture_default_str();
  app.add_option("--case", s.kase, "sort: bucket exchange of a sample sort; pattern: destinations from --pattern")
      ->check(CLI::IsMember({"sort", "pattern"}))
      ->capture_default_str();
  std::vector<std::string> pnames;
  for (const auto& [n, p] : kernels::traffic_patterns()) pnames.emplace_back(n);
  app.add_option("--pattern", s.pattern, "traffic pattern for --case pattern")->check(CLI::IsMember(pnames))->capture_default_str();
  app.add_option("--records", s.records, "records per rank (sort), or M_max in records (pattern)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--record-bytes", s.rec, "bytes per record: an 8-byte key plus payload")
      ->check(CLI::Range(std::size_t{8}, std::size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--seed", s.seed, "seed of keys and pattern choices")->check(apps::seed_number())->capture_default_str();
  apps::add_run_options(app, s.run, apps::kRepsOption | apps::kNodesOption | apps::kJsonOption | apps::kFlopModelOption,
                        "");
  app.add_option("--model-copy", s.model_copy_gbs,
                 "with --model-flops: charge the composition and decomposition their bytes moved, and the algorithms' "
                 "bucket copies theirs, at this many GB/s")
      ->check(apps::positive_number(1e6));
  apps::parse_command_line(app, argc, argv);
  libcomm::require(s.model_copy_gbs == 0 || s.run.model_flops > 0, "--model-copy goes with --model-flops");
  apps::apply_run_options(app, s.run);
  // The modelled local work of the redistribution itself: its bytes moved at the copy rate
  // (sim::charge_copy, as the algorithms' own copies), the decomposition's sort n log2 n
  // comparisons as flops.
  libcomm::sim::set_copy_rate(s.model_copy_gbs * 1e9);
  return s;
}

// Sample sort: random keys; 4P samples per rank give P - 1 splitters.
void sort_records(Records& r, const Settings& s, std::mt19937_64& rng, const libcomm::Comm& comm) {
  const int p = comm.size(), per = 4 * p;
  r.data.resize(static_cast<std::size_t>(s.records) * s.rec);
  for (std::int64_t k = 0; k < s.records; ++k) make_record(r.data.data() + k * s.rec, rng(), s.rec);
  std::vector<std::uint64_t> sample(static_cast<std::size_t>(per)), all(static_cast<std::size_t>(per) * p);
  for (auto& x : sample) x = s.records > 0 ? key_of(r.data.data() + (rng() % s.records) * s.rec) : rng();
  MPI_Allgather(sample.data(), per, MPI_UINT64_T, all.data(), per, MPI_UINT64_T, comm.mpi());
  std::sort(all.begin(), all.end());
  for (int k = 1; k < p; ++k) r.splitters.push_back(all[static_cast<std::size_t>(k) * per]);
}

// Traffic pattern: the matrix row of this rank, keys naming the destination, shuffled.
void pattern_records(Records& r, const Settings& s, std::mt19937_64& rng, const libcomm::Comm& comm) {
  kernels::TrafficSpec spec;
  spec.pattern = kernels::traffic_pattern_from_name(s.pattern);
  spec.mmax = s.records;
  spec.seed = s.seed;
  const int p = comm.size(), me = comm.rank();
  const auto m = kernels::traffic_matrix(spec, p);
  const auto row = m.begin() + static_cast<std::ptrdiff_t>(me) * p;
  r.data.resize(static_cast<std::size_t>(std::accumulate(row, row + p, std::int64_t{0})) * s.rec);
  std::int64_t at = 0;
  for (int j = 0; j < p; ++j)
    for (std::int64_t k = 0; k < row[j]; ++k, ++at)
      make_record(r.data.data() + at * s.rec,
                  (static_cast<std::uint64_t>(me) << 44) | (static_cast<std::uint64_t>(j) << 24) | static_cast<std::uint64_t>(k),
                  s.rec);
  for (std::int64_t k = at - 1; k > 0; --k) {
    const auto o = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(k + 1));
    std::swap_ranges(r.data.begin() + k * s.rec, r.data.begin() + (k + 1) * s.rec, r.data.begin() + o * s.rec);
  }
}

Records make_records(const Settings& s, const libcomm::Comm& comm) {
  Records r;
  r.sort = s.kase == "sort";
  r.rec = s.rec;
  std::mt19937_64 rng(apps::stream_seed(s.seed, static_cast<std::uint64_t>(comm.rank())));
  if (r.sort) sort_records(r, s, rng, comm);
  else pattern_records(r, s, rng, comm);
  for (std::int64_t k = 0; k < r.count(); ++k) r.before.add(key_of(r.data.data() + k * s.rec));
  r.before = r.before.global(comm.mpi());
  return r;
}

// Every named algorithm; one that cannot run on P ranks (mesh on a non-square P) is an
// error naming it, on every rank.
std::vector<Variant> build_variants(const Settings& s, int p) {
  std::vector<Variant> variants;
  for (const auto& name : apps::split_list(s.run.algo, "--algo")) {
    Variant v;
    try {
      v.algo = libcomm::alltoallv_algo_from_name(name);
      const auto c = libcomm::choose_alltoallv(v.algo, p);
      if (c != libcomm::AlltoallvAlgo::Native && c != libcomm::AlltoallvAlgo::Direct) libcomm::alltoallv_schedule(c, p);
    } catch (const libcomm::Error& e) {
      throw libcomm::Error("--algo: " + std::string(e.what()));
    }
    variants.push_back(v);
  }
  return variants;
}

// One redistribution; returns {compose, communicate, decompose} seconds of this rank.
std::vector<double> redistribute(Variant& v, const Records& r, libcomm::AlltoallvMode mode, bool checked, Buffers& b,
                                 const libcomm::Comm& comm) {
  const int p = comm.size();
  const auto rec = static_cast<std::int64_t>(r.rec);
  MPI_Barrier(comm.mpi());
  const double t0 = MPI_Wtime();
  std::fill(b.sc.begin(), b.sc.end(), 0);
  for (std::int64_t k = 0; k < r.count(); ++k) ++b.sc[r.destination(r.data.data() + k * rec)];
  std::exclusive_scan(b.sc.begin(), b.sc.end(), b.sd.begin(), std::int64_t{0});
  std::vector<std::int64_t> fill = b.sd;
  for (std::int64_t k = 0; k < r.count(); ++k) {
    const std::byte* x = r.data.data() + k * rec;
    std::memcpy(b.send.data() + (fill[r.destination(x)]++) * rec, x, r.rec);
  }
  libcomm::sim::charge_copy(static_cast<double>(r.data.size()));
  const double t1 = MPI_Wtime();
  MPI_Alltoall(b.sc.data(), 1, MPI_INT64_T, b.rc.data(), 1, MPI_INT64_T, comm.mpi());
  std::exclusive_scan(b.rc.begin(), b.rc.end(), b.rd.begin(), std::int64_t{0});
  const std::int64_t n_in = b.rd[p - 1] + b.rc[p - 1];
  b.recv.resize(static_cast<std::size_t>(n_in * rec));
  const auto bytes = [&](const std::vector<std::int64_t>& records) {  // libcomm counts bytes
    std::vector<std::int64_t> out(records.size());
    for (std::size_t j = 0; j < out.size(); ++j) out[j] = records[j] * rec;
    return out;
  };
  libcomm::AlltoallvOptions o;
  o.mode = mode;
  o.element_bytes = r.rec;  // the staged algorithms deal whole records
  o.check_args = checked;
  v.ran = libcomm::alltoallv_algo_name(libcomm::alltoallv(b.send.data(), bytes(b.sc), bytes(b.sd), b.recv.data(),
                                                          bytes(b.rc), bytes(b.rd), comm, v.algo, o));
  const double t2 = MPI_Wtime();
  b.out = b.recv;  // pattern: already grouped by source by alltoallv's layout
  if (r.sort) {
    std::vector<std::pair<std::uint64_t, std::int64_t>> order(static_cast<std::size_t>(n_in));
    for (std::int64_t k = 0; k < n_in; ++k) order[k] = {key_of(b.recv.data() + k * rec), k};
    std::sort(order.begin(), order.end());
    for (std::int64_t k = 0; k < n_in; ++k) std::memcpy(b.out.data() + k * rec, b.recv.data() + order[k].second * rec, r.rec);
    libcomm::sim::charge_flops(static_cast<double>(n_in) * std::log2(std::max<double>(2.0, static_cast<double>(n_in))));
  }
  libcomm::sim::charge_copy(static_cast<double>(b.recv.size()));
  return {t1 - t0, t2 - t1, MPI_Wtime() - t2};
}

// This rank's problem with the result ("" when none): payloads, destinations, order.
std::string local_problem(const Records& r, const Buffers& b, Checksum& after, int me) {
  const auto rec = static_cast<std::int64_t>(r.rec), n_in = static_cast<std::int64_t>(b.out.size()) / rec;
  for (std::int64_t k = 0; k < n_in; ++k) {
    const std::byte* x = b.out.data() + k * rec;
    after.add(key_of(x));
    if (!record_ok(x, r.rec)) return "record " + std::to_string(k) + " has a corrupt payload";
    if (r.destination(x) != me) return "record with key " + std::to_string(key_of(x)) + " landed on the wrong rank";
    if (r.sort && k > 0 && key_of(x) < key_of(x - rec)) return "local order broken";
  }
  return {};
}

// Exactly once at the right rank (checksums), payloads intact, and for the sort globally
// sorted: the last key of a rank <= the first of the next non-empty one. Collective.
void validate(Variant& v, const Records& r, const Buffers& b, const libcomm::Comm& comm) {
  Checksum after;
  std::string local = local_problem(r, b, after, comm.rank());
  const Checksum all = after.global(comm.mpi());
  if (local.empty() && !std::equal(all.sum, all.sum + 3, r.before.sum))
    local = "multiset checksum: " + std::to_string(all.sum[0]) + " records arrived, " + std::to_string(r.before.sum[0]) + " sent";
  if (r.sort) {
    const auto n = static_cast<std::int64_t>(b.out.size() / r.rec);
    const std::uint64_t mm[3] = {n > 0 ? 1ULL : 0ULL, n > 0 ? key_of(b.out.data()) : 0,
                                 n > 0 ? key_of(b.out.data() + (n - 1) * static_cast<std::int64_t>(r.rec)) : 0};
    std::vector<std::uint64_t> ends(3 * static_cast<std::size_t>(comm.size()));
    MPI_Allgather(mm, 3, MPI_UINT64_T, ends.data(), 3, MPI_UINT64_T, comm.mpi());
    std::uint64_t last = 0;
    bool any = false;
    for (std::size_t k = 0; k < ends.size(); k += 3) {
      if (!ends[k]) continue;
      if (any && ends[k + 1] < last && local.empty()) local = "global order broken between ranks";
      last = ends[k + 2], any = true;
    }
  }
  if (!local.empty())
    std::cerr << "redistribute: rank " << comm.rank() << ": " << libcomm::alltoallv_algo_name(v.algo) << ": " << local << "\n";
  if (apps::slowest(local.empty() ? 0.0 : 1.0, comm.mpi()) > 0 && v.problem.empty())
    v.problem = local.empty() ? "another rank failed" : local;
}

const apps::Table kTable({{"algo", 14, true}, {"ran", 12, true, ""}, {"compose_us", 13, false, ""},
                          {"communicate_us", 16, false, ""}, {"decompose_us", 15, false, ""}, {"ratio", 9, false, ""},
                          {"validation", 0, true, "  "}});

int report(const Settings& s, const std::vector<Variant>& variants, const Records& r, int p) {
  nlohmann::json results = nlohmann::json::array();
  apps::Validation validation;
  std::string table;
  double native = 0;
  for (const auto& v : variants) {
    const double c = apps::median(v.communicate);
    if (v.algo == libcomm::AlltoallvAlgo::Native) native = c;
    const double ratio = native > 0 ? c / native : 0;  // 0: no native run to divide by
    validation.add(v.problem.empty());
    const std::string name(libcomm::alltoallv_algo_name(v.algo)), verdict = v.problem.empty() ? "PASS" : "FAIL";
    table += kTable.row({name, v.ran, apps::fixed(apps::median(v.compose) * 1e6, 1), apps::fixed(c * 1e6, 1),
                         apps::fixed(apps::median(v.decompose) * 1e6, 1), apps::fixed(ratio, 2), verdict}) +
             "\n";
    results.push_back({{"algo", name + "/" + s.mode}, {"ran", v.ran + "/" + s.mode},
                       {"block_bytes", r.count() * static_cast<std::int64_t>(s.rec)}, {"median_s", c},
                       {"compose_median_s", apps::median(v.compose)}, {"decompose_median_s", apps::median(v.decompose)},
                       {"ratio_to_native", native > 0 ? nlohmann::json(ratio) : nlohmann::json(nullptr)},
                       {"times_s", v.communicate}, {"validation", verdict}});
  }
  if (apps::is_root()) {
    std::cout << kTable.header() << "\n" << table
              << "(times: median over reps of the slowest rank; ratio = communicate / native communicate)\n"
              << (validation.ok() ? "validation: PASS (every record arrived exactly once at its rank: count and "
                                    "multiset checksum match, payloads intact" +
                                        std::string(s.kase == "sort" ? ", globally sorted)" : ")")
                                  : "validation: FAIL (see the messages above)")
              << "\n";
    apps::write_json(s.run.json, {{"program", "redistribute"}, {"case", s.kase}, {"ranks", p}, {"mode", s.mode},
                                  {"record_bytes", s.rec}, {"validation", validation.verdict()}, {"results", results}});
  }
  return validation.ok() ? 0 : 1;
}

int run(int argc, char** argv) {
  const Settings s = parse(argc, argv);
  const libcomm::Comm comm = apps::world_comm(s.run.nodes);
  libcomm::AlltoallvMode mode{};
  try {
    mode = libcomm::alltoallv_mode_from_name(s.mode);
  } catch (const libcomm::Error& e) {
    throw libcomm::Error(std::string("--mode: ") + e.what());
  }
  std::vector<Variant> variants = build_variants(s, comm.size());
  const Records r = make_records(s, comm);
  if (apps::is_root())
    std::cout << "redistribute: case=" << s.kase << (s.kase == "pattern" ? " pattern=" + s.pattern : "")
              << " ranks=" << comm.size() << " records/rank=" << r.count() << " (rank 0) record=" << s.rec
              << " B mode=" << s.mode << " reps=" << s.run.reps << "\n\n";
  const auto p = static_cast<std::size_t>(comm.size());
  Buffers b{std::vector<std::byte>(r.data.size()), {}, {}, std::vector<std::int64_t>(p), std::vector<std::int64_t>(p),
            std::vector<std::int64_t>(p), std::vector<std::int64_t>(p)};
  for (auto& v : variants) redistribute(v, r, mode, true, b, comm), validate(v, r, b, comm);  // warm-up
  apps::round_robin(s.run.reps, variants.size(), [&](int, std::size_t k) {
    const auto t = apps::slowest(redistribute(variants[k], r, mode, false, b, comm), comm.mpi());
    variants[k].compose.push_back(t[0]);
    variants[k].communicate.push_back(t[1]);
    variants[k].decompose.push_back(t[2]);
    validate(variants[k], r, b, comm);
  });
  return report(s, variants, r, comm.size());
}

}  // namespace

int main(int argc, char** argv) { return apps::mpi_main(argc, argv, "redistribute", run); }
