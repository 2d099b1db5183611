/* What the per-rank programs need from MPI beyond what upstream MLIR 22.1.8
   lowers (its convert-to-llvm leaves isend/irecv/wait/comm_size/barrier in
   the IR). Compiled with the MPI's own mpicc, so it fits either ABI
   (OpenMPI or MPICH) without knowing it. Messages are bytes on
   MPI_COMM_WORLD: the projection only ever sends a buffer to the same
   buffer type on another rank. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static MPI_Request *request(int64_t bytes) {
  if (bytes > INT32_MAX) { /* MPI counts are int */
    fprintf(stderr, "coll: a message of %lld bytes exceeds the MPI count limit\n", (long long)bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Request *r = malloc(sizeof *r);
  if (!r) MPI_Abort(MPI_COMM_WORLD, 2);
  return r;
}

void *coll_mpi_isend(void *buf, int64_t bytes, int32_t peer, int32_t tag) {
  MPI_Request *r = request(bytes);
  MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, r);
  return r;
}

void *coll_mpi_irecv(void *buf, int64_t bytes, int32_t peer, int32_t tag) {
  MPI_Request *r = request(bytes);
  MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, r);
  return r;
}

int32_t coll_mpi_wait(void *r) {
  int e = MPI_Wait((MPI_Request *)r, MPI_STATUS_IGNORE);
  free(r);
  return e;
}

/* For the runtime (ctypes) around the program. */
int32_t coll_mpi_rank(void) { int r = -1; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
int32_t coll_mpi_size(void) { int s = -1; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }
int32_t coll_mpi_tag_ub(void) {
  int *ub = NULL, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  return flag && ub ? *ub : 32767; /* the standard's guaranteed minimum */
}
int32_t coll_mpi_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
double coll_mpi_wtime(void) { return MPI_Wtime(); }
/* For mpi-exe's main (exe.py): how many ranks pass a nonzero `flag`, known
   to every rank, so that all of them take the same branch (run or stop). */
int32_t coll_mpi_count(int32_t flag) {
  int in = flag != 0, sum = 0;
  MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}
/* For mpi-exe's main: whether the ranks hold different `value`s (known to
   every rank: its arguments' hash, which every rank must share). */
int32_t coll_mpi_differ(int64_t value) {
  long long v[2] = {value, -value}, m[2] = {0, 0};
  MPI_Allreduce(v, m, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return m[0] != -m[1];
}
