// The parameters of Auto's cost model (docs/algorithms.md, "Cost formulas"): what one
// message, one byte on a link, one copied and one combined byte cost on this machine.
// Every algorithm's formula is written in these terms (alpha-beta-gamma, Hockney's model
// with the node layout): a message of n bytes between two nodes costs alpha + n beta; k
// ranks of a node sending at once share its link as far as `share_inter` says (1: each
// gets 1/k of it; 0: each its own; measured by commbench --calibrate); between ranks of
// one node a message costs alpha_intra + n beta_intra, k at once shared as `share_intra` says;
// k messages one rank posts at once to other nodes, as `share_fanout` says (below 1 where a
// single flow cannot fill the link: a TCP window over a long path); k messages from other
// nodes to one rank at once, as `share_fanin` says (below 1 where part of a message's time
// is its sender's own per-byte work, which the senders do side by side). `overhead` is the part of
// alpha that a rank pays again for each of several messages it posts at once (the rest,
// the latency, overlaps). Copies cost `copy` per byte (copy_at: less where measured in
// cache), combining (a reduction) `gamma`.
// The network between the nodes (a switch's backbone, a tree's uplinks) carries
// `network_links` nodes' links' worth of traffic at once: when more nodes than that send in
// one round, their bytes share it (0: it carries every node's link at full rate).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libcomm/node_map.hpp"

namespace libcomm {

struct CostParams {
  double alpha = 2.0e-6;         // s, message start-up between nodes
  double beta = 1.0e-10;         // s/byte on a node's link (10 GB/s)
  double alpha_intra = 0.5e-6;   // s, between ranks of one node
  double beta_intra = 2.0e-10;   // s/byte between ranks of one node (5 GB/s)
  double overhead = 0.2e-6;      // s per further message posted at once
  double copy = 1.25e-10;        // s/byte of a local copy (8 GB/s)
  double gamma = 2.5e-10;        // s/byte combined by a reduction (4 GB/s)
  // Optional: one-way times of single messages measured at `sizes` (commbench --calibrate),
  // between nodes and inside one. Where given, an n-byte message's bytes cost the slope of
  // their piecewise-linear interpolation from 0 to n (a protocol switch, or a simulator's
  // size-dependent bandwidth factors, bends the line); beyond the last size, the last
  // segment's slope.
  std::vector<double> sizes, one_way, one_way_intra;
  // Optional: the time of one copy of each of `sizes` bytes by every rank of a node at once,
  // on buffers used again and again (in cache as far as they fit, as a call that reuses its
  // buffers finds them). Where given, a copy of n <= the last size costs the slope of their
  // interpolation from 0 to n; a larger one `copy` (measured out of cache).
  std::vector<double> copy_in_cache;
  double beta_scale = 1;  // ranks sharing each link beyond what a formula counts (a scheme's columns)
  double share_inter = 1;  // 0..1: how much k concurrent flows of a node slow each other
  double share_intra = 1;
  double share_fanout = 1;  // 0..1: how much k messages one rank posts at once to other nodes slow each other
  double share_fanin = 1;  // 0..1: how much k messages from other nodes to one rank at once slow each other
  double network_links = 0;  // node links' worth the network carries at once; 0: unlimited
  // Where the network limits: the time of an exchange among `network_nodes` nodes' first
  // ranks, each with all the others at once, at `sizes` (its bytes per message at n cost the
  // slope, shared by the N (N - 1) messages; small messages fill a network less well).
  std::vector<double> network;
  double network_nodes = 0;
  std::string source = "defaults";  // "defaults", the file it came from, or "calibrated"

  // Seconds per byte of an n-byte message between nodes / inside one.
  double beta_at(double n) const { return beta_scale * slope(one_way, n, beta); }
  double beta_intra_at(double n) const { return slope(one_way_intra, n, beta_intra); }
  // Seconds of an n-byte message between nodes that its bytes at the last measured rate do
  // not explain (one_way at n over one_way at the first size, less n times the last
  // segment's slope; 0 without one_way): a latency that grows with the size (SMPI's
  // size-dependent factors, a protocol's handshake), which each message pays once even
  // where a shared network, not its link, sets the pace of its bytes.
  double size_latency_at(double n) const;
  // Seconds per byte of a local copy of n bytes.
  double copy_at(double n) const {
    return !sizes.empty() && n <= sizes.back() ? slope(copy_in_cache, n, copy) : copy;
  }
  // How many single messages' worth of time k concurrent messages of a node take.
  double inter_flows(double k) const { return k <= 1 ? k : 1 + (k - 1) * share_inter; }
  double intra_flows(double k) const { return k <= 1 ? k : 1 + (k - 1) * share_intra; }
  double fanout_flows(double k) const { return k <= 1 ? k : 1 + (k - 1) * share_fanout; }
  // (Calibration sees fan-in from up to kFaninMeasured ranks; each one beyond is charged in
  // full: however little one flow fills a link, many fill it.)
  static constexpr double kFaninMeasured = 8;
  double fanin_flows(double k) const {
    if (k <= 1) return k;
    const double seen = std::min(k, kFaninMeasured);
    return 1 + (seen - 1) * share_fanin + (k - seen);
  }
  // How much slower than its own link a node's traffic goes when `sending` nodes use the
  // network at once (1 while the network carries them all).
  double network_share(double sending) const {
    return network_links > 0 && sending > network_links ? sending / network_links : 1.0;
  }
  // Seconds per byte of n-byte messages through one link that many flows keep full: the
  // network's (below) times the links it carries, where it was measured; else 0 (no bound
  // beyond the sharing factors: a one-way time may hold a sender's own per-byte work).
  double full_link_beta_at(double n) const {
    return network_links > 0 && network_measured() ? network_beta_at(n) * network_links : 0.0;
  }
  // Seconds per byte of n-byte messages through the network where it limits (the measured
  // exchange's slope over its messages, else a link's over network_links).
  double network_beta_at(double n) const {
    if (network_measured())
      return slope(network, n, beta * network_nodes * (network_nodes - 1)) / (network_nodes * (network_nodes - 1));
    return network_links > 0 ? beta_at(n) / network_links : 0.0;
  }

