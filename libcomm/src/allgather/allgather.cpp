// Dispatcher of the all-to-all broadcast: names, the Auto choice, the collective argument
// check and shared helpers. The algorithms live one family per file next to this one.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "../core/algorithm_table.hpp"
#include "../core/check.hpp"
#include "../core/mpi_bytes.hpp"
#include "../core/plan_state.hpp"
#include "libcomm/plan.hpp"
#include "allgather_internal.hpp"
#include "libcomm/tuning.hpp"
#include "../tuning/table_choice.hpp"

namespace libcomm {

const std::vector<AllgatherAlgoInfo>& allgather_algorithms() {
  static const std::vector<AllgatherAlgoInfo> all = {
      {AllgatherAlgo::Auto, "auto", "d_cycles when P is a power of two >= 4, else ring"},
      {AllgatherAlgo::Native, "native", "the MPI library's MPI_Allgather(v) (reference)"},
      {AllgatherAlgo::Ring, "ring", "single Hamiltonian cycle, P - 1 shifts, --order binary|gray (paper 004, s. 4.1)"},
      {AllgatherAlgo::DCycles, "d_cycles", "d Hamiltonian cycles of a binary d-cube, d channels per step, index computation; P = 2^d (s. 4.2)"},
      {AllgatherAlgo::DCyclesIndexMotion, "d_cycles_im", "d_cycles with the indices moved along with the data, then reordering (s. 6.1)"},
      {AllgatherAlgo::SendSpread, "send_spread", "gather to rank 0, then broadcast (s. 5, alternative 3)"},
      {AllgatherAlgo::Butterfly, "butterfly", "recursive doubling / rotated binomial trees, log P steps, any P (s. 5, alternative 4)"},
  };
  return all;
}

std::string_view allgather_algo_name(AllgatherAlgo a) { return detail::name_in(allgather_algorithms(), a); }

AllgatherAlgo allgather_algo_from_name(std::string_view name) {
  return detail::algorithm_in(allgather_algorithms(), name, "allgather");
}

AllgatherAlgo allgather_algo_from_env(AllgatherAlgo fallback) {
  return detail::algorithm_from_env(allgather_algorithms(), "LIBCOMM_ALLGATHER", fallback, "allgather");
}

std::string_view node_order_name(NodeOrder o) { return o == NodeOrder::Gray ? "gray" : "binary"; }

NodeOrder node_order_from_name(std::string_view name) {
  if (name == "binary") return NodeOrder::Binary;
  if (name == "gray") return NodeOrder::Gray;
  throw Error("unknown node order '" + std::string(name) + "' (valid: binary, gray)");
}

AllgatherChoice choose_allgather(AllgatherAlgo requested, int p, const AllgatherOptions& opts) {
  const auto ps = [p] { return std::to_string(p); };  // only for the reasons that name P
  const bool pow2 = cube::log2_exact(p) >= 0;
  AllgatherChoice c = AllgatherChoice::requested(requested);
  switch (requested) {
    case AllgatherAlgo::Auto:
      if (pow2 && p >= 4) c = {AllgatherAlgo::DCycles, "auto: d_cycles, P = " + ps() + " is a power of two"};
      else c = {AllgatherAlgo::Ring, "auto: ring (P = " + ps() + (pow2 ? " < 4)" : " is not a power of two)")};
      break;
    case AllgatherAlgo::DCycles:
    case AllgatherAlgo::DCyclesIndexMotion:
      if (pow2) break;
      // s. 4.2: d cycles exist in a binary d-cube only. Every rank computes the same P, so
      // every rank throws the same Error (no hang).
      require(opts.allow_fallback, "allgather: " + std::string(allgather_algo_name(requested)) +
                                       " needs a power-of-two number of ranks (a binary d-cube), P = " +
                                       ps() + "; use ring, butterfly or auto");
      c = {AllgatherAlgo::Ring, std::string(allgather_algo_name(requested)) + " needs a power of two, P = " +
                                    ps() + ": ran ring instead (allow_fallback)"};
      break;
    default:
      break;
  }
  // The Gray-code path of s. 4.1 is a Hamiltonian cycle only on 2^d nodes.
  if (c.algo == AllgatherAlgo::Ring && opts.order == NodeOrder::Gray && !pow2)
    throw Error("allgather: ring with order gray needs a power-of-two number of ranks (the "
                "binary-reflected Gray code is a cycle only on 2^d nodes), P = " + ps());
  return c;
}

AllgatherChoice choose_allgather(AllgatherAlgo requested, std::size_t block_bytes, const Comm& comm,
                                 const AllgatherOptions& opts) {
  return detail::choose_from_table(
      "allgather", requested, block_bytes, comm, opts,
      [](const std::string& name) { return allgather_algo_from_name(name); },
      [&](AllgatherAlgo a, const AllgatherOptions& o) { return choose_allgather(a, comm.size(), o); });
}

namespace detail {

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

}  // namespace detail

namespace {

void check_allgather_args(const void* send, std::size_t send_bytes, void* recv,
                          std::span<const std::size_t> counts, const Comm& comm, AllgatherAlgo algo,
                          const AllgatherOptions& opts, bool have_buffers = true) {
  const int p = comm.size(), me = comm.rank();
  std::string local;
  std::size_t total = 0;
  bool overflow = false;
  for (auto c : counts) {
    if (c > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) - total) overflow = true;
    total += c;
  }
  if (counts.size() != static_cast<std::size_t>(p)) {
    local = "counts has " + std::to_string(counts.size()) + " entries, P = " + std::to_string(p);
  } else if (overflow) {
    local = "counts add up to more than the address space";
  } else if (send_bytes != counts[static_cast<std::size_t>(me)]) {
    local = "send_bytes " + std::to_string(send_bytes) + " differs from counts[" +
            std::to_string(me) + "] = " + std::to_string(counts[static_cast<std::size_t>(me)]);
  } else if (opts.element_bytes == 0) {
    local = "element_bytes must be positive";
  } else if (!have_buffers) {
  } else if ((send_bytes > 0 && send == nullptr) || (total > 0 && recv == nullptr)) {
    local = std::string(send_bytes > 0 && send == nullptr ? "send" : "recv") + " buffer is null";
  } else if (send_bytes > 0) {
    const auto* s = static_cast<const std::byte*>(send);
    const auto* r = static_cast<const std::byte*>(recv);
    if (s < r + total && r < s + send_bytes) local = "send and recv buffers overlap";
  }
  using u64 = unsigned long long;
  // The subblock partitioning (Fig. 20) depends on element_bytes: it must agree too.
  const u64 h = counts.size() == static_cast<std::size_t>(p)
                    ? detail::hash_sizes(counts) ^ (static_cast<u64>(opts.element_bytes) * 0x100000001b3ULL)
                    : 0;
  const u64 mode = static_cast<u64>(algo) * 64 + static_cast<u64>(opts.order) * 8 +
                   static_cast<u64>(opts.reorder) * 2 + (opts.allow_fallback ? 1 : 0);
  std::array<u64, 5> v = {local.empty() ? 0ULL : static_cast<u64>(p - me), h, ~h, mode, ~mode};
  detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, v.data(), 5, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                                  comm.internal()),
                    "MPI_Allreduce");
  const std::string where = "allgather: rank " + std::to_string(me) + ": ";
  if (!local.empty()) throw Error(where + local);
  if (v[0] != 0)
    throw Error(where + "rank " + std::to_string(p - static_cast<int>(v[0])) +
                " reported an invalid argument (see its message)");
  if (v[1] != ~v[2]) throw Error(where + "counts (block sizes) differ across ranks");
  if (v[3] != ~v[4])
    throw Error(where + "ranks asked for different algorithms or options (this rank: " +
                std::string(allgather_algo_name(algo)) + ", order " +
                std::string(node_order_name(opts.order)) + ")");
}

