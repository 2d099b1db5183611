// Upstream picks the MPI ABI from the module's dlti.map (without it, it
// silently uses MPICH's, and a program linked with OpenMPI crashes): the
// mpi route refuses a module without one.
// RUN: coll-opt %s --coll-mpi-requests --verify-diagnostics

// expected-error @below {{the module needs dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI"> (or "MPICH")}}
module {
  func.func @f(%x: memref<16xf32>) {
    %comm = mpi.comm_world : !mpi.comm
    %c0 = arith.constant 0 : i32
    %r = mpi.isend(%x, %c0, %c0, %comm) : memref<16xf32>, i32, i32 -> !mpi.request
    mpi.wait(%r) : !mpi.request
    return
  }
}
