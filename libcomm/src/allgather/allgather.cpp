// The all-to-all broadcast: its registry (the descriptors of the algorithm files, in enum
// order), its shape, options and argument check; the public entry points are calls of the
// driver (driver/driver.hpp).
#include <algorithm>
#include <limits>

#include "../core/check.hpp"
#include "allgather_internal.hpp"
#include "libcomm/plan.hpp"

namespace libcomm {

namespace detail {

extern const AllgatherAlgorithm auto_allgather, native_allgather, ring_allgather, d_cycles_allgather,
    d_cycles_im_allgather, send_spread_allgather, butterfly_allgather, shared_window_allgather;

const AllgatherAlgorithm auto_allgather{
    .algo = AllgatherAlgo::Auto, .name = "auto",
    .summary = "the Auto policy (LIBCOMM_AUTO: online, model or table; README 'Tuning: what auto runs')"};

std::span<const AllgatherAlgorithm> AllgatherOp::algorithms() {
  static const auto all = registry<AllgatherOp>({&auto_allgather, &native_allgather, &ring_allgather,
                                                 &d_cycles_allgather, &d_cycles_im_allgather, &send_spread_allgather,
                                                 &butterfly_allgather, &shared_window_allgather});
  return all;
}

AllgatherOp::Shape AllgatherOp::shape(std::span<const std::size_t> counts, const NodeMap& nodes, const Options& o) {
  Shape s;
  s.p = static_cast<int>(counts.size());
  s.nodes = &nodes;
  s.opts = &o;
  s.set_blocks(counts);
  return s;
}

AllgatherOp::Shape AllgatherOp::shape(const Args& a, const Comm& comm, const Options& o) {
  Shape s;
  s.p = comm.size();
  s.nodes = &comm.nodes();
  s.opts = &o;
  if (a.counts.empty()) {
    s.largest = s.key_bytes = s.decision_bytes = a.block;
    s.total = a.block * static_cast<std::size_t>(comm.size());
  } else if (a.counts.size() != static_cast<std::size_t>(comm.size())) {
    s.problem = "counts has " + std::to_string(a.counts.size()) + " entries, P = " + std::to_string(comm.size());
  } else {
    s.set_blocks(a.counts);
  }
  return s;
}

std::uint64_t AllgatherOp::options(const Shape& s) {
  return ((static_cast<std::uint64_t>(s.opts->element_bytes) * 4 + static_cast<std::uint64_t>(s.opts->order)) * 4 +
          static_cast<std::uint64_t>(s.opts->reorder)) * 2 + s.opts->allow_fallback;
}

namespace {
bool overflows(const AllgatherOp::Args& a, int p) {
  const auto limit = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
  if (a.counts.empty()) return a.block > limit / static_cast<std::size_t>(p);
  std::size_t total = 0;
  for (auto c : a.counts) {
    if (c > limit - total) return true;
    total += c;
  }
  return false;
}
}  // namespace

ArgumentCheck AllgatherOp::argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo,
                                          const Options& o, bool have_buffers) {
  ArgumentCheck c;
  const auto me = static_cast<std::size_t>(comm.rank());
  const std::size_t mine = a.counts.empty() || !s.problem.empty() ? a.block : a.counts[me];
  if (!s.problem.empty()) {
    c.local = s.problem;
  } else if (a.send_bytes != mine) {
    c.local = "send_bytes " + std::to_string(a.send_bytes) + " differs from counts[" + std::to_string(me) +
              "] = " + std::to_string(mine);
  } else if (overflows(a, s.p)) {
    c.local = "counts add up to more than the address space";
  } else if (o.element_bytes == 0) {
    c.local = "element_bytes must be positive";
  } else if (have_buffers && ((a.send_bytes > 0 && a.send == nullptr) || (s.total > 0 && a.recv == nullptr))) {
    c.local = std::string(a.send_bytes > 0 && a.send == nullptr ? "send" : "recv") + " buffer is null";
  } else if (have_buffers && a.send_bytes > 0) {
    const auto* sp = static_cast<const std::byte*>(a.send);
    const auto* rp = static_cast<const std::byte*>(a.recv);
    if (sp < rp + s.total && rp < sp + a.send_bytes) c.local = "send and recv buffers overlap";
  }
  // The subblock partitioning (Fig. 20) depends on element_bytes: it must agree too.
  const std::uint64_t sizes = a.counts.empty() || !s.problem.empty()
                                   ? hash_repeated(a.block, static_cast<std::size_t>(s.p))
                                   : hash_sizes(a.counts);
  c.sizes = sizes ^ (static_cast<std::uint64_t>(o.element_bytes) * 0x100000001b3ULL);
  c.mode = static_cast<std::uint64_t>(algo) * 64 + static_cast<std::uint64_t>(o.order) * 8 +
           static_cast<std::uint64_t>(o.reorder) * 2 + (o.allow_fallback ? 1 : 0);
  return c;
}

std::string AllgatherOp::modes_differ(Algo algo, const Options& o) {
  return "ranks asked for different algorithms or options (this rank: " + std::string(allgather_algo_name(algo)) +
         ", order " + std::string(node_order_name(o.order)) + ")";
}

// Check mode (libcomm/check.hpp): the same counts and element size on every rank, and
// what rank i sends (send_bytes) is what every rank expects from it (counts[i]).
void AllgatherOp::check_agreement(const Args& a, const Comm& comm, const Options& o) {
  const std::vector<std::size_t> counts =
      a.counts.empty() ? std::vector<std::size_t>(static_cast<std::size_t>(comm.size()), a.block)
                       : std::vector<std::size_t>(a.counts.begin(), a.counts.end());
  const std::vector<std::uint64_t> vec(counts.begin(), counts.end());
  const SameField fields[] = {{"element_bytes", o.element_bytes}};
  check_same_on_all_ranks(comm, "allgather", fields, "counts", vec);
  const std::vector<std::int64_t> sent(static_cast<std::size_t>(comm.size()),
                                       static_cast<std::int64_t>(a.send_bytes));
  const std::vector<std::int64_t> expected(counts.begin(), counts.end());
  check_counts_match(comm, "allgather", "bytes", sent, {"send_bytes", false}, expected, {"counts"});
}

Blocks::Blocks(std::span<const std::size_t> counts) : count(counts.begin(), counts.end()), displ(counts.size()) {
  for (std::size_t r = 0; r < count.size(); ++r) {
    displ[r] = total;
    total += count[r];
    max = std::max(max, count[r]);
    if (count[r] != count[0]) equal = false;
  }
}

}  // namespace detail

