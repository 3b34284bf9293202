// The Fortran bindings of the six intercepted collectives. Open MPI's own Fortran layer
// calls PMPI_* directly, so a Fortran program's calls never reach the C functions this
// library defines: these definitions take the Fortran entry points themselves.
//  - mpif.h / `use mpi`: every spelling gfortran and other compilers emit (mpi_alltoall_,
//    mpi_alltoall__, mpi_alltoall, MPI_ALLTOALL), all arguments by reference, the error
//    code in the last one;
//  - `use mpi_f08`: Open MPI's mpi_alltoall_f08_ & co., the same arguments (a
//    TYPE(MPI_Comm) is its one integer), IERROR optional (a null pointer when absent).
// Handles are converted with MPI_*_f2c, Fortran's MPI_IN_PLACE and MPI_BOTTOM sentinels
// (addresses of Open MPI's common blocks) become the C ones, and the C function runs: libcomm
// or, for what it cannot take, the MPI library's own collective, exactly as for C.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <algorithm>
#include <vector>

extern "C" {
// Open MPI's Fortran sentinels: MPI_IN_PLACE and MPI_BOTTOM are these common blocks.
extern int mpi_fortran_in_place_;
extern int mpi_fortran_bottom_;
extern int mpi_fortran_status_ignore_;
extern int mpi_fortran_statuses_ignore_;
}

namespace {

const void* c_buffer(const void* f) {
  if (f == static_cast<const void*>(&mpi_fortran_in_place_)) return MPI_IN_PLACE;
  if (f == static_cast<const void*>(&mpi_fortran_bottom_)) return MPI_BOTTOM;
  return f;
}
void* c_buffer(void* f) { return const_cast<void*>(c_buffer(static_cast<const void*>(f))); }

void set_error(MPI_Fint* ierror, int rc) {
  if (ierror != nullptr) *ierror = static_cast<MPI_Fint>(rc);
}

bool ignored(const MPI_Fint* status) {
  return status == nullptr || static_cast<const void*>(status) == static_cast<const void*>(&mpi_fortran_status_ignore_);
}
bool ignored_all(const MPI_Fint* statuses) {
  return statuses == nullptr ||
         static_cast<const void*>(statuses) == static_cast<const void*>(&mpi_fortran_statuses_ignore_);
}

MPI_Comm comm_of(const MPI_Fint* c) { return PMPI_Comm_f2c(*c); }
MPI_Datatype type_of(const MPI_Fint* t) { return PMPI_Type_f2c(*t); }

// Fortran's MPI_STATUS_SIZE: Open MPI's C status is that many Fortran integers (6).
#ifdef MPI_F_STATUS_SIZE
constexpr std::size_t kStatusInts = MPI_F_STATUS_SIZE;
#else
constexpr std::size_t kStatusInts = sizeof(MPI_Status) / sizeof(MPI_Fint);
#endif

void set_request(MPI_Fint* out, MPI_Request r) { *out = PMPI_Request_c2f(r); }

// An array call: the Fortran handles as C ones, and back.
struct Requests {
  std::vector<MPI_Request> c;
  std::vector<MPI_Status> statuses;
  Requests(int n, const MPI_Fint* f, bool want_statuses)
      : c(static_cast<std::size_t>(std::max(n, 0))), statuses(want_statuses ? c.size() : 0) {
    for (std::size_t k = 0; k < c.size(); ++k) c[k] = PMPI_Request_f2c(f[k]);
  }
  MPI_Status* status_array() { return statuses.empty() ? MPI_STATUSES_IGNORE : statuses.data(); }
  void back(MPI_Fint* f) const {
    for (std::size_t k = 0; k < c.size(); ++k) f[k] = PMPI_Request_c2f(c[k]);
  }
  // Status k of the C array into status j of the Fortran array.
  void status_back(std::size_t k, MPI_Fint* f_statuses, std::size_t j) {
    PMPI_Status_c2f(&statuses[k], f_statuses + j * kStatusInts);
  }
};

// Waitsome and Testsome: `wait` picks the one.
void some(bool wait, MPI_Fint* incount, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices,
          MPI_Fint* statuses, MPI_Fint* ierror) {
  Requests r(*incount, requests, !ignored_all(statuses));
  std::vector<int> idx(r.c.size());
  int out = 0;
  set_error(ierror, wait ? MPI_Waitsome(*incount, r.c.data(), &out, idx.data(), r.status_array())
                         : MPI_Testsome(*incount, r.c.data(), &out, idx.data(), r.status_array()));
  r.back(requests);
  *outcount = out;
  if (out == MPI_UNDEFINED) return;
  for (int k = 0; k < out; ++k) {
    indices[k] = idx[static_cast<std::size_t>(k)] + 1;
    if (!ignored_all(statuses)) r.status_back(static_cast<std::size_t>(k), statuses, static_cast<std::size_t>(k));
  }
}

}  // namespace

