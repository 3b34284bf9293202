/* libcomm_mpi: the drop-in library that routes MPI_Alltoall, MPI_Alltoallv,
 * MPI_Allgather, MPI_Allgatherv, MPI_Reduce_scatter and MPI_Reduce_scatter_block through
 * libcomm (MPI profiling interface). A program needs nothing from this header to use the
 * library; it is for programs and tests that want to see what the library did.
 *
 * Look the function up with dlsym(RTLD_DEFAULT, "libcomm_mpi_last_route") when the
 * library may or may not be preloaded. */
#ifndef LIBCOMM_MPI_H
#define LIBCOMM_MPI_H

#ifdef __cplusplus
extern "C" {
#endif

/* What the last intercepted call on the calling thread ran: a libcomm algorithm name
 * ("factor", "bruck", "ring", ...) or "pmpi" when it fell back to the MPI library's own
 * collective. "" before the first call. The string stays valid until the thread's next
 * intercepted call. */
const char* libcomm_mpi_last_route(void);

#ifdef __cplusplus
}
#endif

#endif
