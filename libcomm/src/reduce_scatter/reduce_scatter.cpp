// The all-to-all reduction: its registry (the descriptors of the algorithm files, in enum
// order), its shape, options and argument check; the public entry points are calls of the
// driver (driver/driver.hpp).
#include <algorithm>
#include <limits>

#include "../runtime/check.hpp"
#include "reduce_scatter_internal.hpp"

namespace libcomm {

namespace detail {

extern const ReduceScatterAlgorithm auto_reduce_scatter, native_reduce_scatter, ring_reduce_scatter,
    d_cycles_reduce_scatter, reduce_spread_reduce_scatter, shared_window_reduce_scatter;

const ReduceScatterAlgorithm auto_reduce_scatter{
    .algo = ReduceScatterAlgo::Auto, .name = "auto",
    .summary = "the Auto policy (LIBCOMM_AUTO: online, model or table; README 'Tuning: what auto runs')", .paper = ""};

std::span<const ReduceScatterAlgorithm> ReduceScatterOp::algorithms() {
  static const auto all =
      registry<ReduceScatterOp>({&auto_reduce_scatter, &native_reduce_scatter, &ring_reduce_scatter,
                                 &d_cycles_reduce_scatter, &reduce_spread_reduce_scatter, &shared_window_reduce_scatter});
  return all;
}

namespace {

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

ReduceScatterOp::Shape ReduceScatterOp::shape(std::span<const std::size_t> counts, ElemType type, ReduceOp op,
                                              const NodeMap& nodes, const Options& o) {
  Shape s;
  s.p = static_cast<int>(counts.size());
  s.nodes = &nodes;
  s.type = type;
  s.op = op;
  s.opts = &o;
  s.set_blocks(counts);
  return s;
}

ReduceScatterOp::Shape ReduceScatterOp::shape(const Args& a, const Comm& comm, const Options& o) {
  Shape s = shape({}, a.type, a.op, comm.nodes(), o);
  s.p = comm.size();
  const std::size_t es = elem_size(a.type);
  if (a.counts.size() != static_cast<std::size_t>(comm.size())) {
    s.problem = "counts has " + std::to_string(a.counts.size()) + " entries, P = " + std::to_string(comm.size());
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
  s.set_blocks(a.counts);
  return s;
}

std::uint64_t ReduceScatterOp::options(const Shape& s) {
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

ReduceBlocks::ReduceBlocks(std::span<const std::size_t> count_bytes, ElemType t, ReduceOp o)
    : count(count_bytes.begin(), count_bytes.end()), displ(count_bytes.size()), type(t), op(o), es(elem_size(t)) {
  for (std::size_t r = 0; r < count.size(); ++r) {
    count[r] /= es;  // whole elements: the shape refused any other count
    displ[r] = total;
    total += count[r];
    max = std::max(max, count[r]);
  }
}

ReduceBlocks::ReduceBlocks(const ReduceScatterOp::Shape& s)
    : ReduceBlocks(s.block_sizes(), s.type, s.op) {}

}  // namespace detail

}  // namespace libcomm
