// WORKAROUND of an MLIR 22.1.8 bug: on the OpenMPI ABI upstream names the
// MPI_Op globals @ompi_mpi_sum, ..., where libmpi exports ompi_mpi_op_sum;
// coll-mpi-abi renames them (definition and uses). MPICH is left alone.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-mpi-requests,finalize-memref-to-llvm,convert-to-llvm,reconcile-unrealized-casts,coll-mpi-abi)' | FileCheck %s
// CHECK: llvm.mlir.global external @ompi_mpi_op_max()
// CHECK: llvm.mlir.addressof @ompi_mpi_op_max
// CHECK-NOT: @ompi_mpi_max
// CHECK: llvm.call @MPI_Allreduce

module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
  func.func @baseline(%x: memref<16xf32>, %y: memref<16xf32>) {
    %comm = mpi.comm_world : !mpi.comm
    mpi.allreduce(%x, %y, MPI_MAX, %comm) : memref<16xf32>, memref<16xf32>
    return
  }
}
