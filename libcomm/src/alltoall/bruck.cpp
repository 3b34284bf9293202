// Bruck's all-to-all (paper 002, section 2.4: "completes in minimum number of steps,
// log P"), for any P:
//   1. rotate: slot k holds the block for rank (me + k) mod P;
//   2. for bit = 1, 2, 4, ... < P: send every slot k with (k & bit) != 0 to rank me + bit
//      and receive the same slots from rank me - bit (one packed message each way);
//   3. now slot k holds the block that rank (me - k) mod P sent to me: un-rotate into recv.
// ceil(log2 P) rounds, each moving about half the data: few start-ups, more volume, so it
// suits small blocks.
#include <algorithm>
#include <cstring>
#include <vector>

#include "../core/mpi_bytes.hpp"
#include "alltoall_internal.hpp"
#include "kernels/blocks.hpp"
#include "libcomm/sim.hpp"

namespace libcomm::detail {

int bruck_rounds(int p) {
  int rounds = 0;
  for (long bit = 1; bit < p; bit <<= 1) ++rounds;
  return rounds;
}

void bruck_alltoall(const std::byte* send, std::byte* recv, std::size_t b, const Comm& c) {
  const MPI_Comm comm = c.internal();
  const int me = c.rank(), p = c.size();
  const auto n = static_cast<std::size_t>(p);
  // The slots live in recv itself; only the packed messages need extra memory.
  std::byte* slots = recv;
  // Simulated payload (libcomm/buffer.hpp): the bytes mean nothing, so the local
  // rearrangement is skipped like SMPI skips the network copies.
  const bool copies = !simulated_payload();
  if (copies) kernels::rotate_blocks_up(send, slots, n, static_cast<std::size_t>(me), b);
  sim::charge_copy(static_cast<double>(n * b));  // SimGrid copy model (libcomm/sim.hpp)

  std::size_t most = 0;  // largest number of slots sent in one round
  for (std::size_t bit = 1; bit < n; bit <<= 1)
    most = std::max(most, kernels::count_with_bit(n, bit));
  std::byte* out = c.scratch(0, most * b);
  std::byte* in = c.scratch(1, most * b);
  constexpr int kTag = 7302;
  for (std::size_t bit = 1; bit < n; bit <<= 1) {
    const std::size_t k = copies ? kernels::pack_blocks_with_bit(slots, out, n, bit, b)
                                 : kernels::count_with_bit(n, bit);
    const int to = static_cast<int>((static_cast<std::size_t>(me) + bit) % n);
    const int from = static_cast<int>((static_cast<std::size_t>(me) + n - bit) % n);
    const MpiBytes msg(k * b);
    check_mpi(MPI_Sendrecv(out, msg.count(), msg.type(), to, kTag, in, msg.count(),
                           msg.type(), from, kTag, comm, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
    if (copies) kernels::unpack_blocks_with_bit(in, slots, n, bit, b);
    sim::charge_copy(static_cast<double>(2 * k * b));  // pack + unpack
  }
  // Slot k came from rank (me - k) mod P and belongs at recv[(me - k) mod P]. The map
  // k -> (me - k) mod P is its own inverse, so swapping pairs puts every block in place.
  std::byte* tmp = c.scratch(2, b);
  std::size_t swaps = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t home = (static_cast<std::size_t>(me) + n - k) % n;
    if (k >= home) continue;
    ++swaps;
    if (!copies) continue;
    std::memcpy(tmp, slots + k * b, b);
    std::memcpy(slots + k * b, slots + home * b, b);
    std::memcpy(slots + home * b, tmp, b);
  }
  sim::charge_copy(static_cast<double>(3 * swaps * b));  // three copies per swap
}

}  // namespace libcomm::detail
