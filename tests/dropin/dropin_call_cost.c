/* The drop-in library's cost per call, three ways, each the mean time per call on rank 0
 * (the median of 5 batches of N calls), after 400 untimed calls of each (under the drop-in's
 * default online policy a size class has then decided: what is timed is the decided
 * algorithm, whose name is printed):
 *  - MPI_Alltoall of BYTES-byte blocks, back to back;
 *  - MPI_Ialltoall + MPI_Wait of the same;
 *  - the program's own point-to-point requests (MPI_Irecv + MPI_Isend to the ring
 *    neighbours, MPI_Waitall), which the library's MPI_Waitall sees but must not slow down.
 * Run it plain and with LD_PRELOAD=libcomm_mpi.so and compare. A benchmark; a smoke run is
 * in the suite.
 *   mpiexec -n P [env LD_PRELOAD=.../libcomm_mpi.so] dropin_call_cost [BYTES [N]] */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

enum { kBlocking, kNonblocking, kPointToPoint };

static void call_once(int what, char* send, char* recv, int bytes, int p, int rank) {
  MPI_Request r[2];
  switch (what) {
    case kBlocking: MPI_Alltoall(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, MPI_COMM_WORLD); break;
    case kNonblocking:
      MPI_Ialltoall(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, MPI_COMM_WORLD, &r[0]);
      MPI_Wait(&r[0], MPI_STATUS_IGNORE);
      break;
    default:
      MPI_Irecv(recv, bytes, MPI_BYTE, (rank + p - 1) % p, 3, MPI_COMM_WORLD, &r[0]);
      MPI_Isend(send, bytes, MPI_BYTE, (rank + 1) % p, 3, MPI_COMM_WORLD, &r[1]);
      MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
}

static const char* last_route(void) {
  const char* (*fn)(void) = (const char* (*)(void))dlsym(RTLD_DEFAULT, "libcomm_mpi_last_route");
  return fn == NULL ? "(plain MPI)" : fn();
}

static double per_call(int what, char* send, char* recv, int bytes, int n, int p, int rank, char* route) {
  for (int i = 0; i < 400; ++i) call_once(what, send, recv, bytes, p, rank);
  snprintf(route, 64, "%s", last_route());
  double batch[5];
  for (int b = 0; b < 5; ++b) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) call_once(what, send, recv, bytes, p, rank);
    batch[b] = (MPI_Wtime() - t0) / n;
  }
  qsort(batch, 5, sizeof batch[0], by_value);
  return batch[2];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int bytes = argc > 1 ? atoi(argv[1]) : 8;
  const int n = argc > 2 ? atoi(argv[2]) : 100000;
  if (argc > 3 || bytes < 0 || n <= 0) {
    if (rank == 0)
      fprintf(stderr, "usage: dropin_call_cost [BYTES [N]]: BYTES (default 8) must be >= 0 and N (default 100000) > 0\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* send = calloc((size_t)bytes * p + 1, 1);
  char* recv = calloc((size_t)bytes * p + 1, 1);
  char route[2][64];
  const double blocking = per_call(kBlocking, send, recv, bytes, n, p, rank, route[0]);
  const double nonblocking = per_call(kNonblocking, send, recv, bytes, n, p, rank, route[1]);
  char unused[64];
  const double p2p = per_call(kPointToPoint, send, recv, bytes, n, p, rank, unused);
  if (rank == 0) {
    printf("MPI_Alltoall, %d ranks, %d B blocks: %.0f ns per call\n", p, bytes, blocking * 1e9);
    printf("MPI_Ialltoall + MPI_Wait, %d ranks, %d B blocks: %.0f ns per call\n", p, bytes, nonblocking * 1e9);
    printf("routes after the untimed calls: MPI_Alltoall %s, MPI_Ialltoall %s\n", route[0], route[1]);
    printf("MPI_Irecv + MPI_Isend + MPI_Waitall (the program's own), %d ranks, %d B: %.0f ns per call\n", p, bytes,
           p2p * 1e9);
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
