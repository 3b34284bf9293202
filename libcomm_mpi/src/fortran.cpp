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

extern "C" {
// Open MPI's Fortran sentinels: MPI_IN_PLACE and MPI_BOTTOM are these common blocks.
extern int mpi_fortran_in_place_;
extern int mpi_fortran_bottom_;
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

MPI_Comm comm_of(const MPI_Fint* c) { return PMPI_Comm_f2c(*c); }
MPI_Datatype type_of(const MPI_Fint* t) { return PMPI_Type_f2c(*t); }

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

#undef LIBCOMM_FORTRAN_NAMES

}  // extern "C"
