// coll-mpi-static-scratch: a per-rank program's scratch is static (one
// uninitialized memref.global per coll.alloc, zero pages until a rank's
// case touches it), so a message received into it does not fault in fresh
// pages on every call; the rest of the route lowers it to an LLVM global.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-to-mpi,coll-mpi-static-scratch,cse)' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-to-mpi,coll-mpi-static-scratch,coll-to-cpu{tile=0},coll-mpi-requests,canonicalize,cse,convert-linalg-to-loops,arith-expand{include-bf16=true},convert-vector-to-scf,lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts,coll-mpi-abi)' | FileCheck %s --check-prefix=LLVM

// CHECK-DAG: memref.global "private" @coll_scratch_0 : memref<8xf32> = uninitialized {alignment = 64 : i64}
// CHECK-DAG: memref.global "private" @coll_scratch_1 : memref<8xf32> = uninitialized {alignment = 64 : i64}
// CHECK-NOT: coll.alloc
// CHECK: case 0 {
// CHECK: %[[G:.*]] = memref.get_global @coll_scratch_{{[01]}} : memref<8xf32>
// CHECK: %[[S:.*]] = memref.memory_space_cast %[[G]] : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
// CHECK: mpi.irecv(%[[S]],
// CHECK-NOT: coll.alloc

// LLVM-DAG: llvm.mlir.global private @coll_scratch_0() {{.*}}alignment = 64 : i64{{.*}} : !llvm.array<8 x f32>
// LLVM-DAG: llvm.mlir.global private @coll_scratch_1() {{.*}}alignment = 64 : i64{{.*}} : !llvm.array<8 x f32>
// LLVM-NOT: malloc

module {
  func.func @all_reduce(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum",
        operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
