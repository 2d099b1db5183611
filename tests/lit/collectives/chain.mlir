// Two collectives in a row, the second waiting on the first's token: after
// lowering, every op of the second that waits for nothing else waits for the
// first's final join, and coll-check-order accepts the program (before
// and after lowering).
// RUN: coll-opt %s --split-input-file --coll-check-order --coll-lower-collectives --coll-check-order | FileCheck %s

// CHECK-LABEL: func.func @chained
// CHECK: %[[J:.*]] = "coll.join"
// CHECK: "coll.copy"(%{{.*}}, %{{.*}}, %[[J]])
// CHECK: "coll.combine"
// CHECK: "coll.copy"(%{{.*}}, %{{.*}}, %[[J]])
// CHECK: %[[K:.*]] = "coll.join"
// CHECK: "coll.wait"(%[[K]])
func.func @chained(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>, %z0: memref<4xf32>, %z1: memref<4xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, strategy = "ring", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  %u = "coll.reduce_scatter"(%y0, %y1, %z0, %z1, %t) {kind = "max", devices = array<i64: 0, 1>, scatter_axis = 0 : i64, strategy = "direct", operandSegmentSizes = array<i32: 2, 2, 1>} : (memref<8xf32>, memref<8xf32>, memref<4xf32>, memref<4xf32>, !coll.token) -> !coll.token
  "coll.wait"(%u) : (!coll.token) -> ()
  return
}

// -----
// all_gather, then an in-place broadcast of its result from device 1.
// CHECK-LABEL: func.func @three
// CHECK-COUNT-4: "coll.copy"(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) :
// CHECK: %[[A:.*]] = "coll.join"
// CHECK: "coll.copy"({{.*}}, %[[A]]) : (memref<8xf32, #coll.device<1 : i64>>, memref<8xf32, #coll.device<0 : i64>>, !coll.token)
// CHECK: %[[B:.*]] = "coll.join"
// CHECK: "coll.wait"(%[[B]])
func.func @three(%x0: memref<4xf32>, %x1: memref<4xf32>, %g0: memref<8xf32>, %g1: memref<8xf32>) {
  %t = "coll.all_gather"(%x0, %x1, %g0, %g1) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  %u = "coll.broadcast"(%g1, %g0, %g1, %t) {devices = array<i64: 0, 1>, root = 1 : i64, operandSegmentSizes = array<i32: 1, 2, 1>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, !coll.token) -> !coll.token
  "coll.wait"(%u) : (!coll.token) -> ()
  return
}

