// Calibration of the flat model of paper 001 (section 2) on the machine it runs on, and
// the platform files that carry the result to commbench --predict file:PATH.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <sstream>
#include <unistd.h>
#include <vector>

#include "libcomm/cost_model.hpp"
#include "libcomm/reduction.hpp"
#include "libcomm/buffer.hpp"
#include "libcomm/sim.hpp"
#include "libcomm/program.hpp"
#include "../runtime/plan_state.hpp"

namespace libcomm {

void save_flat_platform(const FlatPlatform& f, const std::string& path,
                        const std::string& comment) {
  std::ofstream out(path);
  require(static_cast<bool>(out), "cannot write the platform file '" + path + "'");
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  out << std::setprecision(9) << "name = " << f.name << "\nts_us = " << f.ts_us
      << "\ntc_td_us = " << f.tc_td_us << "\ntm_us = " << f.tm_us << "\n";
  require(static_cast<bool>(out), "cannot write the platform file '" + path + "'");
}

FlatPlatform load_flat_platform(const std::string& path) {
  FlatPlatform f;
  f.name = path;
  bool have_ts = false, have_tc_td = false;
  const auto line = [&](const std::string& where, const std::string& key, const std::string& value) {
    if (key == "name") {
      f.name = value;
      return;
    }
    if (detail::is_cost_table_key(key)) return;  // auto's tables (cost_params.hpp reads them)
    const double v = detail::nonnegative_value(where, key, value);
    if (key == "ts_us") {
      f.ts_us = v, have_ts = true;
    } else if (key == "tc_td_us") {
      f.tc_td_us = v, have_tc_td = true;
    } else if (key == "tm_us") {
      f.tm_us = v;
    } else if (key.starts_with("alpha") || key.starts_with("beta") || key.starts_with("share_") ||
               key.starts_with("network_") || key == "overhead_us" || key == "copy_ns_per_byte" ||
               key == "gamma_ns_per_byte") {
      // Auto's cost-model keys, written by the same calibration (libcomm/cost_params.hpp).
    } else {
      throw Error(where + ": unknown key '" + key + "' (valid: name, ts_us, tc_td_us, tm_us)");
    }
  };
  detail::read_key_values(path, "cannot read the platform file '" + path + "'", false, line);
  require(have_ts && have_tc_td, path + ": ts_us and tc_td_us are required");
  return f;
}

LineFit fit_line_relative(std::span<const double> x, std::span<const double> y) {
  require(x.size() == y.size() && x.size() >= 2, "fit_line_relative: needs at least 2 points");
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  auto weight = [](double t) { return t > 0 ? 1.0 / (t * t) : 1.0; };
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double w = weight(y[i]);
    sw += w, sx += w * x[i], sy += w * y[i], sxx += w * x[i] * x[i], sxy += w * x[i] * y[i];
  }
  const double det = sw * sxx - sx * sx;
  require(det > 0, "fit_line_relative: the sizes must not all be equal");
  LineFit fit;
  fit.slope = (sw * sxy - sx * sy) / det;
  fit.intercept = (sy - fit.slope * sx) / sw;
  double rr = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = y[i] - (fit.intercept + fit.slope * x[i]);
    rr += y[i] > 0 ? (r / y[i]) * (r / y[i]) : 0;
  }
  fit.rms_relative = std::sqrt(rr / static_cast<double>(x.size()));
  return fit;
}

namespace {

// Round trips per timing: enough that a timing of small messages is not one clock tick,
// few for large ones.
int round_trips(std::size_t bytes) {
  return static_cast<int>(std::clamp<std::size_t>((std::size_t{1} << 22) / (bytes + 1), 2, 50));
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The cache the cores of a node share last (sysconf; 32 MiB where it does not say).
std::size_t last_level_cache_bytes() {
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE})
    if (const long v = sysconf(name); v > 0) return static_cast<std::size_t>(v);
  return std::size_t{32} << 20;
}

