#include "cost_terms.hpp"

#include <mpi.h>

#ifdef LIBCOMM_SIMGRID
#include <xbt/config.hpp>
#endif

#include <algorithm>
#include <bit>
#include <string>

namespace libcomm::detail::cost {

int log2_ceil(int p) { return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p - 1)); }

double nodes_of_first(const Layout& l, int ranks) {
  return std::clamp((ranks + l.ppn - 1) / std::max(1, l.ppn), 1, std::max(1, l.nodes));
}

double off_node(const Layout& l, const CostParams& c, double link, double node_bytes, double each, double sending) {
  if (sending <= 0) sending = l.nodes;
  const double share = c.network_share(sending);
  if (share <= 1) return link;
  // The network paces the bytes; each message still pays its size's latency (SMPI charges
  // both: a route's latency factor grows with the message, the backbone's share does not),
  // but while one node waits out its latency the others' bytes keep the network busy: the
  // more nodes share it, the more of that wait hides behind them (1 / share of it shows).
  return std::max(link, c.size_latency_at(each) / share + sending * node_bytes * c.network_beta_at(each));
}

double exchange_round(const Layout& l, const CostParams& c, double n, int distance, double sending) {
  if (l.nodes == 1) return c.alpha_intra + n * c.beta_intra_at(n) * c.intra_flows(l.ppn);  // all in memory
  const int off = std::min(distance, l.ppn);  // ranks of a node whose partner is elsewhere
  const int on = l.ppn - off;
  const double net = c.alpha + off_node(l, c, n * c.beta_at(n) * c.inter_flows(off), off * n, n, sending);
  const double mem = on > 0 ? c.alpha_intra + n * c.beta_intra_at(n) * c.intra_flows(on) : 0.0;
  return std::max(net, mem);
}

double xor_round(const Layout& l, const CostParams& c, double n, int distance, double sending) {
  if (l.nodes == 1 || distance < l.ppn) return c.alpha_intra + n * c.beta_intra_at(n) * c.intra_flows(l.ppn);
  return c.alpha + off_node(l, c, n * c.beta_at(n) * c.inter_flows(l.ppn), l.ppn * n, n, sending);
}

double one_exchange_per_round(const Layout& l, const CostParams& c, double n) {
  double t = 0;
  // Distances 1 .. ppn - 1 differ; from ppn on, every partner is on another node.
  const int distinct = std::min(l.ranks - 1, l.nodes == 1 ? l.ranks - 1 : l.ppn - 1);
  for (int d = 1; d <= distinct; ++d) t += exchange_round(l, c, n, d);
  if (l.ranks - 1 > distinct) t += (l.ranks - 1 - distinct) * exchange_round(l, c, n, l.ppn);
  return t;
}

double xor_exchange_rounds(const Layout& l, const CostParams& c, double n) {
  if (l.ranks <= 1) return 0;
  if (l.nodes == 1) return (l.ranks - 1) * (c.alpha_intra + n * c.beta_intra_at(n) * c.intra_flows(l.ppn));
  const int local = std::min(l.ppn, l.ranks) - 1;
  return local * (c.alpha_intra + n * c.beta_intra_at(n) * c.intra_flows(l.ppn)) +
         (l.ranks - 1 - local) * (c.alpha + off_node(l, c, n * c.beta_at(n) * c.inter_flows(l.ppn), l.ppn * n, n));
}

double binomial_broadcast(const Layout& l, const CostParams& c, double n) {
  // Level dist: ranks below dist send to rank + dist. Below ppn that stays on node 0 (dist
  // flows in its memory); from ppn on every node that has the data sends from all its ppn
  // ranks at once over its link (dist / ppn nodes on the network at once).
  // A partial last level (2 dist > P) pays no latency of its own: its sender posted it
  // right after its previous level's send, which was eager.
  double t = 0;
  for (int dist = 1; dist < l.ranks; dist *= 2) {
    const bool full = 2LL * dist <= l.ranks;
    if (l.nodes == 1 || dist < l.ppn)
      t += (full ? c.alpha_intra : 0.0) + n * c.beta_intra_at(n) * c.intra_flows(std::min(dist, l.ppn));
    else
      t += (full ? c.alpha : 0.0) +
           off_node(l, c, n * c.beta_at(n) * c.inter_flows(l.ppn), l.ppn * n, n, static_cast<double>(dist) / l.ppn);
  }
  return t;
}

