// A program whose only coll op is a coll.alloc still gets the stream its
// scratch pool is allocated on (coll-to-gpu referenced an undefined
// @__coll_streams and failed with an internal error).
// RUN: coll-build %s --emit=gpu | FileCheck %s

// CHECK-DAG: llvm.mlir.global {{.*}}@__coll_streams
// CHECK-DAG: llvm.call @mgpuStreamCreate
// CHECK-DAG: llvm.call @mgpuMemAlloc
func.func @f() attributes {llvm.emit_c_interface} {
  %0 = "coll.alloc"() : () -> memref<8xf32, #coll.device<1 : i64>>
  return
}