// Seconds per call of a local kernel on `bytes` (a copy, a combine) as the algorithms meet
// it: every rank of rank 0's node runs it at once (their copies share the node's memory).
// Out of cache (`in_cache` false), each rank's buffers move on through a pool of its own,
// the node's pools together twice its last-level cache (data the application used long
// before); in cache, its pool is the two buffers (slots) it copies between every time (a
// call that reuses its buffers, as far as they fit). Rank 0's median of `reps`, on every rank.
template <class Kernel>
double node_kernel_seconds(const Comm& comm, std::size_t bytes, int reps, bool in_cache, Kernel kernel) {
  const NodeMap& nodes = comm.nodes();
  const int home = nodes.node_of(0);
  const bool runs = nodes.node_of(comm.rank()) == home;
  const std::size_t stride = (bytes + 63) / 64 * 64 + 64;
  const std::size_t pool =
      in_cache ? 2 * stride
               : std::max(4 * stride, 2 * last_level_cache_bytes() / static_cast<std::size_t>(nodes.node_size(home)));
  const std::size_t slots = pool / stride;
  std::vector<double> buf(runs ? slots * stride / sizeof(double) : 0, 1.0);
  std::byte* base = reinterpret_cast<std::byte*>(buf.data());
  const int n = round_trips(bytes);
  std::size_t next = 0;  // the pool's next slot (it moves on from one repetition to the next)
  std::vector<double> t;
  for (int rep = -1; rep < reps; ++rep) {  // rep -1: warm-up, not kept
    MPI_Barrier(comm.internal());
    const double t0 = MPI_Wtime();
    for (int k = 0; k < n && runs; ++k, next = (next + 2) % (slots - 1))
      kernel(base + (next + 1) * stride, base + next * stride, bytes);
    if (rep >= 0) t.push_back((MPI_Wtime() - t0) / n);
  }
  double v = median_of(t);
  MPI_Bcast(&v, 1, MPI_DOUBLE, 0, comm.internal());
  return v;
}

// The measurements are step programs run by the executor, as libcomm's algorithms are:
// what they time is what an algorithm pays per message. Every message has the Sync tag,
// so that an empty one is posted too. A rank that takes no part runs an empty program.

// The seconds of each of `reps` runs of this rank's `program` (after one untimed run), each
// from a barrier.
std::vector<double> timed_runs(const Comm& comm, StepProgram program, int reps) {
  const std::size_t send = program.send_bytes, recv = program.recv_bytes;
  const auto plan = detail::program_plan(comm, std::move(program), "calibration", false);
  std::vector<std::byte> out(send + 1), in(recv + 1);
  std::vector<double> t;
  for (int rep = -1; rep < reps; ++rep) {
    MPI_Barrier(comm.internal());
    const double t0 = MPI_Wtime();
    detail::run_blocking(*plan, out.data(), in.data(), comm);
    if (rep >= 0) t.push_back(MPI_Wtime() - t0);
  }
  return t;
}

// The median of timed_runs on rank `root`, divided by `per`: what every rank returns.
double median_on(const Comm& comm, int root, StepProgram program, int reps, double per = 1) {
  double v = median_of(timed_runs(comm, std::move(program), reps)) / per;
  MPI_Bcast(&v, 1, MPI_DOUBLE, root, comm.internal());
  return v;
}

// `trips` times: rank a sends `bytes` to b, then b sends them back.
StepProgram ping_pong_program(int me, int p, int a, int b, std::size_t bytes, int trips) {
  ProgramBuilder pb("ping-pong", me, p);
  const ByteRange out{Area::Send, 0, bytes}, in{Area::Recv, 0, bytes};
  for (std::uint32_t t = 0; t < static_cast<std::uint32_t>(trips) && (me == a || me == b); ++t) {
    if (me == a) pb.send(2 * t, b, out, 2 * t, TagKind::Sync), pb.recv(2 * t + 1, b, in, 2 * t + 1, TagKind::Sync);
    else pb.recv(2 * t, a, in, 2 * t, TagKind::Sync), pb.send(2 * t + 1, a, out, 2 * t + 1, TagKind::Sync);
  }
  pb.set_extents(bytes, bytes);
  return std::move(pb).program();
}

// `trips` times: this rank sends `bytes` to each of `peers` and receives theirs, all at once.
StepProgram exchanges_program(int me, int p, const std::vector<int>& peers, std::size_t bytes, int trips) {
  ProgramBuilder pb("exchanges", me, p);
  for (std::uint32_t t = 0; t < static_cast<std::uint32_t>(trips) && !peers.empty(); ++t)
    for (std::size_t j = 0; j < peers.size(); ++j) {
      pb.recv(t, peers[j], {Area::Recv, j * bytes, bytes}, t, TagKind::Sync);
      pb.send(t, peers[j], {Area::Send, 0, bytes}, t, TagKind::Sync);
    }
  pb.set_extents(bytes, peers.size() * bytes);
  return std::move(pb).program();
}

// One-way time of a ping-pong of `bytes` between ranks a and b (median of reps).
double ping_pong(const Comm& comm, int a, int b, std::size_t bytes, int reps) {
  const int n = round_trips(bytes);
  return median_on(comm, a, ping_pong_program(comm.rank(), comm.size(), a, b, bytes, n), reps, 2.0 * n);
}

