// coll-to-gpu on a collective that was not lowered to the explicit level:
// a located error naming the pass to run first (was an internal error).
// RUN: not coll-opt %s --coll-to-gpu 2>&1 | FileCheck %s
// CHECK: unlowered.mlir:[[@LINE+3]]:8: error: coll-to-gpu: 'coll.all_reduce' has no GPU lowering; lower it to the explicit level first (coll-lower-collectives)
// CHECK-NOT: internal error
func.func @ar(%x0: memref<16xf32>, %x1: memref<16xf32>, %y0: memref<16xf32>, %y1: memref<16xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
