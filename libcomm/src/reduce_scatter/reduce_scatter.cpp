// The all-to-all reduction as an operation of the one driver (core/driver.hpp): its
// registry (names, where each algorithm applies and what runs instead, cost formulas), its
// argument check and its plans; the public entry points are calls of the driver. The
// algorithms live one family per file next to this one, their formulas in costs.cpp; the
// local combiner is the executor's (core/reduction.cpp).
#include <algorithm>
#include <limits>

#include "../core/check.hpp"
#include "../core/node_channel.hpp"
#include "reduce_scatter_internal.hpp"

namespace libcomm {

namespace detail {

namespace {

using Shape = ReduceScatterOp::Shape;

// The window holds every rank's whole vector: P x the vector, twice (alternate runs).
constexpr std::size_t kMaxWindowBytes = std::size_t{1} << 30;
std::string needs_one_node_window(const Shape& s) {
  if (s.nodes->num_nodes() != 1)
    return "needs every rank on one node, the node map has " + std::to_string(s.nodes->num_nodes());
  if (s.total > kMaxWindowBytes / 2 / static_cast<std::size_t>(s.p))
    return "needs a window of P copies of the vector, " + std::to_string(2 * s.total * s.p) + " bytes, over 1 GiB";
  return "";
}

constexpr AlgorithmEntry<ReduceScatterOp> kAlgorithms[] = {
    {.algo = ReduceScatterAlgo::Auto, .name = "auto",
     .summary = "the Auto policy (LIBCOMM_AUTO: online, model or table; README 'Tuning: what auto runs')"},
    {.algo = ReduceScatterAlgo::Native, .name = "native",
     .summary = "the MPI library's MPI_Reduce_scatter (reference)", .cost = reduce_scatter_cost::native},
    {.algo = ReduceScatterAlgo::Ring, .name = "ring",
     .summary = "single Hamiltonian cycle, P - 1 shift-and-combine steps, --order binary|gray (paper 004, s. 4.1, "
                "Fig. 6)",
     .unfit = gray_needs_cube<Shape>, .applies = "any P; with order gray, P a power of two", .cost = reduce_scatter_cost::ring},
    {.algo = ReduceScatterAlgo::DCycles, .name = "d_cycles",
     .summary = "d Hamiltonian cycles, reversed broadcast motion, xor translation per block; P = 2^d (s. 4.2.2, "
                "Figs. 12-19)",
     .unfit = needs_cube<Shape>, .applies = "P a power of two", .fallback = ReduceScatterAlgo::Ring,
     .fallback_why = "the d cycles of the broadcast, reversed (paper 004, s. 4.2.2); the single cycle exists for any P",
     .cost = reduce_scatter_cost::d_cycles},
    {.algo = ReduceScatterAlgo::ReduceSpread, .name = "reduce_spread",
     .summary = "butterfly reduce-and-spread of the whole vector, then subselection (s. 5, Fig. 21), any P",
     .cost = reduce_scatter_cost::reduce_spread},
    {.algo = ReduceScatterAlgo::SharedWindow, .name = "shared_window",
     .summary = "one node: every vector into the node's shared-memory window, node barrier, each rank combines its "
                "block",
     .unfit = needs_one_node_window, .applies = "every rank on one node (shared memory), P copies of the vector within 1 GiB",
     .fallback = ReduceScatterAlgo::Ring,
     .fallback_why = "the window is one node's memory and holds P copies of the vector; otherwise the partial sums "
                     "travel as messages",
     .cost = reduce_scatter_cost::shared_window, .node_memory = true, .node_map = true},
};

bool overflows(std::span<const std::size_t> counts) {
  const auto limit = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
  std::size_t total = 0;
  for (auto c : counts) {
    if (c > limit - total) return true;
    total += c;
  }
  return false;
}

}  // namespace

std::span<const AlgorithmEntry<ReduceScatterOp>> ReduceScatterOp::algorithms() { return kAlgorithms; }

ReduceScatterOp::Shape ReduceScatterOp::shape(const Args& a, const Comm& comm, const Options& o) {
  Shape s{comm.size(), a.counts, 0, 0, true, a.type, a.op, &comm.nodes(), &o, {}};
  const std::size_t es = elem_size(a.type);
  if (a.counts.size() != static_cast<std::size_t>(comm.size())) {
    s.problem = "counts has " + std::to_string(a.counts.size()) + " entries, P = " + std::to_string(comm.size());
    s.counts = {};
    return s;
  }
  if (overflows(a.counts)) {
    s.problem = "counts add up to more bytes than the address space holds";
    return s;
  }
  // Counts are bytes (the unit of every operation, docs/architecture.md); a reduction needs
  // whole elements of its type.
  for (std::size_t r = 0; r < a.counts.size() && s.problem.empty(); ++r)
    if (a.counts[r] % es != 0)
      s.problem = "counts[" + std::to_string(r) + "] = " + std::to_string(a.counts[r]) +
                  " bytes is not a whole number of " + std::string(elem_type_name(a.type)) + " elements (" +
                  std::to_string(es) + " bytes each)";
  if (s.problem.empty() && a.type == ElemType::ComplexDouble && a.op != ReduceOp::Sum)
    s.problem = std::string(reduce_op_name(a.op)) + " is not defined for complex numbers (no order); use sum";
  const SizeSummary sum = summarize(a.counts);
  s.largest = sum.largest, s.total = sum.total, s.equal = sum.equal;
  return s;
}

void ReduceScatterOp::validate(const Shape& s, const Comm& comm) {
  if (!s.problem.empty()) throw Error("reduce_scatter: rank " + std::to_string(comm.rank()) + ": " + s.problem);
}

std::uint64_t ReduceScatterOp::key_options(const Shape& s) {
  return ((static_cast<std::uint64_t>(s.type) * 8 + static_cast<std::uint64_t>(s.op)) * 4 +
          static_cast<std::uint64_t>(s.opts->order) * 2) + s.opts->allow_fallback;
}

ArgumentCheck ReduceScatterOp::argument_check(const Args& a, const Shape& s, const Comm& comm, Algo algo,
                                              const Options& o, bool have_buffers) {
  ArgumentCheck c;
  const auto me = static_cast<std::size_t>(comm.rank());
  if (!s.problem.empty()) {
    c.local = s.problem;
  } else if (have_buffers && s.total > 0 && a.send == nullptr) {
    c.local = "send buffer is null";
  } else if (have_buffers && a.counts[me] > 0 && a.recv == nullptr) {
    c.local = "recv buffer is null";
  } else if (have_buffers && a.counts[me] > 0) {
    const auto* sp = static_cast<const std::byte*>(a.send);
    const auto* rp = static_cast<const std::byte*>(a.recv);
    if (sp < rp + a.counts[me] && rp < sp + s.total) c.local = "send and recv buffers overlap";
  }
  c.sizes = hash_sizes(a.counts);
  c.mode = static_cast<std::uint64_t>(algo) * 1024 + static_cast<std::uint64_t>(a.type) * 64 +
           static_cast<std::uint64_t>(a.op) * 8 + static_cast<std::uint64_t>(o.order) * 2 + (o.allow_fallback ? 1 : 0);
  return c;
}

std::string ReduceScatterOp::modes_differ(Algo algo, const Options&) {
  return "ranks asked for different algorithms, element types, operations or options (this rank: " +
         std::string(reduce_scatter_algo_name(algo)) + ")";
}

// Check mode (libcomm/check.hpp): the same counts, element type and operation everywhere.
void ReduceScatterOp::check_agreement(const Args& a, const Comm& comm, const Options&) {
  const std::vector<std::uint64_t> vec(a.counts.begin(), a.counts.end());
  const SameField fields[] = {
      {"element type", static_cast<std::uint64_t>(a.type),
       [](std::uint64_t v) { return std::string(elem_type_name(static_cast<ElemType>(v))); }},
      {"operation", static_cast<std::uint64_t>(a.op),
       [](std::uint64_t v) { return std::string(reduce_op_name(static_cast<ReduceOp>(v))); }}};
  check_same_on_all_ranks(comm, "reduce_scatter", fields, "counts", vec);
}

// Equal counts are kept by their size, unequal ones by their hash (the plan kept only when
// its counts are these).
PlanKey ReduceScatterOp::plan_key(Algo ran, const Shape& s) {
  const std::uint64_t options = (static_cast<std::uint64_t>(s.type) * 8 + static_cast<std::uint64_t>(s.op)) * 4 +
                                static_cast<std::uint64_t>(s.opts->order) * 2 + (s.equal ? 1 : 0);
  return PlanKey{"reduce_scatter", static_cast<int>(ran),
                 s.counts.empty() ? 0 : s.equal ? s.counts[0] : hash_sizes(s.counts), options};
}

std::shared_ptr<PlanState> ReduceScatterOp::state(const Choice<Algo>& c, const Args&, const Shape& s,
                                                  const Comm& comm, Form form) {
  const bool own = form != Form::Blocking;
  const ReduceBlocks blocks(s.counts, s.type, s.op);
  if (c.algo == Algo::SharedWindow)
    return node_program_plan(comm, shared_window_reduce_scatter_program(blocks, comm.rank()), c.reason(), own);
  return choice_state(
      comm, c.reason(), c.algo == Algo::Native, [&] { return native_ireduce_scatter(blocks, comm.mpi()); },
      [&] { return build_reduce_scatter_program(c.algo, blocks, comm.rank(), *s.opts); }, own);
}

void ReduceScatterOp::native(const Args& a, const Shape& s, const Comm& comm) {
  native_reduce_scatter(static_cast<const std::byte*>(a.send), static_cast<std::byte*>(a.recv),
                        ReduceBlocks(s.counts, s.type, s.op), comm.mpi());
}

ReduceBlocks::ReduceBlocks(std::span<const std::size_t> count_bytes, ElemType t, ReduceOp o)
    : count(count_bytes.begin(), count_bytes.end()), displ(count_bytes.size()), type(t), op(o), es(elem_size(t)) {
  for (std::size_t r = 0; r < count.size(); ++r) {
    count[r] /= es;  // whole elements: the shape refused any other count
    displ[r] = total;
    total += count[r];
    max = std::max(max, count[r]);
  }
}

StepProgram build_reduce_scatter_program(ReduceScatterAlgo a, const ReduceBlocks& b, int rank,
                                         const ReduceScatterOptions& opts) {
  switch (a) {
    case ReduceScatterAlgo::Ring: return ring_reduce_scatter_program(b, rank, opts.order);
    case ReduceScatterAlgo::DCycles: return dcycles_reduce_scatter_program(b, rank);
    case ReduceScatterAlgo::ReduceSpread: return reduce_spread_reduce_scatter_program(b, rank);
    case ReduceScatterAlgo::SharedWindow: return shared_window_reduce_scatter_program(b, rank);
    default: throw Error("reduce_scatter: '" + std::string(reduce_scatter_algo_name(a)) + "' has no step program");
  }
}

}  // namespace detail

using Driver = detail::Driver<detail::ReduceScatterOp>;

const std::vector<ReduceScatterAlgoInfo>& reduce_scatter_algorithms() {
  return detail::algorithm_infos<detail::ReduceScatterOp>();
}
std::string_view reduce_scatter_algo_name(ReduceScatterAlgo a) { return detail::name_of<detail::ReduceScatterOp>(a); }
ReduceScatterAlgo reduce_scatter_algo_from_name(std::string_view name) {
  return detail::algorithm_named<detail::ReduceScatterOp>(name);
}
ReduceScatterAlgo reduce_scatter_algo_from_env(ReduceScatterAlgo fallback) {
  return detail::algorithm_from_env<detail::ReduceScatterOp>(fallback);
}

ReduceScatterChoice choose_reduce_scatter(ReduceScatterAlgo requested, int p, const ReduceScatterOptions& opts) {
  require(p > 0, "choose_reduce_scatter: P must be positive, got " + std::to_string(p));
  const NodeMap flat = NodeMap::one_rank_per_node(p);
  const detail::ReduceScatterOp::Shape s{p, {}, 0, 0, true, ElemType::Double, ReduceOp::Sum, &flat, &opts, {}};
  if (requested != ReduceScatterAlgo::Auto) return Driver::resolve_requested(requested, s, opts.allow_fallback);
  const detail::AutoAnswer m = detail::model_answer(Driver::question(s, nullptr));
  return ReduceScatterChoice(static_cast<ReduceScatterAlgo>(m.algo), m.reason);
}

ReduceScatterChoice choose_reduce_scatter(ReduceScatterAlgo requested, std::size_t block_bytes, const Comm& comm,
                                          const ReduceScatterOptions& opts) {
  const std::vector<std::size_t> counts(static_cast<std::size_t>(comm.size()), block_bytes);
  const detail::ReduceScatterOp::Args a{nullptr, nullptr, counts, ElemType::Int, ReduceOp::Sum};
  detail::ReduceScatterOp::Shape s = detail::ReduceScatterOp::shape(a, comm, opts);
  s.problem.clear();  // (a size question: any block size may be asked about)
  return Driver::choose(requested, s, comm);
}

StepProgram reduce_scatter_program(ReduceScatterAlgo algo, std::span<const std::size_t> counts, ElemType type,
                                   ReduceOp op, int rank, const ReduceScatterOptions& opts) {
  require(!counts.empty() && rank >= 0 && rank < static_cast<int>(counts.size()),
          "reduce_scatter_program: rank " + std::to_string(rank) + " of P = " + std::to_string(counts.size()) +
              " does not exist");
  const std::size_t es = elem_size(type);
  for (std::size_t r = 0; r < counts.size(); ++r)
    require(counts[r] % es == 0, [&] {
      return "reduce_scatter: rank " + std::to_string(rank) + ": counts[" + std::to_string(r) + "] = " +
             std::to_string(counts[r]) + " bytes is not a whole number of " + std::string(elem_type_name(type)) +
             " elements (" + std::to_string(es) + " bytes each)";
    });
  const int p = static_cast<int>(counts.size());
  const NodeMap flat = NodeMap::one_rank_per_node(p);
  const detail::SizeSummary sum = detail::summarize(counts);
  const detail::ReduceScatterOp::Shape s{p, counts, sum.largest, sum.total, sum.equal, type, op, &flat, &opts, {}};
  const ReduceScatterChoice c = algo == ReduceScatterAlgo::Auto
                                    ? Driver::program_choice(s)
                                    : Driver::resolve_requested(algo, s, opts.allow_fallback);
  return detail::build_reduce_scatter_program(c.algo, detail::ReduceBlocks(counts, type, op), rank, opts);
}

ReduceScatterChoice reduce_scatter(const void* send, void* recv, std::span<const std::size_t> counts, ElemType type,
                                   ReduceOp op, const Comm& comm, ReduceScatterAlgo algo,
                                   const ReduceScatterOptions& opts) {
  return Driver::blocking({send, recv, counts, type, op}, comm, algo, opts);
}

Plan plan_reduce_scatter(const Comm& comm, std::span<const std::size_t> counts, ElemType type, ReduceOp op,
                         ReduceScatterAlgo algo, const ReduceScatterOptions& opts) {
  return Driver::persistent({nullptr, nullptr, counts, type, op}, comm, algo, opts);
}

Request ireduce_scatter(const void* send, void* recv, std::span<const std::size_t> counts, ElemType type,
                        ReduceOp op, const Comm& comm, ReduceScatterAlgo algo, const ReduceScatterOptions& opts) {
  return Driver::nonblocking({send, recv, counts, type, op}, comm, algo, opts);
}

}  // namespace libcomm
