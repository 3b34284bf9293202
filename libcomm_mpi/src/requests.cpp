// The requests of libcomm's non-blocking and persistent collectives (requests.hpp) and the
// MPI calls that complete requests, taken over so that those collectives progress.
#include "requests.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <unordered_map>

#include "runtime.hpp"

using libcomm_mpi::InsideWrapper;
using libcomm_mpi::PendingCollective;

namespace libcomm_mpi {

std::byte* PendingCollective::staging(int slot, std::size_t bytes) {
  auto& s = staging_[slot];
  s.resize(std::max<std::size_t>(bytes, 1));
  return s.data();
}

// Every collective handed out and not yet freed, by handle; and how many are running.
struct RequestTable {
  std::mutex mutex;
  std::unordered_map<MPI_Request, PendingCollective*> by_handle;
  std::vector<PendingCollective*> running;
  // Read without the lock on every completion call: zero means "straight to MPI".
  std::atomic<int> handed_out{0};
  std::atomic<int> active{0};

  PendingCollective* find(MPI_Request r) {
    if (r == MPI_REQUEST_NULL || handed_out.load(std::memory_order_acquire) == 0) return nullptr;
    std::lock_guard lock(mutex);
    const auto it = by_handle.find(r);
    return it == by_handle.end() ? nullptr : it->second;
  }
  bool running_one(MPI_Request r) {
    const PendingCollective* p = find(r);
    return p != nullptr && p->active_;
  }

  void add(PendingCollective* p) {
    std::lock_guard lock(mutex);
    by_handle[p->handle_] = p;
    handed_out.fetch_add(1, std::memory_order_acq_rel);
  }
  void forget(PendingCollective* p) {
    {
      std::lock_guard lock(mutex);
      by_handle.erase(p->handle_);
      running.erase(std::remove(running.begin(), running.end(), p), running.end());
    }
    handed_out.fetch_sub(1, std::memory_order_acq_rel);
    delete p;
  }

  void activate(PendingCollective* p) {
    std::lock_guard lock(mutex);
    p->active_ = true;
    running.push_back(p);
    active.fetch_add(1, std::memory_order_acq_rel);
  }
  // The run has completed: the data goes where the user wants it, and a generalized
  // request becomes complete for MPI.
  void finished(PendingCollective* p) {
    if (p->unpack) p->unpack();
    {
      std::lock_guard lock(mutex);
      p->active_ = false;
      running.erase(std::remove(running.begin(), running.end(), p), running.end());
    }
    active.fetch_sub(1, std::memory_order_acq_rel);
    if (!p->persistent_) PMPI_Grequest_complete(p->handle_);
  }
  libcomm::Request& run_of(PendingCollective* p) { return p->persistent_ ? p->plan : p->request; }

  // One progress pass over every running collective.
  void progress_all() {
    if (active.load(std::memory_order_acquire) == 0) return;
    std::vector<PendingCollective*> now;
    {
      std::lock_guard lock(mutex);
      now = running;
    }
    for (PendingCollective* p : now)
      if (run_of(p).test()) finished(p);
  }
  // Runs p to completion; blocks in libcomm's own wait when it is the only one running,
  // else keeps every running one moving.
  void complete(PendingCollective* p) {
    while (p->active_) {
      if (active.load(std::memory_order_acquire) == 1) {
        run_of(p).wait();
        finished(p);
      } else {
        progress_all();
      }
    }
  }
  bool any_running_in(int n, const MPI_Request* r) {
    if (active.load(std::memory_order_acquire) == 0) return false;
    for (int k = 0; k < n; ++k)
      if (running_one(r[k])) return true;
    return false;
  }
};

namespace {

RequestTable& table() {
  static RequestTable t;
  return t;
}

// Generalized-request callbacks (MPI-3.1 s. 12.2): the status of a collective is empty, a
// collective cannot be cancelled, and freeing the handle frees the collective.
int query_status(void* /*state*/, MPI_Status* status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  return MPI_SUCCESS;
}
int free_state(void* state) {
  table().forget(static_cast<PendingCollective*>(state));
  return MPI_SUCCESS;
}
int cancel_nothing(void* /*state*/, int /*complete*/) { return MPI_SUCCESS; }

// Runs `body`, turning what libcomm throws while it progresses a collective into an MPI
// error raised on `comm` (or MPI_COMM_WORLD when the failing collective is not known).
template <class Body>
int guarded(const char* op, const Body& body) noexcept {
  const auto raise = [op](int error_class, const char* what) {
    std::fprintf(stderr, "libcomm_mpi: %s: %s\n", op, what);
    std::fflush(stderr);
    PMPI_Comm_call_errhandler(MPI_COMM_WORLD, error_class);
    return error_class;
  };
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return raise(MPI_ERR_NO_MEM, "out of memory");
  } catch (const std::exception& e) {
    return raise(MPI_ERR_INTERN, e.what());
  } catch (...) {
    return raise(MPI_ERR_INTERN, "unknown exception");
  }
}

// The requests a call sees, with the running collectives of this library hidden
// (MPI_REQUEST_NULL): what MPI may complete now.
struct Masked {
  std::vector<MPI_Request> requests;
  bool any = false;
  Masked(int n, const MPI_Request* r) : requests(r, r + n) {
    for (auto& q : requests)
      if (table().running_one(q)) {
        q = MPI_REQUEST_NULL;
        any = true;
      }
  }
};

}  // namespace