// Check mode (libcomm/check.hpp): the same counts and element size on every rank, and
// what rank i sends (send_bytes) is what every rank expects from it (counts[i]).
void check_allgather_agreement(std::size_t send_bytes, std::span<const std::size_t> counts,
                               const Comm& comm, const AllgatherOptions& opts) {
  const std::vector<std::uint64_t> vec(counts.begin(), counts.end());
  const detail::SameField fields[] = {{"element_bytes", opts.element_bytes}};
  detail::check_same_on_all_ranks(comm, "allgather", fields, "counts", vec);
  const std::vector<std::int64_t> sent(static_cast<std::size_t>(comm.size()),
                                       static_cast<std::int64_t>(send_bytes));
  const std::vector<std::int64_t> expected(counts.begin(), counts.end());
  detail::check_counts_match(comm, "allgather", "bytes", sent, {"send_bytes", false}, expected,
                             {"counts"});
}

// Auto's choice depends on the largest block, the fallback switch and the ring order.
AllgatherChoice resolve(AllgatherAlgo algo, std::size_t largest, const Comm& comm, const AllgatherOptions& opts) {
  const DecisionKey key{"allgather", largest, 1.0,
                        static_cast<std::uint64_t>(opts.order) * 2 + opts.allow_fallback};
  return detail::decided_choice(algo, comm, key, [&] { return choose_allgather(algo, largest, comm, opts); });
}