using Driver = detail::Driver<detail::AllgatherOp>;

const std::vector<AllgatherAlgoInfo>& allgather_algorithms() { return detail::algorithm_infos<detail::AllgatherOp>(); }
std::string_view allgather_algo_name(AllgatherAlgo a) { return detail::name_of<detail::AllgatherOp>(a); }
AllgatherAlgo allgather_algo_from_name(std::string_view name) {
  return detail::algorithm_named<detail::AllgatherOp>(name);
}
AllgatherAlgo allgather_algo_from_env(AllgatherAlgo fallback) {
  return detail::algorithm_from_env<detail::AllgatherOp>(fallback);
}

std::string_view node_order_name(NodeOrder o) { return o == NodeOrder::Gray ? "gray" : "binary"; }

NodeOrder node_order_from_name(std::string_view name) {
  if (name == "binary") return NodeOrder::Binary;
  if (name == "gray") return NodeOrder::Gray;
  throw Error("unknown node order '" + std::string(name) + "' (valid: binary, gray)");
}

AllgatherChoice choose_allgather(AllgatherAlgo requested, int p, const AllgatherOptions& opts) {
  require(p > 0, "choose_allgather: P must be positive, got " + std::to_string(p));
  const NodeMap flat = NodeMap::one_rank_per_node(p);
  const std::vector<std::size_t> none(static_cast<std::size_t>(p), 0);
  const detail::AllgatherOp::Shape s = detail::AllgatherOp::shape(none, flat, opts);
  if (requested != AllgatherAlgo::Auto) return Driver::resolve_requested(requested, s, opts.allow_fallback);
  const detail::AutoAnswer m = detail::model_answer(Driver::question(s, nullptr));
  return AllgatherChoice(static_cast<AllgatherAlgo>(m.algo), m.reason);
}

