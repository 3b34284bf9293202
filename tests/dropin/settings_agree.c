/* The drop-in under settings that differ between ranks (tests/dropin/settings_agree.sh
 * launches it MPMD, one rank with other LIBCOMM_* variables or another tuning table): every
 * call must still give MPI's result, on MPI_COMM_WORLD and on a communicator made later,
 * and the program must end (no hang, no MPI_ERR_TRUNCATE). Prints the route of the last
 * MPI_Alltoall on rank 0 (libcomm_mpi_last_route) so that the script can tell whether libcomm or
 * the MPI library ran it.
 *   settings_agree [CALLS]     (default 200 MPI_Alltoall and MPI_Allgather calls of 64 ints) */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* last_route(void) {
  const char* (*fn)(void) = (const char* (*)(void))dlsym(RTLD_DEFAULT, "libcomm_mpi_last_route");
  return fn == NULL ? "(libcomm_mpi not loaded)" : fn();
}

/* `calls` all-to-alls and all-gathers on comm, each compared with the MPI library's own. */
static int exchange(MPI_Comm comm, int calls, const char* what) {
  int rank = 0, p = 1, wrong = 0;
  char route[64] = "";
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const int n = 64;
  int* send = malloc(sizeof(int) * (size_t)(n * p));
  int* got = malloc(sizeof(int) * (size_t)(n * p));
  int* want = malloc(sizeof(int) * (size_t)(n * p));
  for (int c = 0; c < calls && !wrong; ++c) {
    for (int k = 0; k < n * p; ++k) send[k] = rank * 100000 + c * 1000 + k;
    MPI_Alltoall(send, n, MPI_INT, got, n, MPI_INT, comm);
    snprintf(route, sizeof route, "%s", last_route());
    PMPI_Alltoall(send, n, MPI_INT, want, n, MPI_INT, comm);
    if (memcmp(got, want, sizeof(int) * (size_t)(n * p)) != 0) wrong = 1;
    MPI_Allgather(send, n, MPI_INT, got, n, MPI_INT, comm);
    PMPI_Allgather(send, n, MPI_INT, want, n, MPI_INT, comm);
    if (memcmp(got, want, sizeof(int) * (size_t)(n * p)) != 0) wrong = 2;
  }
  if (wrong) fprintf(stderr, "settings_agree: rank %d: %s: MPI_%s differs from MPI's result\n", rank, what,
                     wrong == 1 ? "Alltoall" : "Allgather");
  if (rank == 0) printf("settings_agree: %s: MPI_Alltoall ran %s\n", what, route);
  free(send);
  free(got);
  free(want);
  return wrong;
}

int main(int argc, char** argv) {
  if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    printf("usage: settings_agree [CALLS]\n  CALLS MPI_Alltoall and MPI_Allgather calls of 64 ints on MPI_COMM_WORLD and on\n"
           "  a duplicate, each compared with PMPI's; run preloaded, MPMD with different settings.\n");
    return 0;
  }
  MPI_Init(&argc, &argv);
  const int calls = argc > 1 ? atoi(argv[1]) : 200;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int wrong = exchange(MPI_COMM_WORLD, calls, "world");
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  wrong |= exchange(dup, calls, "dup");
  MPI_Comm_free(&dup);
  int any = 0;
  PMPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("settings_agree: %s\n", any ? "FAIL" : "PASS");
  MPI_Finalize();
  return any ? 1 : 0;
}
