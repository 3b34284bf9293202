#include "libcomm/sim.hpp"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <sstream>

#include "libcomm/cost_params.hpp"
#include "libcomm/error.hpp"

#ifdef LIBCOMM_SIMGRID
#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>
#include <smpi/smpi.h>
#include <xbt/config.h>
#include <xbt/config.hpp>
// smpi_helpers.h turns clock_gettime into SMPI's simulated clock; here we want the real
// CPU time of the thread.
#undef clock_gettime
#endif

namespace libcomm::sim {
namespace {
// Per process; under SMPI's privatisation, per simulated process.
double g_charged = 0.0;
double g_copy_rate = 0.0;  // bytes per second of the copy model; 0 = off
double g_cold_rate = 0.0;  // of a cold copy; 0 = g_copy_rate
double g_flop_rate = 0.0;  // flops per second of the flop model; 0 = off
}  // namespace

double thread_cpu_seconds() {
#ifdef LIBCOMM_SIMGRID
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
#else
  return 0.0;
#endif
}

bool smpi_charges_computation() {
#ifdef LIBCOMM_SIMGRID
  static const bool benchmarks = sg_cfg_get_boolean("smpi/simulate-computation") != 0;
  return benchmarks;
#else
  return false;
#endif
}

void charge_seconds(double seconds) {
#ifdef LIBCOMM_SIMGRID
  if (seconds <= 0.0) return;
  g_charged += seconds;
  smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
#else
  (void)seconds;
#endif
}

void set_copy_rate(double bytes_per_second) { g_copy_rate = bytes_per_second; }

void set_cold_copy_rate(double bytes_per_second) { g_cold_rate = bytes_per_second; }

void set_flop_rate(double flops_per_second) { g_flop_rate = flops_per_second; }
double flop_rate() { return g_flop_rate; }
void charge_flops(double flops) {
  if (g_flop_rate > 0.0) charge_seconds(flops / g_flop_rate);
}

bool cold_copies_differ() { return g_copy_rate > 0.0 && g_cold_rate > 0.0 && g_cold_rate != g_copy_rate; }

void charge_copy(double bytes, bool cold) {
  if (g_copy_rate <= 0.0) return;
  charge_seconds(bytes / (cold && g_cold_rate > 0.0 ? g_cold_rate : g_copy_rate));
}

void require_cost_model_applies(const std::string& option) {
#ifndef LIBCOMM_SIMGRID
  throw Error(option + ": a cost model of the local work only applies to a SimGrid build "
                       "(run the program through scripts/simulate.sh)");
#else
  require(!smpi_charges_computation(),
          option + ": SMPI already charges the measured computation "
                   "(smpi/simulate-computation:yes, i.e. --host-speed); use one or the other");
#endif
}

void charge_since(double start) {
  if (smpi_charges_computation()) return;
  charge_seconds(thread_cpu_seconds() - start);
}

double charged_seconds() { return g_charged; }

#ifdef LIBCOMM_SIMGRID
namespace {

// A size-dependent factor as SMPI spells it, "BYTES:FACTOR;BYTES:FACTOR;...": a message of
// n bytes takes the factor of the largest BYTES <= n.
double factor_at(const std::string& table, double n) {
  double best_at = -1, factor = 1;
  std::istringstream entries(table);
  for (std::string entry; std::getline(entries, entry, ';');) {
    const auto colon = entry.find(':');
    if (colon == std::string::npos) continue;
    const double at = std::atof(entry.substr(0, colon).c_str());
    if (at <= n && at > best_at) {
      best_at = at;
      factor = std::atof(entry.substr(colon + 1).c_str());
    }
  }
  return factor;
}

}  // namespace

std::optional<PlatformTimes> platform_times(const std::vector<double>& sizes) {
  const std::string model = simgrid::config::get_value<std::string>("network/model");
  if (model == "ns-3") return std::nullopt;
  // SMPI's model scales by message size; the others by one constant each.
  const bool smpi = model == "SMPI";
  const std::string lat_table = smpi ? simgrid::config::get_value<std::string>("smpi/lat-factor") : "";
  const std::string bw_table = smpi ? simgrid::config::get_value<std::string>("smpi/bw-factor") : "";
  const double lat_const = smpi ? 1 : simgrid::config::get_value<double>("network/latency-factor");
  const double bw_const = smpi ? 1 : simgrid::config::get_value<double>("network/bandwidth-factor");
  const sg_host_t self = sg_host_self();
  sg_host_t* hosts = sg_host_list();
  sg_host_t far = self;
  double far_latency = -1;
  for (std::size_t i = 0, n = sg_host_count(); i < n; ++i) {
    if (hosts[i] == self) continue;
    const double latency = sg_host_get_route_latency(self, hosts[i]);
    if (latency > far_latency) far = hosts[i], far_latency = latency;
  }
  std::free(hosts);
  // The one-way times to `to` at every size.
  const auto one_way = [&](sg_host_t to) {
    const double lat = sg_host_get_route_latency(self, to), bw = sg_host_get_route_bandwidth(self, to);
    std::vector<double> out;
    for (const double n : sizes) {
      const double lf = smpi ? factor_at(lat_table, n) : lat_const, bf = smpi ? factor_at(bw_table, n) : bw_const;
      out.push_back(lat * lf + (bw > 0 ? n / (bw * bf) : 0.0));
    }
    return out;
  };
  // Whether flows on a route share a link (a cluster's loopback is often a fat pipe: each
  // flow at the full rate).
  const auto shared = [&](sg_host_t to) {
    xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), nullptr);
    sg_host_get_route(self, to, links);
    bool any = false;
    for (unsigned long i = 0; i < xbt_dynar_length(links); ++i)
      any = any || sg_link_is_shared(xbt_dynar_get_as(links, i, sg_link_t)) != 0;
    xbt_dynar_free(&links);
    return any;
  };
  PlatformTimes t;
  t.sizes = sizes;
  t.copy = g_copy_rate > 0 ? 1.0 / g_copy_rate : 0.0;
  t.inter_shared = shared(far);
  t.intra_shared = shared(self);
  t.inter = one_way(far);
  t.intra = one_way(self);
  t.route = std::string(sg_host_get_name(self)) + " -> " + sg_host_get_name(far) + ", network model " + model;
  return t;
}

