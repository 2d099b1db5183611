// coll.reduce, oneshot: where devices address each other's memory
// (coll.peer_access), one combine on the root reads every input in place
// through peer views (memory_space_cast to the root's device), in device
// order: no copies, no scratch. In place, the root's input is the output.
// (Without coll.peer_access a peer strategy is refused: lower/peer.mlir.)
// RUN: coll-opt %s --split-input-file --coll-lower-collectives | FileCheck %s

// CHECK-LABEL: func.func @root1
// CHECK-DAG: %[[X0:.*]] = memref.memory_space_cast %arg0 : memref<4xf32> to memref<4xf32, #coll.device<0 : i64>>
// CHECK-DAG: %[[X2:.*]] = memref.memory_space_cast %arg2 : memref<4xf32> to memref<4xf32, #coll.device<2 : i64>>
// CHECK-DAG: %[[Y:.*]] = memref.memory_space_cast %arg3 : memref<4xf32> to memref<4xf32, #coll.device<1 : i64>>
// CHECK-DAG: %[[P0:.*]] = memref.memory_space_cast %[[X0]] : memref<4xf32, #coll.device<0 : i64>> to memref<4xf32, #coll.device<1 : i64>>
// CHECK-DAG: %[[P2:.*]] = memref.memory_space_cast %[[X2]] : memref<4xf32, #coll.device<2 : i64>> to memref<4xf32, #coll.device<1 : i64>>
// CHECK: %[[T:.*]] = "coll.combine"(%[[P0]], %{{.*}}, %[[P2]], %[[Y]]) {kind = "max"
// CHECK-NOT: coll.copy
// CHECK-NOT: coll.alloc
// CHECK: %[[J:.*]] = "coll.join"(%[[T]])
// CHECK: "coll.wait"(%[[J]])
module attributes {coll.peer_access} {
  func.func @root1(%x0: memref<4xf32>, %x1: memref<4xf32>, %x2: memref<4xf32>, %y: memref<4xf32>) {
    %t = "coll.reduce"(%x0, %x1, %x2, %y) {devices = array<i64: 0, 1, 2>, kind = "max", root = 1 : i64, strategy = "oneshot", operandSegmentSizes = array<i32: 3, 1, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// -----

// In place on the root (device 0): its input is the combine's first operand and its output.
// CHECK-LABEL: func.func @in_place
// CHECK: %[[X0:.*]] = memref.memory_space_cast %arg0 : memref<8xi32> to memref<8xi32, #coll.device<0 : i64>>
// CHECK: "coll.combine"(%[[X0]], %{{.*}}, %[[X0]])
module attributes {coll.peer_access} {
  func.func @in_place(%x0: memref<8xi32>, %x1: memref<8xi32>) {
    %t = "coll.reduce"(%x0, %x1, %x0) {devices = array<i64: 0, 1>, kind = "sum", root = 0 : i64, strategy = "oneshot", operandSegmentSizes = array<i32: 2, 1, 0>} : (memref<8xi32>, memref<8xi32>, memref<8xi32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