void require_p_counts(std::span<const std::size_t> counts, const Comm& comm) {
  require(counts.size() == static_cast<std::size_t>(comm.size()), [&] {
    return "allgather: rank " + std::to_string(comm.rank()) + ": counts has " + std::to_string(counts.size()) +
           " entries, P = " + std::to_string(comm.size());
  });
}

std::size_t largest_of(std::span<const std::size_t> counts) {
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

// The key of a kept plan. Plans of equal blocks are kept by block size; unequal counts are
// keyed by their hash and the plan kept only when its counts are these.
PlanKey plan_key(AllgatherAlgo ran, std::size_t block, std::span<const std::size_t> counts, bool equal,
                 const AllgatherOptions& opts) {
  const std::uint64_t options = static_cast<std::uint64_t>(opts.element_bytes) * 16 +
                                static_cast<std::uint64_t>(opts.order) * 4 +
                                static_cast<std::uint64_t>(opts.reorder) * 2 + (equal ? 1 : 0);
  return PlanKey{"allgather", static_cast<int>(ran), equal ? block : detail::hash_sizes(counts), options};
}

std::shared_ptr<detail::PlanState> allgather_state(const AllgatherChoice& c, const detail::Blocks& b,
                                                   const Comm& comm, const AllgatherOptions& opts, bool own_scratch) {
  return detail::choice_state(
      comm, c.reason(), c.algo == AllgatherAlgo::Native, [&] { return detail::native_iallgatherv(b, comm.mpi()); },
      [&] { return detail::build_allgather_program(c.algo, b, comm.rank(), opts); }, own_scratch);
}

}  // namespace

namespace detail {

StepProgram build_allgather_program(AllgatherAlgo a, const Blocks& b, int rank, const AllgatherOptions& opts) {
  switch (a) {
    case AllgatherAlgo::Ring: return ring_allgather_program(b, rank, opts.order, opts.reorder);
    case AllgatherAlgo::DCycles: return dcycles_allgather_program(b, rank, opts.reorder, false, opts.element_bytes);
    case AllgatherAlgo::DCyclesIndexMotion:
      return dcycles_allgather_program(b, rank, Reorder::Staged, true, opts.element_bytes);
    case AllgatherAlgo::SendSpread: return send_spread_allgather_program(b, rank);
    case AllgatherAlgo::Butterfly: return butterfly_allgather_program(b, rank);
    default:
      throw Error("allgather: '" + std::string(allgather_algo_name(a)) + "' has no step program");
  }
}

}  // namespace detail

StepProgram allgather_program(AllgatherAlgo algo, std::span<const std::size_t> counts, int rank,
                              const AllgatherOptions& opts) {
  require(!counts.empty() && rank >= 0 && rank < static_cast<int>(counts.size()),
          "allgather_program: rank " + std::to_string(rank) + " of P = " + std::to_string(counts.size()) +
              " does not exist");
  const AllgatherChoice c = choose_allgather(algo, static_cast<int>(counts.size()), opts);
  return detail::build_allgather_program(c.algo, detail::Blocks(counts), rank, opts);
}

namespace {

// One blocking call. `counts` empty: the regular form, P blocks of `block` bytes, which
// then builds no vector of counts unless a check or a new plan needs one.
AllgatherChoice run_allgather(const void* send, std::size_t send_bytes, void* recv, std::span<const std::size_t> counts,
                            std::size_t block, const Comm& comm, AllgatherAlgo algo, const AllgatherOptions& opts) {
  const bool regular = counts.empty();
  std::vector<std::size_t> equal_counts;
  const auto all_counts = [&]() -> std::span<const std::size_t> {
    if (!regular) return counts;
    if (equal_counts.empty()) equal_counts.assign(static_cast<std::size_t>(comm.size()), block);
    return equal_counts;
  };
  if (check_mode()) check_allgather_agreement(send_bytes, all_counts(), comm, opts);
  if (opts.check_args) check_allgather_args(send, send_bytes, recv, all_counts(), comm, algo, opts);
  bool equal = true;
  std::size_t total = block * static_cast<std::size_t>(comm.size());
  if (!regular) {
    require_p_counts(counts, comm);
    block = largest_of(counts);
    total = 0;
    for (auto n : counts) {
      equal = equal && n == block;
      total += n;
    }
  }
  const AllgatherChoice c = resolve(algo, block, comm, opts);
  const auto* s = static_cast<const std::byte*>(send);
  auto* r = static_cast<std::byte*>(recv);
  if (c.algo == AllgatherAlgo::Native) {
    if (equal) detail::native_allgather(s, r, block, comm.mpi());
    else detail::native_allgatherv(s, r, detail::Blocks(counts), comm.mpi());
    return c;
  }
  if (total == 0) return c;
  detail::run_cached(comm, plan_key(c.algo, block, counts, equal, opts), equal ? std::span<const std::size_t>() : counts,
                     send, recv,
                     [&] { return allgather_state(c, detail::Blocks(all_counts()), comm, opts, false); });
  return c;
}

}  // namespace

