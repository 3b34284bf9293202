// libcomm collectives that the application holds as MPI requests: the non-blocking forms
// (MPI_Ialltoall, ...) and the persistent ones (MPIX_Alltoall_init, ...).
//
// A non-blocking call hands out a generalized request (MPI_Grequest_start): a real MPI
// request, which MPI itself reports as incomplete until this library completes it
// (MPI_Grequest_complete) once libcomm's step program has finished. A persistent call hands
// out an inactive persistent request of MPI's own (a send to MPI_PROC_NULL, which carries
// no data): MPI_Start activates it along with libcomm's plan, and MPI's own MPI_Wait then
// leaves it inactive and reusable, exactly as for a native persistent collective.
//
// libcomm's algorithms progress only when something calls them (no helper thread, as in
// MPICH's gentran engine), so this library takes over the calls that complete requests:
// MPI_Wait, MPI_Test and their -all, -any and -some forms, MPI_Request_get_status, and
// MPI_Start(all) and MPI_Request_free for the persistent ones. While one of its collectives
// runs, each of these calls progresses every running one (several may run at once, on one
// communicator or several, and ranks may wait for them in different orders); with none
// running they go straight to MPI.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "libcomm/plan.hpp"

namespace libcomm_mpi {

// One collective handed out as an MPI request.
class PendingCollective {
 public:
  PendingCollective(std::string_view op, MPI_Comm comm, bool persistent)
      : op_(op), comm_(comm), persistent_(persistent) {}
  PendingCollective(const PendingCollective&) = delete;
  PendingCollective& operator=(const PendingCollective&) = delete;

  // Staging memory owned by the request (slot 0 = send side, 1 = receive side): it must
  // outlive the call, unlike a blocking call's.
  std::byte* staging(int slot, std::size_t bytes);

  // The copies around the exchange: pack (the user's input into the send staging; a
  // persistent request packs at every start) and unpack (the receive staging into the
  // user's buffer, when the run has completed). Either may be empty.
  std::function<void()> pack, unpack;

  // Non-blocking: the running collective. Persistent: the plan, with the byte buffers each
  // start passes to it.
  libcomm::Request request;
  libcomm::Plan plan;
  const void* send = nullptr;
  void* recv = nullptr;

  std::string_view op() const { return op_; }
  MPI_Comm comm() const { return comm_; }
  bool persistent() const { return persistent_; }

 private:
  friend struct RequestTable;
  friend int hand_out(std::unique_ptr<PendingCollective> pending, MPI_Request* out);
  std::string_view op_;
  MPI_Comm comm_;
  bool persistent_;
  bool active_ = false;
  MPI_Request handle_ = MPI_REQUEST_NULL;
  std::vector<std::byte> staging_[2];
};

// Hands out a non-blocking collective whose libcomm request is already started (`request`
// set), or a persistent one (`plan`, `send`, `recv` set), as *out.
int hand_out(std::unique_ptr<PendingCollective> pending, MPI_Request* out);

}  // namespace libcomm_mpi
