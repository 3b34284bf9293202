// The all-to-all broadcast: its registry (the descriptors of the algorithm files, in enum
// order), its shape, options and argument check; the public entry points are calls of the
// driver (driver/driver.hpp).
#include <algorithm>
#include <limits>

#include "../runtime/check.hpp"
#include "allgather_internal.hpp"

namespace libcomm {

namespace detail {

extern const AllgatherAlgorithm auto_allgather, native_allgather, ring_allgather, d_cycles_allgather,
    d_cycles_im_allgather, send_spread_allgather, butterfly_allgather, shared_window_allgather;

const AllgatherAlgorithm auto_allgather{
    .algo = AllgatherAlgo::Auto, .name = "auto",
    .summary = "the Auto policy (LIBCOMM_AUTO: online, model or table; README 'Tuning: what auto runs')", .paper = ""};

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
  Shape s = shape({}, comm.nodes(), o);
  s.p = comm.size();
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

}  // namespace libcomm