AllgatherChoice choose_allgather(AllgatherAlgo requested, std::size_t block_bytes, const Comm& comm,
                                 const AllgatherOptions& opts) {
  const detail::AllgatherOp::Args a{nullptr, block_bytes, nullptr, {}, block_bytes};
  return Driver::choose(requested, detail::AllgatherOp::shape(a, comm, opts), comm);
}

StepProgram allgather_program(AllgatherAlgo algo, std::span<const std::size_t> counts, int rank,
                              const AllgatherOptions& opts) {
  require(!counts.empty() && rank >= 0 && rank < static_cast<int>(counts.size()),
          "allgather_program: rank " + std::to_string(rank) + " of P = " + std::to_string(counts.size()) +
              " does not exist");
  const NodeMap flat = NodeMap::one_rank_per_node(static_cast<int>(counts.size()));
  const detail::AllgatherOp::Shape s = detail::AllgatherOp::shape(counts, flat, opts);
  const AllgatherChoice c = algo == AllgatherAlgo::Auto ? Driver::program_choice(s)
                                                        : Driver::resolve_requested(algo, s, opts.allow_fallback);
  const auto& e = detail::entry_of<detail::AllgatherOp>(c.algo);
  require(e.program != nullptr, "allgather: '" + std::string(e.name) + "' has no step program");
  return e.program(s, rank);
}

AllgatherChoice allgatherv(const void* send, std::size_t send_bytes, void* recv, std::span<const std::size_t> counts,
                           const Comm& comm, AllgatherAlgo algo, const AllgatherOptions& opts) {
  require(!counts.empty(), [&] {  // (an empty span is not the regular form here)
    return "allgather: rank " + std::to_string(comm.rank()) + ": counts has 0 entries, P = " +
           std::to_string(comm.size());
  });
  return Driver::blocking({send, send_bytes, recv, counts, 0}, comm, algo, opts);
}

AllgatherChoice allgather(const void* send, void* recv, std::size_t block_bytes, const Comm& comm,
                          AllgatherAlgo algo, const AllgatherOptions& opts) {
  return Driver::blocking({send, block_bytes, recv, {}, block_bytes}, comm, algo, opts);
}

Plan plan_allgatherv(const Comm& comm, std::span<const std::size_t> counts, AllgatherAlgo algo,
                     const AllgatherOptions& opts) {
  const std::size_t mine = counts.size() == static_cast<std::size_t>(comm.size())
                               ? counts[static_cast<std::size_t>(comm.rank())] : 0;
  if (counts.empty()) counts = {&mine, 0};
  return Driver::persistent({nullptr, mine, nullptr, counts, 0}, comm, algo, opts);
}

Plan plan_allgather(const Comm& comm, std::size_t block_bytes, AllgatherAlgo algo, const AllgatherOptions& opts) {
  return Driver::persistent({nullptr, block_bytes, nullptr, {}, block_bytes}, comm, algo, opts);
}

Request iallgatherv(const void* send, std::size_t send_bytes, void* recv, std::span<const std::size_t> counts,
                    const Comm& comm, AllgatherAlgo algo, const AllgatherOptions& opts) {
  require(counts.size() == static_cast<std::size_t>(comm.size()) &&
              send_bytes == counts[static_cast<std::size_t>(comm.rank())],
          "iallgatherv: rank " + std::to_string(comm.rank()) + ": send_bytes " + std::to_string(send_bytes) +
              " must equal counts[rank] (counts has " + std::to_string(counts.size()) + " entries, P = " +
              std::to_string(comm.size()) + ")");
  return Driver::nonblocking({send, send_bytes, recv, counts, 0}, comm, algo, opts);
}

Request iallgather(const void* send, void* recv, std::size_t block_bytes, const Comm& comm, AllgatherAlgo algo,
                   const AllgatherOptions& opts) {
  return Driver::nonblocking({send, block_bytes, recv, {}, block_bytes}, comm, algo, opts);
}

}  // namespace libcomm