int hand_out(std::unique_ptr<PendingCollective> pending, MPI_Request* out) {
  PendingCollective* p = pending.get();
  int rc = MPI_SUCCESS;
  if (p->persistent()) {
    rc = PMPI_Send_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, p->comm(), &p->handle_);
  } else {
    rc = PMPI_Grequest_start(query_status, free_state, cancel_nothing, p, &p->handle_);
  }
  if (rc != MPI_SUCCESS) return rc;
  pending.release();
  table().add(p);
  if (!p->persistent()) {
    table().activate(p);
    if (table().run_of(p).test()) table().finished(p);  // zero bytes, one rank, ...
  }
  *out = p->handle_;
  return MPI_SUCCESS;
}

}  // namespace libcomm_mpi

using libcomm_mpi::guarded;
using libcomm_mpi::Masked;
using libcomm_mpi::table;

// ---- Completion calls ---------------------------------------------------------------------

extern "C" int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (InsideWrapper::active() || table().active.load(std::memory_order_acquire) == 0)
    return PMPI_Test(request, flag, status);
  const InsideWrapper inside;
  return guarded("MPI_Test", [&] {
    table().progress_all();
    if (table().running_one(*request)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    return PMPI_Test(request, flag, status);
  });
}

extern "C" int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (InsideWrapper::active() || table().active.load(std::memory_order_acquire) == 0)
    return PMPI_Wait(request, status);
  const InsideWrapper inside;
  return guarded("MPI_Wait", [&] {
    if (PendingCollective* p = table().find(*request)) {
      table().complete(p);
      return PMPI_Wait(request, status);
    }
    // Someone else's request while collectives of this library run: poll both.
    for (;;) {
      if (table().active.load(std::memory_order_acquire) == 0) return PMPI_Wait(request, status);
      table().progress_all();
      int flag = 0;
      const int rc = PMPI_Test(request, &flag, status);
      if (rc != MPI_SUCCESS || flag) return rc;
    }
  });
}

extern "C" int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (InsideWrapper::active() || table().active.load(std::memory_order_acquire) == 0)
    return PMPI_Testall(count, requests, flag, statuses);
  const InsideWrapper inside;
  return guarded("MPI_Testall", [&] {
    table().progress_all();
    if (table().any_running_in(count, requests)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    return PMPI_Testall(count, requests, flag, statuses);
  });
}

extern "C" int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (InsideWrapper::active() || table().active.load(std::memory_order_acquire) == 0)
    return PMPI_Waitall(count, requests, statuses);
  const InsideWrapper inside;
  return guarded("MPI_Waitall", [&] {
    for (int k = 0; k < count; ++k)
      if (PendingCollective* p = table().find(requests[k])) table().complete(p);
    for (;;) {
      if (table().active.load(std::memory_order_acquire) == 0) return PMPI_Waitall(count, requests, statuses);
      table().progress_all();
      int flag = 0;
      const int rc = PMPI_Testall(count, requests, &flag, statuses);
      if (rc != MPI_SUCCESS || flag) return rc;
    }
  });
}