namespace {

// The actors of the cross traffic are named so (they are not ranks: see free_hosts).
constexpr const char* kSender = "libcomm-cross-traffic-sender";
constexpr const char* kReceiver = "libcomm-cross-traffic-receiver";
char g_token;  // what a message carries (SimGrid sends no null payload); its size is simulated

// argv: mailbox, seed, mean bytes, gap seconds. Daemons: the simulation ends with the ranks.
void send_for_ever(int argc, char** argv) {
  if (argc < 5) return;
  const sg_mailbox_t to = sg_mailbox_by_name(argv[1]);
  std::mt19937_64 draw(std::strtoull(argv[2], nullptr, 10));
  const double mean = std::atof(argv[3]), gap = std::atof(argv[4]);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (;;) {
    sg_actor_sleep_for(2 * gap * u(draw));
    sg_mailbox_put(to, &g_token, 1 + static_cast<long>(2 * mean * u(draw)));
  }
}

void receive_for_ever(int argc, char** argv) {
  if (argc < 2) return;
  const sg_mailbox_t from = sg_mailbox_by_name(argv[1]);
  for (;;) sg_mailbox_get(from);
}

// The hosts that run no rank, in platform order. SMPI counts a host's actors as that node's
// ranks (MPI_Comm_split_type would wait for a traffic actor as for a rank), so the traffic
// goes where no rank is.
std::vector<sg_host_t> free_hosts() {
  std::vector<sg_host_t> out;
  sg_host_t* hosts = sg_host_list();
  for (std::size_t i = 0, n = sg_host_count(); i < n; ++i) {
    xbt_dynar_t actors = xbt_dynar_new(sizeof(sg_actor_t), nullptr);
    sg_host_get_actor_list(hosts[i], actors);
    bool ranks = false;
    for (unsigned long a = 0; a < xbt_dynar_length(actors); ++a) {
      const std::string name = sg_actor_get_name(xbt_dynar_get_as(actors, a, sg_actor_t));
      ranks = ranks || (name != kSender && name != kReceiver);
    }
    if (!ranks) out.push_back(hosts[i]);
    xbt_dynar_free(&actors);
  }
  std::free(hosts);
  return out;
}

void start_actor(const char* name, sg_host_t where, void (*code)(int, char**), const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  sg_actor_t actor = sg_actor_init(name, where);
  sg_actor_daemonize(actor);
  sg_actor_start_(actor, code, static_cast<int>(argv.size()), argv.data());
}

}  // namespace

void start_cross_traffic(std::uint64_t seed, int pairs, double mean_bytes, double gap_s, bool start) {
  require(pairs >= 1, "cross traffic: at least 1 pair of hosts, got " + std::to_string(pairs));
  require(mean_bytes >= 1 && gap_s >= 0, "cross traffic: the mean message must be >= 1 byte and the gap >= 0 s");
  std::vector<sg_host_t> hosts = free_hosts();
  require(hosts.size() >= 2 * static_cast<std::size_t>(pairs),
          "cross traffic: " + std::to_string(pairs) + " pairs need " + std::to_string(2 * pairs) +
              " hosts that run no rank; the platform has " + std::to_string(hosts.size()) + " (run fewer ranks or pairs)");
  if (!start) return;
  std::mt19937_64 draw(seed);
  std::shuffle(hosts.begin(), hosts.end(), draw);
  for (int k = 0; k < pairs; ++k) {
    const std::string mailbox = "libcomm-cross-traffic-" + std::to_string(k);
    const auto i = static_cast<std::size_t>(2 * k);
    start_actor(kSender, hosts[i], send_for_ever,
                {kSender, mailbox, std::to_string(seed + 1 + static_cast<std::uint64_t>(k)), std::to_string(mean_bytes),
                 std::to_string(gap_s)});
    start_actor(kReceiver, hosts[i + 1], receive_for_ever, {kReceiver, mailbox});
  }
}
#else
std::optional<PlatformTimes> platform_times(const std::vector<double>&) { return std::nullopt; }
void start_cross_traffic(std::uint64_t, int, double, double, bool) {
  throw Error("cross traffic applies to a SimGrid build only (run the program through scripts/simulate.sh)");
}
#endif

}  // namespace libcomm::sim
