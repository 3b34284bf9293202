// Runs a tree schedule (paper 003, section 5): phases separated by pairwise
// synchronisation messages, by a barrier per phase, or not at all.
#include <cstring>
#include <vector>

#include "../core/mpi_bytes.hpp"
#include "libcomm/error.hpp"
#include "libcomm/tree_schedule.hpp"

namespace libcomm {

namespace {
constexpr int kTreeDataTag = 7401;
constexpr int kTreeSyncTag = 7402;
}  // namespace

void execute_tree_aapc(const TreeRankPlan& tp, const std::byte* send, std::byte* recv,
                       std::size_t b, MPI_Comm comm, TreeSync mode) {
  using detail::check_mpi;
  const RankPlan& plan = tp.plan;
  require(plan.single_ported(), "execute_tree_aapc: rank " + std::to_string(plan.rank()) +
                                    ": the schedule is not single-ported");
  const detail::MpiBytes block(b);
  auto send_at = [&](int dst) { return const_cast<std::byte*>(send) + static_cast<std::size_t>(dst) * b; };
  auto recv_at = [&](int src) { return recv + static_cast<std::size_t>(src) * b; };
  auto copy_local = [&](const RankStep& step) {
    for (const auto& t : step.local)
      if (b) std::memcpy(recv_at(t.src), send_at(t.dst), b);
  };
  std::vector<MPI_Request> reqs;
  auto wait_all = [&] {
    if (!reqs.empty())
      detail::wait_all(static_cast<int>(reqs.size()), reqs.data());
    reqs.clear();
  };
  auto post_recv = [&](const RankStep& step) {
    for (const auto& t : step.recvs) {
      reqs.emplace_back();
      check_mpi(MPI_Irecv(recv_at(t.src), block.count(), block.type(), t.src, kTreeDataTag, comm,
                          &reqs.back()),
                "MPI_Irecv");
    }
  };
  const auto& steps = plan.steps();

  if (mode == TreeSync::Barrier) {
    for (const auto& step : steps) {
      post_recv(step);
      for (const auto& t : step.sends) {
        reqs.emplace_back();
        check_mpi(MPI_Isend(send_at(t.dst), block.count(), block.type(), t.dst, kTreeDataTag,
                            comm, &reqs.back()),
                  "MPI_Isend");
      }
      copy_local(step);
      wait_all();
      check_mpi(MPI_Barrier(comm), "MPI_Barrier");
    }
    return;
  }

  // Every receive is posted first, so no data message ever arrives unexpected and a send
  // never waits for its receiver to reach the phase.
  for (const auto& step : steps) post_recv(step);
  for (const auto& step : steps) copy_local(step);
  if (mode == TreeSync::None) {
    for (const auto& step : steps)
      for (const auto& t : step.sends) {
        reqs.emplace_back();
        check_mpi(MPI_Isend(send_at(t.dst), block.count(), block.type(), t.dst, kTreeDataTag,
                            comm, &reqs.back()),
                  "MPI_Isend");
      }
    wait_all();
    return;
  }
  // Pairwise: before my message of phase p, wait for the synchronisations of the earlier
  // messages it contends with; after it, tell the later senders.
  for (std::size_t p = 0; p < steps.size(); ++p) {
    if (steps[p].sends.empty()) continue;
    for (int from : tp.wait_from[p])
      check_mpi(MPI_Recv(nullptr, 0, MPI_BYTE, from, kTreeSyncTag, comm, MPI_STATUS_IGNORE),
                "MPI_Recv (synchronisation)");
    const auto& t = steps[p].sends[0];
    check_mpi(MPI_Send(send_at(t.dst), block.count(), block.type(), t.dst, kTreeDataTag, comm),
              "MPI_Send");
    for (int to : tp.notify[p]) {
      reqs.emplace_back();
      check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, to, kTreeSyncTag, comm, &reqs.back()),
                "MPI_Isend (synchronisation)");
    }
  }
  wait_all();
}

}  // namespace libcomm
