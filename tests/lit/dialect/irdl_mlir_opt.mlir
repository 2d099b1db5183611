// The dialect definition loads into upstream mlir-opt, which parses and
// verifies both IR levels and rejects what IRDL forbids.
// RUN: %mlir-opt --irdl-file=%irdl %s | FileCheck %s
// RUN: not %mlir-opt --irdl-file=%irdl --split-input-file %S/Inputs/irdl_bad.mlir 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @collective
// CHECK: "coll.all_reduce"(%arg0, %arg1, %arg2, %arg3) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : {{.*}} -> !coll.token
// CHECK: "coll.wait"
func.func @collective(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// CHECK-LABEL: func.func @explicit
// CHECK: "coll.alloc"() : () -> memref<4xf32, #coll.device<1 : i64>>
// CHECK: "coll.copy"({{.*}}) : (memref<4xf32, strided<[1], offset: 4>, #coll.device<0 : i64>>, memref<4xf32, #coll.device<1 : i64>>) -> !coll.token
// CHECK: "coll.combine"({{.*}}) {kind = "max", operandSegmentSizes = array<i32: 1, 1, 1, 1>}
// CHECK: "coll.join"
func.func @explicit(%x: memref<8xf32, #coll.device<0>>, %y: memref<8xf32, #coll.device<1>>) {
  %s = memref.subview %x[4] [4] [1] : memref<8xf32, #coll.device<0>> to memref<4xf32, strided<[1], offset: 4>, #coll.device<0>>
  %d = memref.subview %y[4] [4] [1] : memref<8xf32, #coll.device<1>> to memref<4xf32, strided<[1], offset: 4>, #coll.device<1>>
  %r = "coll.alloc"() : () -> memref<4xf32, #coll.device<1>>
  %t0 = "coll.copy"(%s, %r) : (memref<4xf32, strided<[1], offset: 4>, #coll.device<0>>, memref<4xf32, #coll.device<1>>) -> !coll.token
  %t1 = "coll.combine"(%r, %d, %d, %t0) {kind = "max", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (memref<4xf32, #coll.device<1>>, memref<4xf32, strided<[1], offset: 4>, #coll.device<1>>, memref<4xf32, strided<[1], offset: 4>, #coll.device<1>>, !coll.token) -> !coll.token
  %j = "coll.join"(%t0, %t1) : (!coll.token, !coll.token) -> !coll.token
  "coll.wait"(%j) : (!coll.token) -> ()
  return
}

// BAD: error: '"avg"' does not satisfy the constraint
// BAD: error: expected 'memref<8xf32>' but got 'memref<4xf32>'
