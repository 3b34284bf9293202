/* libcomm_mpi: the drop-in library that routes MPI_Alltoall, MPI_Alltoallv,
 * MPI_Allgather, MPI_Allgatherv, MPI_Reduce_scatter and MPI_Reduce_scatter_block through
 * libcomm (MPI profiling interface). A program needs nothing from this header to use the
 * library; it is for programs and tests that want to see what the library did.
 *
 * Look the function up with dlsym(RTLD_DEFAULT, "libcomm_mpi_last_route") when the
 * library may or may not be preloaded. */
#ifndef LIBCOMM_MPI_H
#define LIBCOMM_MPI_H

#if defined(__GNUC__)
#define LIBCOMM_MPI_API __attribute__((visibility("default")))
#else
#define LIBCOMM_MPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What the last intercepted call on the calling thread ran: a libcomm algorithm name
 * ("factor", "bruck", "ring", ...) or "pmpi" when it fell back to the MPI library's own
 * collective. "" before the first call. The string stays valid until the thread's next
 * intercepted call. */
LIBCOMM_MPI_API const char* libcomm_mpi_last_route(void);

/* The library reads its environment (LIBCOMM_ALLTOALL, LIBCOMM_ALLTOALLV,
 * LIBCOMM_ALLGATHER, LIBCOMM_REDUCE_SCATTER, LIBCOMM_VERBOSE, LIBCOMM_CHECK_ARGS,
 * LIBCOMM_CHECK) once, at the first intercepted call. A program that changes those
 * variables later and wants the change to count calls this, on every rank, between
 * collectives (no intercepted call may run meanwhile on any thread). */
LIBCOMM_MPI_API void libcomm_mpi_reload_environment(void);

#ifdef __cplusplus
}
#endif

#endif