// One-way time of `bytes` when every rank exchanges with all its `peers` at once (each
// sends to each and receives from each; no peers: the rank only waits), the slowest
// participant's, median of `reps`.
double exchanges_time(const Comm& comm, const std::vector<int>& peers, std::size_t bytes, int reps, int trips = 0) {
  const int n = trips > 0 ? trips : round_trips(bytes);
  std::vector<double> t = timed_runs(comm, exchanges_program(comm.rank(), comm.size(), peers, bytes, n), reps);
  for (double& mine : t) {
    mine = peers.empty() ? 0.0 : mine / n;
    MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_DOUBLE, MPI_MAX, comm.internal());
  }
  return median_of(t);
}

// The same when the pairs (a[j], b[j]) exchange at once.
double pairs_exchanging(const Comm& comm, const std::vector<int>& a, const std::vector<int>& b, std::size_t bytes,
                        int reps) {
  std::vector<int> partner;
  for (std::size_t j = 0; j < a.size(); ++j) {
    if (comm.rank() == a[j]) partner = {b[j]};
    if (comm.rank() == b[j]) partner = {a[j]};
  }
  return exchanges_time(comm, partner, bytes, reps);
}

// How much m concurrent exchanges slow each other, as CostParams' share (0..1): with the
// time ratio R of m pairs to one pair and f flows a pair puts on the shared resource,
// R = (1 + (m f - 1) s) / (1 + (f - 1) s).
double share_of(const Comm& comm, const std::vector<int>& a, const std::vector<int>& b, int flows_per_pair,
                std::size_t bytes, int reps) {
  if (a.size() < 2) return 1.0;  // nothing to measure: the conservative full sharing
  const double one = pairs_exchanging(comm, {a[0]}, {b[0]}, bytes, reps);
  const double all = pairs_exchanging(comm, a, b, bytes, reps);
  if (!(one > 0)) return 1.0;
  const double r = all / one, m = static_cast<double>(a.size()), f = flows_per_pair;
  const double denom = m * f - 1 - r * (f - 1);
  const double s = denom > 0 ? (r - 1) / denom : 1.0;
  return std::clamp(s, 0.0, 1.0);
}

// The share s of k concurrent flows, timed by `timed(k)`, against a single one, from
// R = timed(k) / timed(1) = 1 + (k - 1) s (1, full sharing, when nothing was measured).
template <class Timed>
double linear_share(std::size_t k, Timed timed) {
  if (k < 2) return 1.0;
  const double one = timed(1);  // (in this order on every rank: each timing is collective)
  const double all = timed(k);
  if (!(one > 0)) return 1.0;
  return std::clamp((all / one - 1) / (static_cast<double>(k) - 1), 0.0, 1.0);
}

// share_fanout: rank 0 exchanging `bytes` with every rank of `far` at once against with the
// first alone; R = 1 + (k - 1) s.
double fanout_share(const Comm& comm, const std::vector<int>& far, std::size_t bytes, int reps) {
  const int me = comm.rank();
  const auto timed = [&](std::size_t k) {  // rank 0 with the first k of `far`
    const auto first = far.begin(), last = far.begin() + static_cast<std::ptrdiff_t>(k);
    std::vector<int> peers;
    if (me == 0) peers.assign(first, last);
    if (std::find(first, last, me) != last) peers = {0};
    return exchanges_time(comm, peers, bytes, reps);
  };
  return linear_share(far.size(), timed);
}

// share_fanin: the ranks of `far` sending `bytes` to rank 0 at once against the first alone
// (rank 0 acknowledges each trip's messages with empty ones, so trips do not overlap);
// R = 1 + (k - 1) s.
double fanin_share(const Comm& comm, const std::vector<int>& far, std::size_t bytes, int reps) {
  const int me = comm.rank(), trips = round_trips(bytes);
  const auto timed = [&](std::size_t k) {
    const auto first = far.begin(), last = far.begin() + static_cast<std::ptrdiff_t>(k);
    ProgramBuilder pb("fan-in", me, comm.size());
    for (std::uint32_t t = 0; t < static_cast<std::uint32_t>(trips); ++t) {
      if (me == 0) {
        for (std::size_t j = 0; j < k; ++j) pb.recv(2 * t, far[j], {Area::Recv, j * bytes, bytes}, 2 * t, TagKind::Sync);
        for (std::size_t j = 0; j < k; ++j) pb.send(2 * t + 1, far[j], {}, 2 * t + 1, TagKind::Sync);
      } else if (std::find(first, last, me) != last) {
        pb.send(2 * t, 0, {Area::Send, 0, bytes}, 2 * t, TagKind::Sync);
        pb.recv(2 * t + 1, 0, {}, 2 * t + 1, TagKind::Sync);
      }
    }
    pb.set_extents(bytes, k * bytes);
    return median_on(comm, 0, std::move(pb).program(), reps, trips);
  };
  return linear_share(far.size(), timed);
}

