// The all-to-all broadcast as an operation of the one driver (core/driver.hpp): its
// registry (names, where each algorithm applies and what runs instead, cost formulas), its
// argument check and its plans; the public entry points are calls of the driver. The
// algorithms live one family per file next to this one, their formulas in costs.cpp.
#include <algorithm>
#include <limits>

#include "../core/check.hpp"
#include "../core/mpi_bytes.hpp"
#include "../core/node_channel.hpp"
#include "allgather_internal.hpp"
#include "libcomm/plan.hpp"

namespace libcomm {

namespace detail {

namespace {

using Shape = AllgatherOp::Shape;

std::string needs_one_node(const Shape& s) {
  if (s.nodes->num_nodes() == 1) return "";
  return "needs every rank on one node, the node map has " + std::to_string(s.nodes->num_nodes());
}

constexpr AlgorithmEntry<AllgatherOp> kAlgorithms[] = {
    {.algo = AllgatherAlgo::Auto, .name = "auto",
     .summary = "the Auto policy (LIBCOMM_AUTO: online, model or table; README 'Tuning: what auto runs')"},
    {.algo = AllgatherAlgo::Native, .name = "native", .summary = "the MPI library's MPI_Allgather(v) (reference)",
     .cost = allgather_cost::native},
    {.algo = AllgatherAlgo::Ring, .name = "ring",
     .summary = "single Hamiltonian cycle, P - 1 shifts, --order binary|gray (paper 004, s. 4.1)",
     .unfit = gray_needs_cube<Shape>, .applies = "any P; with order gray, P a power of two", .cost = allgather_cost::ring},
    {.algo = AllgatherAlgo::DCycles, .name = "d_cycles",
     .summary = "d Hamiltonian cycles of a binary d-cube, d channels per step, index computation; P = 2^d (s. 4.2)",
     .unfit = needs_cube<Shape>, .applies = "P a power of two", .fallback = AllgatherAlgo::Ring,
     .fallback_why = "d Hamiltonian cycles of a binary d-cube (paper 004, s. 4.2); the single cycle exists for any P",
     .cost = allgather_cost::d_cycles},
    {.algo = AllgatherAlgo::DCyclesIndexMotion, .name = "d_cycles_im",
     .summary = "d_cycles with the indices moved along with the data, then reordering (s. 6.1)", .unfit = needs_cube<Shape>,
     .applies = "P a power of two", .fallback = AllgatherAlgo::Ring,
     .fallback_why = "d Hamiltonian cycles of a binary d-cube (paper 004, s. 4.2); the single cycle exists for any P",
     .cost = allgather_cost::d_cycles_im},
    {.algo = AllgatherAlgo::SendSpread, .name = "send_spread",
     .summary = "gather to rank 0, then broadcast (s. 5, alternative 3)", .cost = allgather_cost::send_spread},
    {.algo = AllgatherAlgo::Butterfly, .name = "butterfly",
     .summary = "recursive doubling / rotated binomial trees, log P steps, any P (s. 5, alternative 4)",
     .cost = allgather_cost::butterfly},
    {.algo = AllgatherAlgo::SharedWindow, .name = "shared_window",
     .summary = "one node: every block through the node's shared-memory window (copy in, node barrier, copy out)",
     .unfit = needs_one_node, .applies = "every rank on one node (shared memory)", .fallback = AllgatherAlgo::Ring,
     .fallback_why = "the window is one node's memory; across nodes the blocks must travel as messages",
     .cost = allgather_cost::shared_window, .node_memory = true, .node_map = true},
};

}  // namespace

std::span<const AlgorithmEntry<AllgatherOp>> AllgatherOp::algorithms() { return kAlgorithms; }

std::vector<std::size_t> AllgatherOp::Shape::all_counts() const {
  if (!counts.empty()) return {counts.begin(), counts.end()};
  return std::vector<std::size_t>(static_cast<std::size_t>(p), largest);
}

AllgatherOp::Shape AllgatherOp::shape(const Args& a, const Comm& comm, const Options& o) {
  Shape s{comm.size(), a.counts, a.block, a.block * static_cast<std::size_t>(comm.size()), true, &comm.nodes(), &o, {}};
  if (!a.counts.empty() && a.counts.size() != static_cast<std::size_t>(comm.size())) {
    s.problem = "counts has " + std::to_string(a.counts.size()) + " entries, P = " + std::to_string(comm.size());
    s.counts = {};
    s.largest = s.total = 0;
  } else if (!a.counts.empty()) {
    const SizeSummary sum = summarize(a.counts);
    s.largest = sum.largest, s.total = sum.total, s.equal = sum.equal;
  }
  return s;
}

void AllgatherOp::validate(const Shape& s, const Comm& comm) {
  if (!s.problem.empty()) throw Error("allgather: rank " + std::to_string(comm.rank()) + ": " + s.problem);
}

std::uint64_t AllgatherOp::key_options(const Shape& s) {
  return static_cast<std::uint64_t>(s.opts->order) * 2 + s.opts->allow_fallback;
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

// Plans of equal blocks are kept by block size; unequal counts by their hash, the plan
// kept only when its counts are these.
PlanKey AllgatherOp::plan_key(Algo ran, const Shape& s) {
  const std::uint64_t options = static_cast<std::uint64_t>(s.opts->element_bytes) * 16 +
                                static_cast<std::uint64_t>(s.opts->order) * 4 +
                                static_cast<std::uint64_t>(s.opts->reorder) * 2 + (s.equal ? 1 : 0);
  return PlanKey{"allgather", static_cast<int>(ran), s.equal ? s.largest : hash_sizes(s.counts), options};
}

std::shared_ptr<PlanState> AllgatherOp::state(const Choice<Algo>& c, const Args&, const Shape& s, const Comm& comm,
                                              Form form) {
  const bool own = form != Form::Blocking;
  const Blocks blocks(s.all_counts());
  if (c.algo == Algo::SharedWindow)
    return node_program_plan(comm, shared_window_allgather_program(blocks, comm.rank()), c.reason(), own);
  return choice_state(
      comm, c.reason(), c.algo == Algo::Native, [&] { return native_iallgatherv(blocks, comm.mpi()); },
      [&] { return build_allgather_program(c.algo, blocks, comm.rank(), *s.opts); }, own);
}

void AllgatherOp::native(const Args& a, const Shape& s, const Comm& comm) {
  const auto* sp = static_cast<const std::byte*>(a.send);
  auto* rp = static_cast<std::byte*>(a.recv);
  if (s.equal) native_allgather(sp, rp, s.largest, comm.mpi());
  else native_allgatherv(sp, rp, Blocks(s.counts), comm.mpi());
}

Blocks::Blocks(std::span<const std::size_t> counts) : count(counts.begin(), counts.end()), displ(counts.size()) {
  for (std::size_t r = 0; r < count.size(); ++r) {
    displ[r] = total;
    total += count[r];
    max = std::max(max, count[r]);
    if (count[r] != count[0]) equal = false;
  }
}

int ring_position(NodeOrder order, int p, int rank) {
  (void)p;
  return order == NodeOrder::Gray ? static_cast<int>(cube::gray_inverse(static_cast<std::uint32_t>(rank))) : rank;
}

int ring_node(NodeOrder order, int p, int q) {
  q = ((q % p) + p) % p;
  return order == NodeOrder::Gray ? static_cast<int>(cube::gray(static_cast<std::uint32_t>(q))) : q;
}

StepProgram build_allgather_program(AllgatherAlgo a, const Blocks& b, int rank, const AllgatherOptions& opts) {
  switch (a) {
    case AllgatherAlgo::Ring: return ring_allgather_program(b, rank, opts.order, opts.reorder);
    case AllgatherAlgo::DCycles: return dcycles_allgather_program(b, rank, opts.reorder, false, opts.element_bytes);
    case AllgatherAlgo::DCyclesIndexMotion:
      return dcycles_allgather_program(b, rank, Reorder::Staged, true, opts.element_bytes);
    case AllgatherAlgo::SendSpread: return send_spread_allgather_program(b, rank);
    case AllgatherAlgo::Butterfly: return butterfly_allgather_program(b, rank);
    case AllgatherAlgo::SharedWindow: return shared_window_allgather_program(b, rank);
    default: throw Error("allgather: '" + std::string(allgather_algo_name(a)) + "' has no step program");
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
  const detail::AllgatherOp::Shape s{p, {}, 0, 0, true, &flat, &opts, {}};
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
  const int p = static_cast<int>(counts.size());
  const NodeMap flat = NodeMap::one_rank_per_node(p);
  const detail::SizeSummary sum = detail::summarize(counts);
  const detail::AllgatherOp::Shape s{p, counts, sum.largest, sum.total, sum.equal, &flat, &opts, {}};
  const AllgatherChoice c = algo == AllgatherAlgo::Auto ? Driver::program_choice(s)
                                                        : Driver::resolve_requested(algo, s, opts.allow_fallback);
  return detail::build_allgather_program(c.algo, detail::Blocks(counts), rank, opts);
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
