/* The drop-in library's cost per call: N back-to-back MPI_Alltoall calls of BYTES-byte
 * blocks, the mean time per call on rank 0 (the median of 5 batches). Run it plain and
 * with LD_PRELOAD=libcomm_mpi.so and compare. A benchmark; a smoke run is in the suite.
 *   mpiexec -n P [env LD_PRELOAD=.../libcomm_mpi.so] dropin_call_cost [BYTES [N]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int bytes = argc > 1 ? atoi(argv[1]) : 8;
  const int n = argc > 2 ? atoi(argv[2]) : 100000;
  if (bytes < 0 || n <= 0) {
    if (rank == 0) fprintf(stderr, "dropin_call_cost: BYTES must be >= 0 and N > 0\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* send = calloc((size_t)bytes * p + 1, 1);
  char* recv = calloc((size_t)bytes * p + 1, 1);
  double batch[5];
  for (int b = 0; b < 5; ++b) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) MPI_Alltoall(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, MPI_COMM_WORLD);
    batch[b] = (MPI_Wtime() - t0) / n;
  }
  qsort(batch, 5, sizeof batch[0], by_value);
  if (rank == 0) printf("MPI_Alltoall, %d ranks, %d B blocks: %.0f ns per call\n", p, bytes, batch[2] * 1e9);
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