AllgatherChoice allgatherv(const void* send, std::size_t send_bytes, void* recv,
                         std::span<const std::size_t> counts, const Comm& comm, AllgatherAlgo algo,
                         const AllgatherOptions& opts) {
  require_p_counts(counts, comm);  // (an empty span is not the regular form here)
  return run_allgather(send, send_bytes, recv, counts, 0, comm, algo, opts);
}

AllgatherChoice allgather(const void* send, void* recv, std::size_t block_bytes, const Comm& comm,
                          AllgatherAlgo algo, const AllgatherOptions& opts) {
  return run_allgather(send, block_bytes, recv, {}, block_bytes, comm, algo, opts);
}

Plan plan_allgatherv(const Comm& comm, std::span<const std::size_t> counts, AllgatherAlgo algo,
                     const AllgatherOptions& opts) {
  // Collective like MPI_Allgatherv_init: the argument check runs once here, without buffers.
  const std::size_t mine = counts.size() == static_cast<std::size_t>(comm.size())
                               ? counts[static_cast<std::size_t>(comm.rank())] : 0;
  if (check_mode()) check_allgather_agreement(mine, counts, comm, opts);
  if (opts.check_args) check_allgather_args(nullptr, mine, nullptr, counts, comm, algo, opts, false);
  require_p_counts(counts, comm);
  const AllgatherChoice c = resolve(algo, largest_of(counts), comm, opts);
  return Plan(allgather_state(c, detail::Blocks(counts), comm, opts, true));
}

Plan plan_allgather(const Comm& comm, std::size_t block_bytes, AllgatherAlgo algo, const AllgatherOptions& opts) {
  const std::vector<std::size_t> counts(static_cast<std::size_t>(comm.size()), block_bytes);
  return plan_allgatherv(comm, counts, algo, opts);
}

Request iallgatherv(const void* send, std::size_t send_bytes, void* recv, std::span<const std::size_t> counts,
                    const Comm& comm, AllgatherAlgo algo, const AllgatherOptions& opts) {
  require(counts.size() == static_cast<std::size_t>(comm.size()) &&
              send_bytes == counts[static_cast<std::size_t>(comm.rank())],
          "iallgatherv: rank " + std::to_string(comm.rank()) + ": send_bytes " + std::to_string(send_bytes) +
              " must equal counts[rank] (counts has " + std::to_string(counts.size()) + " entries, P = " +
              std::to_string(comm.size()) + ")");
  AllgatherOptions o = opts;
  o.check_args = false;  // no blocking collective inside a non-blocking call
  if (check_mode()) check_allgather_agreement(send_bytes, counts, comm, o);
  const std::size_t block = largest_of(counts);
  const bool equal = std::all_of(counts.begin(), counts.end(), [block](std::size_t n) { return n == block; });
  const AllgatherChoice c = resolve(algo, block, comm, o);
  PlanKey key = plan_key(c.algo, block, counts, equal, o);
  key.options = key.options * 64 + static_cast<std::uint64_t>(algo);  // the kept plan's reason is this request's
  Plan plan(detail::request_plan(comm, key, equal ? std::span<const std::size_t>() : counts,
                                 [&] { return allgather_state(c, detail::Blocks(counts), comm, o, true); }));
  plan.start(send, recv);
  return plan;
}

Request iallgather(const void* send, void* recv, std::size_t block_bytes, const Comm& comm, AllgatherAlgo algo,
                   const AllgatherOptions& opts) {
  const std::vector<std::size_t> counts(static_cast<std::size_t>(comm.size()), block_bytes);
  return iallgatherv(send, block_bytes, recv, counts, comm, algo, opts);
}

}  // namespace libcomm
