#include "libcomm/buffer.hpp"
#include "libcomm/executor.hpp"

#include <cstring>
#include <vector>

#include "libcomm/error.hpp"
#include "libcomm/sim.hpp"
#include "mpi_bytes.hpp"

namespace libcomm {

namespace {

constexpr int kScheduleTag = 7301;

void copy_local(const RankStep& step, const std::byte* send, std::byte* recv, std::size_t b) {
  sim::charge_copy(static_cast<double>(step.local.size() * b));  // SimGrid copy model
  if (simulated_payload()) return;  // libcomm/buffer.hpp: nothing real to copy
  for (const auto& t : step.local)
    if (b) std::memcpy(recv + static_cast<std::size_t>(t.src) * b,
                       send + static_cast<std::size_t>(t.dst) * b, b);
}

}  // namespace

std::string_view exec_mode_name(ExecMode m) {
  switch (m) {
    case ExecMode::Blocking: return "blocking";
    case ExecMode::RoundNonblocking: return "round-nonblocking";
    case ExecMode::AllAtOnce: return "all-at-once";
  }
  return "?";
}

void execute_aapc(const RankPlan& plan, const std::byte* send, std::byte* recv,
                  std::size_t block_bytes, MPI_Comm comm, ExecMode mode) {
  using detail::check_mpi;
  const std::size_t b = block_bytes;
  const detail::MpiBytes block(b);
  auto send_at = [&](int dst) { return const_cast<std::byte*>(send) + static_cast<std::size_t>(dst) * b; };
  auto recv_at = [&](int src) { return recv + static_cast<std::size_t>(src) * b; };

  if (mode == ExecMode::Blocking) {
    require(plan.single_ported(),
            "execute_aapc: blocking mode needs a single-ported schedule (rank " +
                std::to_string(plan.rank()) + " has a round with several sends or receives)");
    for (const auto& step : plan.steps()) {
      copy_local(step, send, recv, b);
      const bool s = !step.sends.empty(), r = !step.recvs.empty();
      if (s && r) {
        check_mpi(MPI_Sendrecv(send_at(step.sends[0].dst), block.count(), block.type(),
                               step.sends[0].dst, kScheduleTag, recv_at(step.recvs[0].src),
                               block.count(), block.type(), step.recvs[0].src, kScheduleTag, comm,
                               MPI_STATUS_IGNORE),
                  "MPI_Sendrecv");
      } else if (s) {
        check_mpi(MPI_Send(send_at(step.sends[0].dst), block.count(), block.type(),
                           step.sends[0].dst, kScheduleTag, comm),
                  "MPI_Send");
      } else if (r) {
        check_mpi(MPI_Recv(recv_at(step.recvs[0].src), block.count(), block.type(),
                           step.recvs[0].src, kScheduleTag, comm, MPI_STATUS_IGNORE),
                  "MPI_Recv");
      }
    }
    return;
  }

  std::vector<MPI_Request> reqs;
  auto post_step = [&](const RankStep& step, bool recvs, bool sends) {
    if (recvs)
      for (const auto& t : step.recvs) {
        reqs.emplace_back();
        check_mpi(MPI_Irecv(recv_at(t.src), block.count(), block.type(), t.src, kScheduleTag,
                            comm, &reqs.back()),
                  "MPI_Irecv");
      }
    if (sends)
      for (const auto& t : step.sends) {
        reqs.emplace_back();
        check_mpi(MPI_Isend(send_at(t.dst), block.count(), block.type(), t.dst, kScheduleTag,
                            comm, &reqs.back()),
                  "MPI_Isend");
      }
  };
  auto wait_all = [&] {
    if (!reqs.empty())
      detail::wait_all(static_cast<int>(reqs.size()), reqs.data());
    reqs.clear();
  };

  if (mode == ExecMode::RoundNonblocking) {
    for (const auto& step : plan.steps()) {
      post_step(step, true, true);
      copy_local(step, send, recv, b);
      wait_all();
    }
    return;
  }
  // AllAtOnce: every receive first (so no message arrives unexpected), then every send in
  // schedule order, local copies while the network works, one wait.
  std::size_t total = 0;
  for (const auto& step : plan.steps()) total += step.sends.size() + step.recvs.size();
  reqs.reserve(total);
  for (const auto& step : plan.steps()) post_step(step, true, false);
  for (const auto& step : plan.steps()) post_step(step, false, true);
  for (const auto& step : plan.steps()) copy_local(step, send, recv, b);
  wait_all();
}

}  // namespace libcomm