// The network between the nodes: the first ranks of all N nodes exchanging with one
// another at once against the first node's rank doing the same alone with the others, at
// 64 KiB: every node's link carries as much in both, the network N times as much in the
// first; with the time ratio R the network carries N / R links' worth (network_links; 0: it
// kept up with all N). Where it did not, the all-node exchange at every size (network_us,
// a few round trips each: the network's cost of small messages, which fill it less well).
void calibrate_network(const Comm& comm, const NodeMap& nodes, const std::vector<double>& sizes, int reps,
                       CostParams& c) {
  const int n = nodes.num_nodes();
  c.network_links = 0, c.network_nodes = 0, c.network.clear();
  if (n < 3) return;  // two nodes load the network no more than their links
  const int me = comm.rank();
  std::vector<int> leaders;
  for (int k = 0; k < n; ++k) leaders.push_back(nodes.ranks_of_node(k).front());
  const bool leader = std::find(leaders.begin(), leaders.end(), me) != leaders.end();
  std::vector<int> others;
  if (leader) std::copy_if(leaders.begin(), leaders.end(), std::back_inserter(others), [&](int r) { return r != me; });
  std::vector<int> star;
  if (me == leaders[0]) star = others;
  else if (leader) star = {leaders[0]};
  constexpr std::size_t kBytes = 64 * 1024;
  const double one = exchanges_time(comm, star, kBytes, reps), all = exchanges_time(comm, others, kBytes, reps);
  if (!(one > 0) || all / one < 1.05) return;  // within noise of the links' own time
  c.network_links = n / (all / one);
  c.network_nodes = n;
  for (double bytes : sizes) c.network.push_back(exchanges_time(comm, others, static_cast<std::size_t>(bytes), reps, 2));
}

// Time rank a takes to post k empty messages to rank b and see them all arrive, per
// message beyond the first: the overhead of a further message posted at once.
double posting_overhead(const Comm& comm, int a, int b, int reps) {
  const int me = comm.rank();
  const auto burst = [&](std::uint32_t count) {
    ProgramBuilder pb("burst", me, comm.size());
    for (std::uint32_t i = 0; i < count; ++i) {
      if (me == a) pb.send(0, b, {}, 0, TagKind::Sync);
      if (me == b) pb.recv(0, a, {}, 0, TagKind::Sync);
    }
    if (me == a) pb.recv(1, b, {}, 1, TagKind::Sync);
    if (me == b) pb.send(1, a, {}, 1, TagKind::Sync);
    return median_on(comm, a, std::move(pb).program(), reps);
  };
  constexpr std::uint32_t k = 32;
  const double one = burst(1), many = burst(k);
  return std::max(0.0, (many - one) / (k - 1));
}

// Seconds per byte of reduce_local on doubles (a sum) at 1 MiB, as node_kernel_seconds
// measures a kernel.
double combine_seconds_per_byte(const Comm& comm, int reps) {
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  return node_kernel_seconds(comm, kBytes, reps, false, [](std::byte* dst, const std::byte* src, std::size_t bytes) {
    reduce_local(reinterpret_cast<const double*>(src), reinterpret_cast<double*>(dst), bytes / sizeof(double),
                 ElemType::Double, ReduceOp::Sum);
  }) / static_cast<double>(kBytes);
}

}  // namespace

FlatCalibration calibrate_flat_platform(const Comm& comm, std::span<const std::size_t> sizes, int reps) {
  const int p = comm.size();
  require(p >= 2,
          "calibration needs at least 2 ranks (a ping-pong between rank 0 and the "
          "last rank), got " +
              std::to_string(p));
  require(reps >= 1, "calibration: reps must be at least 1, got " + std::to_string(reps));
  require(sizes.size() >= 2, "calibration needs at least 2 message sizes to fit a line");
  for (std::size_t s : sizes)
    require(s <= static_cast<std::size_t>(INT_MAX),
            "calibration: message size " + std::to_string(s) + " exceeds INT_MAX bytes");
  FlatCalibration cal;
  cal.peer = p - 1;
  for (std::size_t s : sizes) {
    cal.sizes.push_back(static_cast<double>(s));
    cal.one_way_s.push_back(ping_pong(comm, 0, cal.peer, s, reps));
    // The copy rate (charged by a simulation's copy model; measured otherwise).
    const auto copy = [](std::byte* dst, const std::byte* src, std::size_t bytes) {
      sim::charge_copy(static_cast<double>(bytes));
      std::memcpy(dst, src, bytes);
    };
    cal.copy_s.push_back(node_kernel_seconds(comm, s, reps, false, copy));
    cal.copy_in_cache_s.push_back(node_kernel_seconds(comm, s, reps, true, copy));
  }
  cal.transfer = fit_line_relative(cal.sizes, cal.one_way_s);
  cal.copy = fit_line_relative(cal.sizes, cal.copy_s);
  // A noisy fit can come out slightly negative (e.g. a copy cost hidden in clock
  // resolution); the platform takes 0 then, the fit keeps the raw value.
  cal.platform.name = "calibrated";
  cal.platform.ts_us = std::max(0.0, cal.transfer.intercept * 1e6);
  cal.platform.tc_td_us = std::max(0.0, cal.transfer.slope * 1e6);
  cal.platform.tm_us = std::max(0.0, cal.copy.slope * 1e6);
  return cal;
}