 private:
  bool network_measured() const { return network_nodes >= 2 && network.size() == sizes.size(); }
  double slope(const std::vector<double>& t, double n, double fallback) const;
};

// Reads a parameter file ("key = value" lines, '#' comments): alpha_us, beta_ns_per_byte,
// alpha_intra_us, beta_intra_ns_per_byte, overhead_us, copy_ns_per_byte,
// gamma_ns_per_byte, and one_way_us / one_way_intra_us / network_us / copy_us as
// "BYTES:US" pairs at the same sizes (the measured message and copy times); the flat-model keys of commbench --calibrate (ts_us, tc_td_us, tm_us,
// libcomm/cost_model.hpp) stand for alpha, beta and copy when those are absent, and a
// missing intra-node figure takes the inter-node one. Throws Error naming the file and
// line of a malformed, negative or unknown value.
CostParams load_cost_params(const std::string& path);
// Writes every key (what commbench --calibrate writes beside the flat-model keys).
std::string cost_params_text(const CostParams& c);

namespace detail {
// A value of a "key = value" parameter file (these, and the flat model's of
// libcomm/cost_model.hpp): a finite number >= 0, else an Error naming `where` and the key.
double nonnegative_value(const std::string& where, const std::string& key, const std::string& value);
// Calls `each` with "path:line", key and value (trimmed) for every line of such a file but
// blanks and # comments. Errors: `cannot_read` when it cannot be opened, and a line without
// '=' (quoted trimmed with `quote_trimmed`, else as written but for its comment).
void read_key_values(const std::string& path, const std::string& cannot_read, bool quote_trimmed,
                     const std::function<void(const std::string& where, const std::string& key,
                                              const std::string& value)>& each);
// The keys of a parameter file whose values are BYTES:US tables: one_way_us,
// one_way_intra_us, network_us, copy_us.
bool is_cost_table_key(std::string_view key);
// `s` without the blanks (" \t\r") it starts and ends with.
std::string trim(std::string_view s);
}  // namespace detail

namespace sim {
// The network as the simulated platform declares it (a SimGrid build under smpirun's flow
// model): the one-way time of one message of each of `sizes` bytes, as SimGrid charges it
// (route latency x latency factor(n) + n / (route bandwidth x bandwidth factor(n)), the
// factors SMPI's size-dependent ones), from this rank's host to the host farthest from it
// (the route of the most latency: across a tree, its top) and to a rank on its own host.
// What auto's model starts from when no model file is named (active_cost_params);
// defined by the runtime (runtime/sim.cpp), which knows the simulator. Empty outside a SimGrid build
// and under the packet model (where ns-3's TCP decides a message's time).
struct PlatformTimes {
  std::vector<double> sizes, inter, intra;  // bytes; seconds
  bool inter_shared = true, intra_shared = true;  // do concurrent flows on those routes share a link
  double copy = 0;  // s/byte of a local copy, where the simulation charges copies (--model-copy); else 0
  std::string route;                        // which hosts, which factors
};
std::optional<PlatformTimes> platform_times(const std::vector<double>& sizes);

}  // namespace sim

// The parameters Auto's model uses: set_cost_params', else the file named by LIBCOMM_MODEL,
// else <tuning directory>/<LIBCOMM_PLATFORM>.model when that exists (LIBCOMM_TUNING_DIR,
// default inputs/tuning; scripts/simulate.sh sets LIBCOMM_PLATFORM to the platform's
// name), else in a simulation what the platform declares (sim::platform_times), else the
// defaults above. Loaded once; a named file that cannot be
// read is an Error.
const CostParams& active_cost_params();
void set_cost_params(const CostParams& c);

// The node layout a formula sees: P, the number of nodes and the largest node's ranks.
struct Layout {
  int ranks = 1;
  int nodes = 1;
  int ppn = 1;  // ranks of the largest node
  static Layout of(const NodeMap& nodes);
  static Layout flat(int ranks) { return {ranks, ranks, 1}; }
  bool one_node() const { return nodes == 1 && ranks > 1; }
};

}  // namespace libcomm
