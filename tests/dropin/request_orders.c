/* Ranks that handle their requests in different orders, as MPI allows: even ranks complete
 * each non-blocking collective before starting the next, odd ranks keep two in flight and
 * complete them in reverse; persistent requests are freed in one order on even ranks and
 * in the other on odd ranks. Every result is compared with the MPI library's. Run it
 * preloaded with every algorithm forced in turn (the shared-window ones build plans
 * collectively: a rank that rebuilt a plan its peer reused hung, issue 38).
 *   request_orders [ROUNDS]   (default 5) */
#include <dlfcn.h>
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_<op>_init
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrong = 0, rank = 0, p = 1;

static void expect_gathered(const int* got, int base, const char* what) {
  for (int r = 0; r < p; ++r)
    if (got[r] != base + r) {
      fprintf(stderr, "request_orders: rank %d: %s: block %d is %d, expected %d\n", rank, what, r, got[r], base + r);
      wrong = 1;
      return;
    }
}

static void expect_alltoall(const int* got, int base, const char* what) {
  for (int r = 0; r < p; ++r)
    if (got[r] != base + r * 100 + rank) {
      fprintf(stderr, "request_orders: rank %d: %s: block %d is %d, expected %d\n", rank, what, r, got[r],
              base + r * 100 + rank);
      wrong = 1;
      return;
    }
}

int main(int argc, char** argv) {
  if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    printf("usage: request_orders [ROUNDS]\n  non-blocking and persistent MPI_Allgather / MPI_Alltoall completed and freed\n"
           "  in different orders on even and odd ranks; exit 0 when every result is MPI's\n");
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int rounds = argc > 1 ? atoi(argv[1]) : 5;
  int* got[2];
  int* send[2];
  for (int k = 0; k < 2; ++k) {
    got[k] = malloc(sizeof(int) * (size_t)p);
    send[k] = malloc(sizeof(int) * (size_t)p);
  }
  for (int round = 0; round < rounds; ++round) {
    MPI_Request q[2];
    /* Non-blocking all-gathers: one at a time on even ranks, two in flight on odd ones. */
    int mine[2] = {rank + 1000 * round, rank + 1000 * round + 500};
    if (rank % 2 == 0) {
      for (int k = 0; k < 2; ++k) {
        MPI_Iallgather(&mine[k], 1, MPI_INT, got[k], 1, MPI_INT, MPI_COMM_WORLD, &q[k]);
        MPI_Wait(&q[k], MPI_STATUS_IGNORE);
      }
    } else {
      for (int k = 0; k < 2; ++k) MPI_Iallgather(&mine[k], 1, MPI_INT, got[k], 1, MPI_INT, MPI_COMM_WORLD, &q[k]);
      MPI_Wait(&q[1], MPI_STATUS_IGNORE);
      MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    }
    expect_gathered(got[0], 1000 * round, "MPI_Iallgather 1");
    expect_gathered(got[1], 1000 * round + 500, "MPI_Iallgather 2");
    /* Non-blocking all-to-alls, the same orders. */
    for (int k = 0; k < 2; ++k)
      for (int r = 0; r < p; ++r) send[k][r] = 1000 * round + 500 * k + rank * 100 + r;
    if (rank % 2 == 0) {
      for (int k = 0; k < 2; ++k) {
        MPI_Ialltoall(send[k], 1, MPI_INT, got[k], 1, MPI_INT, MPI_COMM_WORLD, &q[k]);
        MPI_Wait(&q[k], MPI_STATUS_IGNORE);
      }
    } else {
      for (int k = 0; k < 2; ++k) MPI_Ialltoall(send[k], 1, MPI_INT, got[k], 1, MPI_INT, MPI_COMM_WORLD, &q[k]);
      MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    }
    expect_alltoall(got[0], 1000 * round, "MPI_Ialltoall 1");
    expect_alltoall(got[1], 1000 * round + 500, "MPI_Ialltoall 2");
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
    /* Persistent all-gathers, started twice, freed in opposite orders. */
    for (int k = 0; k < 2; ++k)
      MPIX_Allgather_init(&mine[k], 1, MPI_INT, got[k], 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q[k]);
    for (int start = 0; start < 2; ++start) {
      MPI_Startall(2, q);
      MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
      expect_gathered(got[0], 1000 * round, "MPIX_Allgather_init 1");
      expect_gathered(got[1], 1000 * round + 500, "MPIX_Allgather_init 2");
    }
    if (rank % 2 == 0) {
      MPI_Request_free(&q[0]);
      MPI_Request_free(&q[1]);
    } else {
      MPI_Request_free(&q[1]);
      MPI_Request_free(&q[0]);
    }
#endif
  }
  int any = 0;
  PMPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const char* (*route)(void) = (const char* (*)(void))dlsym(RTLD_DEFAULT, "libcomm_mpi_last_route");
  if (rank == 0)
    printf("request_orders: %s (%d rounds on %d ranks; last route %s)\n", any ? "FAIL" : "PASS", rounds, p,
           route ? route() : "(libcomm_mpi not loaded)");
  for (int k = 0; k < 2; ++k) {
    free(got[k]);
    free(send[k]);
  }
  MPI_Finalize();
  return any ? 1 : 0;
}
