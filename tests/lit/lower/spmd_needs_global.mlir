// An SPMD-form collective (one rank's buffers, devices naming the group) is
// refused by the lowerings with a located error; coll-spmd-to-global first
// (it was an internal IndexError).
// RUN: not coll-opt %s --coll-lower-all-reduce=strategy=naive 2>&1 | FileCheck %s
// RUN: not coll-opt %s --coll-lower-collectives 2>&1 | FileCheck %s
// RUN: coll-opt %s --coll-spmd-to-global --coll-lower-collectives | FileCheck %s --check-prefix=GLOBAL

// CHECK: spmd_needs_global.mlir:[[# @LINE + 5]]:8: error: {{.*}}'coll.all_reduce' is in an SPMD function (coll.ranks = 3): expand it into its global view first (coll-spmd-to-global), or lower it per rank (coll-spmd-to-mpi)
// CHECK-NOT: internal error
// GLOBAL-NOT: coll.all_reduce
// GLOBAL: coll.copy
func.func @all_reduce(%x: memref<12xi32>, %y: memref<12xi32>) attributes {coll.ranks = 3 : i64} {
  %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1, 2>, kind = "max", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<12xi32>, memref<12xi32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