CostParams calibrate_cost_params(const Comm& comm, const FlatCalibration& flat, int reps) {
  CostParams c;
  c.source = "calibrated";
  c.alpha = std::max(0.0, flat.transfer.intercept);
  c.beta = std::max(0.0, flat.transfer.slope);
  c.copy = std::max(0.0, flat.copy.slope);
  const NodeMap& nodes = comm.nodes();
  const int last = comm.size() - 1;
  const std::vector<int>& mine = nodes.ranks_of_node(nodes.node_of(0));
  // Between ranks of one node: rank 0 and the next rank of its node, when it has one (a line
  // through the one-way times at the flat calibration's sizes, fitted as that one is).
  c.alpha_intra = c.alpha, c.beta_intra = c.beta;
  c.sizes = flat.sizes;
  c.one_way = c.one_way_intra = flat.one_way_s;
  c.copy_in_cache = flat.copy_in_cache_s;
  if (mine.size() > 1) {
    c.one_way_intra.clear();
    for (double bytes : flat.sizes)
      c.one_way_intra.push_back(ping_pong(comm, 0, mine[1], static_cast<std::size_t>(bytes), reps));
    const LineFit fit = fit_line_relative(flat.sizes, c.one_way_intra);
    c.alpha_intra = std::max(0.0, fit.intercept);
    c.beta_intra = std::max(0.0, fit.slope);
  }
  // Concurrent flows (at 256 KiB, where bandwidth dominates): inside rank 0's node, its
  // ranks in pairs (2 flows in memory per pair); between rank 0's node and the last rank's,
  // the j-th ranks of each (one flow each way on each node's link per pair).
  constexpr std::size_t kShareBytes = 256 * 1024;
  std::vector<int> a, b;
  for (std::size_t j = 0; j + 1 < mine.size(); j += 2) a.push_back(mine[j]), b.push_back(mine[j + 1]);
  c.share_intra = share_of(comm, a, b, 2, kShareBytes, reps);
  a.clear(), b.clear();
  if (nodes.node_of(last) != nodes.node_of(0)) {
    const std::vector<int>& theirs = nodes.ranks_of_node(nodes.node_of(last));
    for (std::size_t j = 0; j < std::min(mine.size(), theirs.size()); ++j) a.push_back(mine[j]), b.push_back(theirs[j]);
  }
  c.share_inter = share_of(comm, a, b, 1, kShareBytes, reps);
  // One rank exchanging with up to 8 ranks of other nodes at once (one per node where the
  // nodes allow), against one of them alone.
  std::vector<int> far;
  const auto most = static_cast<std::size_t>(CostParams::kFaninMeasured);
  for (int pass = 0; pass < 2 && far.size() < most; ++pass)
    for (int r = 1; r < comm.size() && far.size() < most; ++r) {
      const bool other = nodes.node_of(r) != nodes.node_of(0);
      const bool first_of_node = nodes.ranks_of_node(nodes.node_of(r)).front() == r;
      if (other && (pass == 0) == first_of_node) far.push_back(r);
    }
  c.share_fanout = fanout_share(comm, far, kShareBytes, reps);
  c.share_fanin = fanin_share(comm, far, kShareBytes, reps);
  calibrate_network(comm, nodes, flat.sizes, reps, c);
  c.overhead = posting_overhead(comm, 0, last, reps);
  // A reduction's combine: its bytes at the copy rate where a simulation charges reductions so
  // (a simulated payload), else what the node's ranks take combining at once, out of cache.
  c.gamma = simulated_payload() ? c.copy : combine_seconds_per_byte(comm, reps);
  return c;
}

}  // namespace libcomm