extern "C" {

// The implementations (hidden); the exported spellings below are aliases of them.
__attribute__((visibility("hidden"))) void libcomm_f_alltoall(void* sbuf, MPI_Fint* scount, MPI_Fint* stype,
                                                              void* rbuf, MPI_Fint* rcount, MPI_Fint* rtype,
                                                              MPI_Fint* comm, MPI_Fint* ierror) {
  set_error(ierror, MPI_Alltoall(c_buffer(sbuf), *scount, type_of(stype), c_buffer(rbuf), *rcount,
                                 type_of(rtype), comm_of(comm)));
}

__attribute__((visibility("hidden"))) void libcomm_f_alltoallv(void* sbuf, MPI_Fint* scounts, MPI_Fint* sdispls,
                                                               MPI_Fint* stype, void* rbuf, MPI_Fint* rcounts,
                                                               MPI_Fint* rdispls, MPI_Fint* rtype, MPI_Fint* comm,
                                                               MPI_Fint* ierror) {
  static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed as C int arrays");
  set_error(ierror, MPI_Alltoallv(c_buffer(sbuf), scounts, sdispls, type_of(stype), c_buffer(rbuf), rcounts,
                                  rdispls, type_of(rtype), comm_of(comm)));
}

__attribute__((visibility("hidden"))) void libcomm_f_allgather(void* sbuf, MPI_Fint* scount, MPI_Fint* stype,
                                                               void* rbuf, MPI_Fint* rcount, MPI_Fint* rtype,
                                                               MPI_Fint* comm, MPI_Fint* ierror) {
  set_error(ierror, MPI_Allgather(c_buffer(sbuf), *scount, type_of(stype), c_buffer(rbuf), *rcount,
                                  type_of(rtype), comm_of(comm)));
}

__attribute__((visibility("hidden"))) void libcomm_f_allgatherv(void* sbuf, MPI_Fint* scount, MPI_Fint* stype,
                                                                void* rbuf, MPI_Fint* rcounts, MPI_Fint* displs,
                                                                MPI_Fint* rtype, MPI_Fint* comm, MPI_Fint* ierror) {
  set_error(ierror, MPI_Allgatherv(c_buffer(sbuf), *scount, type_of(stype), c_buffer(rbuf), rcounts, displs,
                                   type_of(rtype), comm_of(comm)));
}

__attribute__((visibility("hidden"))) void libcomm_f_reduce_scatter(void* sbuf, void* rbuf, MPI_Fint* rcounts,
                                                                    MPI_Fint* type, MPI_Fint* op, MPI_Fint* comm,
                                                                    MPI_Fint* ierror) {
  set_error(ierror, MPI_Reduce_scatter(c_buffer(sbuf), c_buffer(rbuf), rcounts, type_of(type), PMPI_Op_f2c(*op),
                                       comm_of(comm)));
}

__attribute__((visibility("hidden"))) void libcomm_f_reduce_scatter_block(void* sbuf, void* rbuf, MPI_Fint* rcount,
                                                                          MPI_Fint* type, MPI_Fint* op,
                                                                          MPI_Fint* comm, MPI_Fint* ierror) {
  set_error(ierror, MPI_Reduce_scatter_block(c_buffer(sbuf), c_buffer(rbuf), *rcount, type_of(type),
                                             PMPI_Op_f2c(*op), comm_of(comm)));
}

__attribute__((visibility("hidden"))) void libcomm_f_ialltoall(void* sbuf, MPI_Fint* scount, MPI_Fint* stype,
                                                               void* rbuf, MPI_Fint* rcount, MPI_Fint* rtype,
                                                               MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPI_Ialltoall(c_buffer(sbuf), *scount, type_of(stype), c_buffer(rbuf), *rcount, type_of(rtype),
                                  comm_of(comm), &r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_ialltoallv(void* sbuf, MPI_Fint* scounts, MPI_Fint* sdispls,
                                                                MPI_Fint* stype, void* rbuf, MPI_Fint* rcounts,
                                                                MPI_Fint* rdispls, MPI_Fint* rtype, MPI_Fint* comm,
                                                                MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPI_Ialltoallv(c_buffer(sbuf), scounts, sdispls, type_of(stype), c_buffer(rbuf), rcounts,
                                   rdispls, type_of(rtype), comm_of(comm), &r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_iallgather(void* sbuf, MPI_Fint* scount, MPI_Fint* stype,
                                                                void* rbuf, MPI_Fint* rcount, MPI_Fint* rtype,
                                                                MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPI_Iallgather(c_buffer(sbuf), *scount, type_of(stype), c_buffer(rbuf), *rcount,
                                   type_of(rtype), comm_of(comm), &r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_iallgatherv(void* sbuf, MPI_Fint* scount, MPI_Fint* stype,
                                                                 void* rbuf, MPI_Fint* rcounts, MPI_Fint* displs,
                                                                 MPI_Fint* rtype, MPI_Fint* comm, MPI_Fint* request,
                                                                 MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPI_Iallgatherv(c_buffer(sbuf), *scount, type_of(stype), c_buffer(rbuf), rcounts, displs,
                                    type_of(rtype), comm_of(comm), &r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_ireduce_scatter(void* sbuf, void* rbuf, MPI_Fint* rcounts,
                                                                     MPI_Fint* type, MPI_Fint* op, MPI_Fint* comm,
                                                                     MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPI_Ireduce_scatter(c_buffer(sbuf), c_buffer(rbuf), rcounts, type_of(type), PMPI_Op_f2c(*op),
                                        comm_of(comm), &r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_ireduce_scatter_block(void* sbuf, void* rbuf, MPI_Fint* rcount,
                                                                           MPI_Fint* type, MPI_Fint* op,
                                                                           MPI_Fint* comm, MPI_Fint* request,
                                                                           MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPI_Ireduce_scatter_block(c_buffer(sbuf), c_buffer(rbuf), *rcount, type_of(type),
                                              PMPI_Op_f2c(*op), comm_of(comm), &r));
  set_request(request, r);
}

#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
// The persistent forms (Open MPI's MPIX_<op>_init, the same arguments and an info).
__attribute__((visibility("hidden"))) void libcomm_f_alltoall_init(void* sbuf, MPI_Fint* scount, MPI_Fint* stype,
                                                                   void* rbuf, MPI_Fint* rcount, MPI_Fint* rtype,
                                                                   MPI_Fint* comm, MPI_Fint* info, MPI_Fint* request,
                                                                   MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPIX_Alltoall_init(c_buffer(sbuf), *scount, type_of(stype), c_buffer(rbuf), *rcount,
                                       type_of(rtype), comm_of(comm), PMPI_Info_f2c(*info), &r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_alltoallv_init(void* sbuf, MPI_Fint* scounts, MPI_Fint* sdispls,
                                                                    MPI_Fint* stype, void* rbuf, MPI_Fint* rcounts,
                                                                    MPI_Fint* rdispls, MPI_Fint* rtype,
                                                                    MPI_Fint* comm, MPI_Fint* info,
                                                                    MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPIX_Alltoallv_init(c_buffer(sbuf), scounts, sdispls, type_of(stype), c_buffer(rbuf), rcounts,
                                        rdispls, type_of(rtype), comm_of(comm), PMPI_Info_f2c(*info), &r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_allgather_init(void* sbuf, MPI_Fint* scount, MPI_Fint* stype,
                                                                    void* rbuf, MPI_Fint* rcount, MPI_Fint* rtype,
                                                                    MPI_Fint* comm, MPI_Fint* info,
                                                                    MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPIX_Allgather_init(c_buffer(sbuf), *scount, type_of(stype), c_buffer(rbuf), *rcount,
                                        type_of(rtype), comm_of(comm), PMPI_Info_f2c(*info), &r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_allgatherv_init(void* sbuf, MPI_Fint* scount, MPI_Fint* stype,
                                                                     void* rbuf, MPI_Fint* rcounts, MPI_Fint* displs,
                                                                     MPI_Fint* rtype, MPI_Fint* comm, MPI_Fint* info,
                                                                     MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPIX_Allgatherv_init(c_buffer(sbuf), *scount, type_of(stype), c_buffer(rbuf), rcounts, displs,
                                         type_of(rtype), comm_of(comm), PMPI_Info_f2c(*info), &r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_reduce_scatter_init(void* sbuf, void* rbuf, MPI_Fint* rcounts,
                                                                         MPI_Fint* type, MPI_Fint* op,
                                                                         MPI_Fint* comm, MPI_Fint* info,
                                                                         MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPIX_Reduce_scatter_init(c_buffer(sbuf), c_buffer(rbuf), rcounts, type_of(type),
                                             PMPI_Op_f2c(*op), comm_of(comm), PMPI_Info_f2c(*info), &r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_reduce_scatter_block_init(void* sbuf, void* rbuf,
                                                                               MPI_Fint* rcount, MPI_Fint* type,
                                                                               MPI_Fint* op, MPI_Fint* comm,
                                                                               MPI_Fint* info, MPI_Fint* request,
                                                                               MPI_Fint* ierror) {
  MPI_Request r = MPI_REQUEST_NULL;
  set_error(ierror, MPIX_Reduce_scatter_block_init(c_buffer(sbuf), c_buffer(rbuf), *rcount, type_of(type),
                                                   PMPI_Op_f2c(*op), comm_of(comm), PMPI_Info_f2c(*info), &r));
  set_request(request, r);
}
#endif

// MPI_INIT and MPI_INIT_THREAD (Open MPI's Fortran ones call PMPI_Init*): through the C
// functions, which also make libcomm's state for MPI_COMM_WORLD.
__attribute__((visibility("hidden"))) void libcomm_f_init(MPI_Fint* ierror) {
  set_error(ierror, MPI_Init(nullptr, nullptr));
}

__attribute__((visibility("hidden"))) void libcomm_f_init_thread(MPI_Fint* required, MPI_Fint* provided,
                                                                 MPI_Fint* ierror) {
  int got = MPI_THREAD_SINGLE;
  set_error(ierror, MPI_Init_thread(nullptr, nullptr, *required, &got));
  *provided = got;
}

// The calls that complete requests (requests.hpp): Open MPI's Fortran MPI_WAIT & co. call
// PMPI_Wait directly, so without these a Fortran program's collectives would never be
// progressed. Statuses are Fortran integer arrays (TYPE(MPI_Status) in mpi_f08 has the same
// layout in Open MPI), MPI_STATUS(ES)_IGNORE the common blocks below, indices 1-based.
__attribute__((visibility("hidden"))) void libcomm_f_wait(MPI_Fint* request, MPI_Fint* status, MPI_Fint* ierror) {
  MPI_Request r = PMPI_Request_f2c(*request);
  MPI_Status s;
  set_error(ierror, MPI_Wait(&r, ignored(status) ? MPI_STATUS_IGNORE : &s));
  set_request(request, r);
  if (!ignored(status)) PMPI_Status_c2f(&s, status);
}

__attribute__((visibility("hidden"))) void libcomm_f_test(MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status,
                                                          MPI_Fint* ierror) {
  MPI_Request r = PMPI_Request_f2c(*request);
  MPI_Status s;
  int f = 0;
  set_error(ierror, MPI_Test(&r, &f, ignored(status) ? MPI_STATUS_IGNORE : &s));
  *flag = f;  // Fortran .TRUE. is 1 with gfortran and Open MPI's default
  set_request(request, r);
  if (f && !ignored(status)) PMPI_Status_c2f(&s, status);
}

__attribute__((visibility("hidden"))) void libcomm_f_request_get_status(MPI_Fint* request, MPI_Fint* flag,
                                                                        MPI_Fint* status, MPI_Fint* ierror) {
  MPI_Status s;
  int f = 0;
  set_error(ierror, MPI_Request_get_status(PMPI_Request_f2c(*request), &f, ignored(status) ? MPI_STATUS_IGNORE : &s));
  *flag = f;
  if (f && !ignored(status)) PMPI_Status_c2f(&s, status);
}

__attribute__((visibility("hidden"))) void libcomm_f_waitall(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* statuses,
                                                             MPI_Fint* ierror) {
  Requests r(*count, requests, !ignored_all(statuses));
  set_error(ierror, MPI_Waitall(*count, r.c.data(), r.status_array()));
  r.back(requests);
  if (!ignored_all(statuses))
    for (std::size_t k = 0; k < r.c.size(); ++k) r.status_back(k, statuses, k);
}

__attribute__((visibility("hidden"))) void libcomm_f_testall(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* flag,
                                                             MPI_Fint* statuses, MPI_Fint* ierror) {
  Requests r(*count, requests, !ignored_all(statuses));
  int f = 0;
  set_error(ierror, MPI_Testall(*count, r.c.data(), &f, r.status_array()));
  *flag = f;
  r.back(requests);
  if (f && !ignored_all(statuses))
    for (std::size_t k = 0; k < r.c.size(); ++k) r.status_back(k, statuses, k);
}

__attribute__((visibility("hidden"))) void libcomm_f_waitany(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index,
                                                             MPI_Fint* status, MPI_Fint* ierror) {
  Requests r(*count, requests, false);
  MPI_Status s;
  int i = MPI_UNDEFINED;
  set_error(ierror, MPI_Waitany(*count, r.c.data(), &i, ignored(status) ? MPI_STATUS_IGNORE : &s));
  r.back(requests);
  *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
  if (i != MPI_UNDEFINED && !ignored(status)) PMPI_Status_c2f(&s, status);
}

__attribute__((visibility("hidden"))) void libcomm_f_testany(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index,
                                                             MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierror) {
  Requests r(*count, requests, false);
  MPI_Status s;
  int i = MPI_UNDEFINED, f = 0;
  set_error(ierror, MPI_Testany(*count, r.c.data(), &i, &f, ignored(status) ? MPI_STATUS_IGNORE : &s));
  r.back(requests);
  *flag = f;
  *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
  if (f && i != MPI_UNDEFINED && !ignored(status)) PMPI_Status_c2f(&s, status);
}

__attribute__((visibility("hidden"))) void libcomm_f_waitsome(MPI_Fint* incount, MPI_Fint* requests,
                                                              MPI_Fint* outcount, MPI_Fint* indices,
                                                              MPI_Fint* statuses, MPI_Fint* ierror) {
  some(true, incount, requests, outcount, indices, statuses, ierror);
}

__attribute__((visibility("hidden"))) void libcomm_f_testsome(MPI_Fint* incount, MPI_Fint* requests,
                                                              MPI_Fint* outcount, MPI_Fint* indices,
                                                              MPI_Fint* statuses, MPI_Fint* ierror) {
  some(false, incount, requests, outcount, indices, statuses, ierror);
}

__attribute__((visibility("hidden"))) void libcomm_f_start(MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = PMPI_Request_f2c(*request);
  set_error(ierror, MPI_Start(&r));
  set_request(request, r);
}

__attribute__((visibility("hidden"))) void libcomm_f_startall(MPI_Fint* count, MPI_Fint* requests,
                                                              MPI_Fint* ierror) {
  Requests r(*count, requests, false);
  set_error(ierror, MPI_Startall(*count, r.c.data()));
  r.back(requests);
}

__attribute__((visibility("hidden"))) void libcomm_f_request_free(MPI_Fint* request, MPI_Fint* ierror) {
  MPI_Request r = PMPI_Request_f2c(*request);
  set_error(ierror, MPI_Request_free(&r));
  set_request(request, r);
}

// Every spelling of every operation: mpif.h / use mpi (four), use mpi_f08 (one).
#define LIBCOMM_FORTRAN_NAMES(impl, lower, upper)                                        \
  decltype(impl) lower##_ __attribute__((alias(#impl), visibility("default")));           \
  decltype(impl) lower##__ __attribute__((alias(#impl), visibility("default")));          \
  decltype(impl) lower __attribute__((alias(#impl), visibility("default")));              \
  decltype(impl) upper __attribute__((alias(#impl), visibility("default")));              \
  decltype(impl) lower##_f08_ __attribute__((alias(#impl), visibility("default")));

LIBCOMM_FORTRAN_NAMES(libcomm_f_alltoall, mpi_alltoall, MPI_ALLTOALL)
LIBCOMM_FORTRAN_NAMES(libcomm_f_alltoallv, mpi_alltoallv, MPI_ALLTOALLV)
LIBCOMM_FORTRAN_NAMES(libcomm_f_allgather, mpi_allgather, MPI_ALLGATHER)
LIBCOMM_FORTRAN_NAMES(libcomm_f_allgatherv, mpi_allgatherv, MPI_ALLGATHERV)
LIBCOMM_FORTRAN_NAMES(libcomm_f_reduce_scatter, mpi_reduce_scatter, MPI_REDUCE_SCATTER)
LIBCOMM_FORTRAN_NAMES(libcomm_f_reduce_scatter_block, mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK)
LIBCOMM_FORTRAN_NAMES(libcomm_f_ialltoall, mpi_ialltoall, MPI_IALLTOALL)
LIBCOMM_FORTRAN_NAMES(libcomm_f_ialltoallv, mpi_ialltoallv, MPI_IALLTOALLV)
LIBCOMM_FORTRAN_NAMES(libcomm_f_iallgather, mpi_iallgather, MPI_IALLGATHER)
LIBCOMM_FORTRAN_NAMES(libcomm_f_iallgatherv, mpi_iallgatherv, MPI_IALLGATHERV)
LIBCOMM_FORTRAN_NAMES(libcomm_f_ireduce_scatter, mpi_ireduce_scatter, MPI_IREDUCE_SCATTER)
LIBCOMM_FORTRAN_NAMES(libcomm_f_ireduce_scatter_block, mpi_ireduce_scatter_block, MPI_IREDUCE_SCATTER_BLOCK)
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
LIBCOMM_FORTRAN_NAMES(libcomm_f_alltoall_init, mpix_alltoall_init, MPIX_ALLTOALL_INIT)
LIBCOMM_FORTRAN_NAMES(libcomm_f_alltoallv_init, mpix_alltoallv_init, MPIX_ALLTOALLV_INIT)
LIBCOMM_FORTRAN_NAMES(libcomm_f_allgather_init, mpix_allgather_init, MPIX_ALLGATHER_INIT)
LIBCOMM_FORTRAN_NAMES(libcomm_f_allgatherv_init, mpix_allgatherv_init, MPIX_ALLGATHERV_INIT)
LIBCOMM_FORTRAN_NAMES(libcomm_f_reduce_scatter_init, mpix_reduce_scatter_init, MPIX_REDUCE_SCATTER_INIT)
LIBCOMM_FORTRAN_NAMES(libcomm_f_reduce_scatter_block_init, mpix_reduce_scatter_block_init,
                      MPIX_REDUCE_SCATTER_BLOCK_INIT)
#endif
LIBCOMM_FORTRAN_NAMES(libcomm_f_init, mpi_init, MPI_INIT)
LIBCOMM_FORTRAN_NAMES(libcomm_f_init_thread, mpi_init_thread, MPI_INIT_THREAD)
LIBCOMM_FORTRAN_NAMES(libcomm_f_wait, mpi_wait, MPI_WAIT)
LIBCOMM_FORTRAN_NAMES(libcomm_f_test, mpi_test, MPI_TEST)
LIBCOMM_FORTRAN_NAMES(libcomm_f_waitall, mpi_waitall, MPI_WAITALL)
LIBCOMM_FORTRAN_NAMES(libcomm_f_testall, mpi_testall, MPI_TESTALL)
LIBCOMM_FORTRAN_NAMES(libcomm_f_waitany, mpi_waitany, MPI_WAITANY)
LIBCOMM_FORTRAN_NAMES(libcomm_f_testany, mpi_testany, MPI_TESTANY)
LIBCOMM_FORTRAN_NAMES(libcomm_f_waitsome, mpi_waitsome, MPI_WAITSOME)
LIBCOMM_FORTRAN_NAMES(libcomm_f_testsome, mpi_testsome, MPI_TESTSOME)
LIBCOMM_FORTRAN_NAMES(libcomm_f_request_get_status, mpi_request_get_status, MPI_REQUEST_GET_STATUS)
LIBCOMM_FORTRAN_NAMES(libcomm_f_start, mpi_start, MPI_START)
LIBCOMM_FORTRAN_NAMES(libcomm_f_startall, mpi_startall, MPI_STARTALL)
LIBCOMM_FORTRAN_NAMES(libcomm_f_request_free, mpi_request_free, MPI_REQUEST_FREE)

#undef LIBCOMM_FORTRAN_NAMES

}  // extern "C"
