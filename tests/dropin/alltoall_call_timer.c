/* A preload library that times every MPI_Alltoall of a program and, at MPI_Finalize, prints
 * on rank 0 of MPI_COMM_WORLD one line per call of at least MIN bytes per block
 * (ALLTOALL_TIMER_MIN, default 16384): its index, block size and time in microseconds.
 * It calls the next MPI_Alltoall in the search order (dlsym RTLD_NEXT), so preloaded ahead
 * of libcomm_mpi.so it times libcomm's call, alone it times the MPI library's:
 *   mpiexec -n 2 env LD_PRELOAD=liballtoall_call_timer.so[:libcomm_mpi.so] ./app
 * scripts/reproduce/dropin_apps.sh uses it on hpcc's MPIFFT. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kMaxCalls = 100000 };
static double seconds[kMaxCalls];
static long long block_bytes[kMaxCalls];
static int calls;
static __thread int depth;

typedef int (*AlltoallFn)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);

int MPI_Alltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm comm) {
  static AlltoallFn next;
  if (next == NULL) next = (AlltoallFn)dlsym(RTLD_NEXT, "MPI_Alltoall");
  /* A call made from inside another (libcomm's native algorithm calls MPI_Alltoall, which
     the dynamic linker resolves to this wrapper again) is part of that call: only the
     outermost calls are timed and counted, the program's own. */
  if (depth > 0) return next(s, sc, st, r, rc, rt, comm);
  ++depth;
  const double t0 = PMPI_Wtime();
  const int rv = next(s, sc, st, r, rc, rt, comm);
  --depth;
  if (calls < kMaxCalls) {
    int size = 0;
    PMPI_Type_size(st, &size);
    seconds[calls] = PMPI_Wtime() - t0;
    block_bytes[calls] = (long long)sc * size;
  }
  ++calls;
  return rv;
}

int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* min_env = getenv("ALLTOALL_TIMER_MIN");
  const long long min = min_env != NULL ? atoll(min_env) : 16384;
  if (rank == 0) {
    for (int k = 0; k < calls && k < kMaxCalls; ++k)
      if (block_bytes[k] >= min)
        fprintf(stderr, "alltoall_call_timer: call %d: %lld B blocks: %.1f us\n", k, block_bytes[k], seconds[k] * 1e6);
    fprintf(stderr, "alltoall_call_timer: %d MPI_Alltoall calls\n", calls);
  }
  return PMPI_Finalize();
}