double all_at_once_bytes(const Layout& l, const CostParams& c, int messages, double total) {
  if (messages <= 0) return 0.0;
  const double posting = (messages - 1) * c.overhead;
  const double each = total / messages;  // (the per-byte cost of a message of the mean size)
  if (l.nodes == 1) return c.alpha_intra + posting + total * c.beta_intra_at(each) * c.intra_flows(l.ppn);
  // The part of a rank's bytes that stays on its node.
  const double on_share = l.ranks > 1 ? static_cast<double>(l.ppn - 1) / (l.ranks - 1) : 0.0;
  const double off_messages = messages * (1 - on_share);  // posted at once, to other nodes
  const double net = off_node(l, c, each * c.fanout_flows(off_messages) * c.inter_flows(l.ppn) * c.beta_at(each),
                              total * (1 - on_share) * l.ppn, each);
  const double mem = total * on_share * c.intra_flows(l.ppn) * c.beta_intra_at(each);
  return c.alpha + posting + std::max(net, mem);
}

double all_at_once(const Layout& l, const CostParams& c, double n) {
  return all_at_once_bytes(l, c, l.ranks - 1, n * (l.ranks - 1));
}

double node_barrier(const Layout& l, const CostParams& c) { return log2_ceil(l.ppn) * c.alpha_intra; }

double barrier(const Layout& l, const CostParams& c) {
  if (l.nodes == 1) return log2_ceil(l.ranks) * c.alpha_intra;
  return log2_ceil(l.ppn) * c.alpha_intra + (log2_ceil(l.ranks) - log2_ceil(l.ppn)) * c.alpha;
}

MpiLibrary mpi_library() {
  static const MpiLibrary lib = [] {
#ifdef LIBCOMM_SIMGRID
    // SMPI runs the decision rules of the selector scripts/simulate.sh --native-selector set
    // (smpi/coll-selector): Open MPI's or MPICH's over its copies of their algorithms, or its own.
    const std::string selector = simgrid::config::get_value<std::string>("smpi/coll-selector");
    if (selector == "ompi") return MpiLibrary::OpenMpi;
    if (selector == "mpich") return MpiLibrary::Mpich;
    return MpiLibrary::Smpi;
#else
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) return MpiLibrary::Other;
    const std::string v(version, static_cast<std::size_t>(len));
    if (v.find("Open MPI") != std::string::npos) return MpiLibrary::OpenMpi;
    if (v.find("MPICH") != std::string::npos) return MpiLibrary::Mpich;
    return MpiLibrary::Other;
#endif
  }();
  return lib;
}

double log_rounds_alltoall(const Layout& l, const CostParams& c, double n) {
  const int p = l.ranks;
  double t = 0, moved = 0;
  for (int bit = 1; bit < p; bit <<= 1) {
    double k = 0;  // the slots k < P with this bit set
    for (int slot = 0; slot < p; ++slot) k += (slot & bit) != 0;
    t += exchange_round(l, c, k * n, bit);
    moved += k;
  }
  // Rotation in, pack and unpack of every round, and the un-rotation by swaps (3 copies per
  // pair of slots).
  return t + copy(c, (p + 2 * moved + 1.5 * p) * n);
}

// dimension i reaches the rank 2^i away (fewer messages when a block has fewer elements
// than d: an empty subblock is not sent).
double dcycles_step(const Layout& l, const CostParams& c, double n, double messages, int d, double sending) {
  const double posting = (std::max(1.0, messages) - 1) * c.overhead;
  const double each = n / std::max(1.0, messages);
  if (l.nodes == 1) return c.alpha_intra + posting + n * c.beta_intra_at(each) * c.intra_flows(l.ppn);
  const int local_dims = std::min(d, log2_ceil(l.ppn));  // dimensions inside a node
  const double off = static_cast<double>(d - local_dims) / d;
  const double net =
      c.alpha + posting + off_node(l, c, n * off * c.inter_flows(l.ppn) * c.beta_at(each), n * off * l.ppn, each, sending);
  const double mem = off < 1 ? c.alpha_intra + posting + n * (1 - off) * c.intra_flows(l.ppn) * c.beta_intra_at(each) : 0.0;
  return std::max(net, mem);
}

// (Receiving costs no posting overhead: each sender posts one message; the P - ppn from
// other nodes arrive at once, as share_fanin says, and at least at the pace of a full link.)
double linear_gather(const Layout& l, const CostParams& c, double n) {
  const int p = l.ranks;
  if (p <= 1) return 0;
  if (l.nodes == 1) return c.alpha_intra + (p - 1) * n * c.beta_intra_at(n);
  const double in = std::max(n * c.beta_at(n) * c.fanin_flows(p - l.ppn), (p - l.ppn) * n * c.full_link_beta_at(n));
  return c.alpha + std::max(in, (l.ppn - 1) * n * c.beta_intra_at(n));
}

}  // namespace libcomm::detail::cost
