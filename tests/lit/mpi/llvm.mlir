// The mpi route (core/routes.py) to the LLVM dialect, for each ABI: upstream
// convert-to-llvm lowers comm_world, comm_rank, init and finalize; the
// isend/irecv/wait it would leave behind are calls into the shim
// (lowering/mpi/shim.c), with the buffer's address and byte count; no mpi
// op, coll op or !mpi type is left.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-to-mpi{implementation=OpenMPI},coll-to-cpu{tile=0},coll-mpi-requests,canonicalize,cse,convert-linalg-to-loops,arith-expand{include-bf16=true},convert-vector-to-scf,lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts,coll-mpi-abi)' | FileCheck %s --check-prefixes=CHECK,OMPI
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-to-mpi{implementation=MPICH},coll-to-cpu{tile=0},coll-mpi-requests,canonicalize,cse,convert-linalg-to-loops,arith-expand{include-bf16=true},convert-vector-to-scf,lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts,coll-mpi-abi)' | FileCheck %s --check-prefixes=CHECK,MPICH
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-to-mpi{implementation=OpenMPI},coll-to-cpu{tile=0},coll-mpi-requests,canonicalize,cse,convert-linalg-to-loops,arith-expand{include-bf16=true},convert-vector-to-scf,lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts,coll-mpi-abi)' | not grep -e 'mpi\.' -e '"coll\.' -e '!mpi'

// OMPI: llvm.mlir.global external @ompi_mpi_comm_world()
// CHECK-LABEL: llvm.func @all_reduce(
// 16 f32 elements: messages of 64 bytes.
// CHECK-DAG: %[[BYTES:.*]] = llvm.mlir.constant(64 : i64) : i64
// OMPI-DAG: llvm.mlir.addressof @ompi_mpi_comm_world : !llvm.ptr
// MPICH-DAG: llvm.mlir.constant(1140850688 : i64) : i64
// OMPI: llvm.call @MPI_Comm_rank(%{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> i32
// MPICH: llvm.call @MPI_Comm_rank(%{{.*}}, %{{.*}}) : (i32, !llvm.ptr) -> i32
// The rank picks its case.
// CHECK: llvm.switch
// CHECK: llvm.call @coll_mpi_irecv(%{{.*}}, %[[BYTES]], %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i32, i32) -> !llvm.ptr
// CHECK: llvm.call @coll_mpi_isend(%{{.*}}, %[[BYTES]], %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i32, i32) -> !llvm.ptr
// CHECK: llvm.call @coll_mpi_wait(%{{.*}}) : (!llvm.ptr) -> i32
// CHECK-LABEL: llvm.func @coll_mpi_init() -> i32
// CHECK: llvm.call @MPI_Init
// CHECK-LABEL: llvm.func @coll_mpi_finalize() -> i32
// CHECK: llvm.call @MPI_Finalize
// CHECK-DAG: llvm.func @coll_mpi_isend(!llvm.ptr, i64, i32, i32) -> !llvm.ptr
// CHECK-DAG: llvm.func @coll_mpi_irecv(!llvm.ptr, i64, i32, i32) -> !llvm.ptr
// CHECK-DAG: llvm.func @coll_mpi_wait(!llvm.ptr) -> i32

module {
  func.func @all_reduce(%x0: memref<16xf32>, %x1: memref<16xf32>, %y0: memref<16xf32>, %y1: memref<16xf32>) attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
        : (memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