namespace {

int test_any(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  table().progress_all();
  Masked m(count, requests);
  const int rc = PMPI_Testany(count, m.requests.data(), index, flag, status);
  if (rc != MPI_SUCCESS) return rc;
  if (*flag && *index != MPI_UNDEFINED) {
    requests[*index] = m.requests[static_cast<std::size_t>(*index)];
  } else if (m.any) {
    *flag = 0;  // nothing else can complete, but a collective of this library still runs
    *index = MPI_UNDEFINED;
  }
  return MPI_SUCCESS;
}

int test_some(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  table().progress_all();
  Masked m(count, requests);
  const int rc = PMPI_Testsome(count, m.requests.data(), outcount, indices, statuses);
  if (rc != MPI_SUCCESS) return rc;
  if (*outcount == MPI_UNDEFINED) {
    if (m.any) *outcount = 0;
    return MPI_SUCCESS;
  }
  for (int k = 0; k < *outcount; ++k) requests[indices[k]] = m.requests[static_cast<std::size_t>(indices[k])];
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (InsideWrapper::active() || table().active.load(std::memory_order_acquire) == 0)
    return PMPI_Testany(count, requests, index, flag, status);
  const InsideWrapper inside;
  return guarded("MPI_Testany", [&] { return test_any(count, requests, index, flag, status); });
}

extern "C" int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (InsideWrapper::active() || table().active.load(std::memory_order_acquire) == 0)
    return PMPI_Waitany(count, requests, index, status);
  const InsideWrapper inside;
  return guarded("MPI_Waitany", [&] {
    for (;;) {
      if (table().active.load(std::memory_order_acquire) == 0) return PMPI_Waitany(count, requests, index, status);
      int flag = 0;
      const int rc = test_any(count, requests, index, &flag, status);
      if (rc != MPI_SUCCESS || flag) return rc;
    }
  });
}

extern "C" int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  if (InsideWrapper::active() || table().active.load(std::memory_order_acquire) == 0)
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  const InsideWrapper inside;
  return guarded("MPI_Testsome", [&] { return test_some(incount, requests, outcount, indices, statuses); });
}

extern "C" int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  if (InsideWrapper::active() || table().active.load(std::memory_order_acquire) == 0)
    return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  const InsideWrapper inside;
  return guarded("MPI_Waitsome", [&] {
    for (;;) {
      if (table().active.load(std::memory_order_acquire) == 0)
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
      const int rc = test_some(incount, requests, outcount, indices, statuses);
      if (rc != MPI_SUCCESS || *outcount != 0) return rc;
    }
  });
}

extern "C" int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (InsideWrapper::active() || table().active.load(std::memory_order_acquire) == 0)
    return PMPI_Request_get_status(request, flag, status);
  const InsideWrapper inside;
  return guarded("MPI_Request_get_status", [&] {
    table().progress_all();
    if (table().running_one(request)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    return PMPI_Request_get_status(request, flag, status);
  });
}

// ---- Persistent requests: start and free ----------------------------------------------------

extern "C" int MPI_Start(MPI_Request* request) {
  if (InsideWrapper::active() || table().handed_out.load(std::memory_order_acquire) == 0)
    return PMPI_Start(request);
  const InsideWrapper inside;
  PendingCollective* p = table().find(*request);
  if (p == nullptr || !p->persistent()) return PMPI_Start(request);
  return guarded("MPI_Start", [&] {
    if (table().running_one(*request)) {
      std::fprintf(stderr, "libcomm_mpi: MPI_Start: the persistent %.*s is still running (start it again only "
                   "after MPI_Wait or MPI_Test has completed it)\n", static_cast<int>(p->op().size()), p->op().data());
      PMPI_Comm_call_errhandler(p->comm(), MPI_ERR_REQUEST);
      return MPI_ERR_REQUEST;
    }
    if (p->pack) p->pack();
    p->plan.start(p->send, p->recv);
    table().activate(p);
    return PMPI_Start(request);  // the proxy: MPI_Wait leaves it inactive, as MPI wants
  });
}

extern "C" int MPI_Startall(int count, MPI_Request requests[]) {
  if (InsideWrapper::active() || table().handed_out.load(std::memory_order_acquire) == 0)
    return PMPI_Startall(count, requests);
  for (int k = 0; k < count; ++k)
    if (const int rc = MPI_Start(&requests[k]); rc != MPI_SUCCESS) return rc;
  return MPI_SUCCESS;
}

extern "C" int MPI_Request_free(MPI_Request* request) {
  if (InsideWrapper::active() || table().handed_out.load(std::memory_order_acquire) == 0)
    return PMPI_Request_free(request);
  const InsideWrapper inside;
  PendingCollective* p = table().find(*request);
  if (p == nullptr) return PMPI_Request_free(request);
  return guarded("MPI_Request_free", [&] {
    // MPI lets a running request be freed; its buffers must then stay untouched until it
    // completes. This library completes it here, so that nothing runs behind the program's
    // back afterwards.
    table().complete(p);
    if (p->persistent()) {
      table().forget(p);
      return PMPI_Request_free(request);
    }
    return PMPI_Request_free(request);  // the generalized request's free callback forgets it
  });
}
