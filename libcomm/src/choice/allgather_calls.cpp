// The public calls of the all-to-all broadcast (libcomm/allgather.hpp): each is a call of the one
// driver (driver.hpp) on the operation its folder defines.
#include "../allgather/allgather_internal.hpp"
#include "driver.hpp"

namespace libcomm {

using Driver = detail::Driver<detail::AllgatherOp>;
using detail::AllgatherOp;

const std::vector<AllgatherAlgoInfo>& allgather_algorithms() { return detail::algorithm_infos<AllgatherOp>(); }
std::string_view allgather_algo_name(AllgatherAlgo a) { return detail::name_of<AllgatherOp>(a); }
AllgatherAlgo allgather_algo_from_name(std::string_view name) { return detail::algorithm_named<AllgatherOp>(name); }
AllgatherAlgo allgather_algo_from_env(AllgatherAlgo fallback) {
  return detail::algorithm_from_env<AllgatherOp>(fallback);
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
  const AllgatherOp::Shape s = AllgatherOp::shape(none, flat, opts);
  return Driver::choice_without_comm(requested, s, opts.allow_fallback);
}

AllgatherChoice choose_allgather(AllgatherAlgo requested, std::size_t block_bytes, const Comm& comm,
                                 const AllgatherOptions& opts) {
  const AllgatherOp::Args a{nullptr, block_bytes, nullptr, {}, block_bytes};
  return Driver::choose(requested, AllgatherOp::shape(a, comm, opts), comm);
}

StepProgram allgather_program(AllgatherAlgo algo, std::span<const std::size_t> counts, int rank,
                              const AllgatherOptions& opts) {
  require(!counts.empty() && rank >= 0 && rank < static_cast<int>(counts.size()),
          "allgather_program: rank " + std::to_string(rank) + " of P = " + std::to_string(counts.size()) +
              " does not exist");
  const NodeMap flat = NodeMap::one_rank_per_node(static_cast<int>(counts.size()));
  const AllgatherOp::Shape s = AllgatherOp::shape(counts, flat, opts);
  return Driver::program_for(algo, s, rank, opts.allow_fallback);
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
