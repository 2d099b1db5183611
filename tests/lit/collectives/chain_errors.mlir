// A collective that uses another's result without ordering after its
// token, or that nothing waits for: errors of coll-check-order at the
// collective level (through the op layer's reads and writes).
// RUN: coll-opt %s --split-input-file --coll-check-order --verify-diagnostics

func.func @unordered(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>, %z0: memref<4xf32>, %z1: memref<4xf32>) {
  // expected-note @+1 2 {{written by this coll.all_reduce, not ordered with the read}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  // expected-error @+2 {{coll.reduce_scatter reads %arg2[0, 8) while an unordered op may write it}}
  // expected-error @+1 {{coll.reduce_scatter reads %arg3[0, 8) while an unordered op may write it}}
  %u = "coll.reduce_scatter"(%y0, %y1, %z0, %z1) {kind = "max", devices = array<i64: 0, 1>, scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%u, %t) : (!coll.token, !coll.token) -> ()
  return
}

// -----
func.func @not_waited(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{coll.broadcast writes %arg1[0, 8) but nothing waits for it}}
  %t = "coll.broadcast"(%x0, %y0) {devices = array<i64: 0>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
// One op that reads the unordered buffer twice (two operands): one error.
func.func @read_twice(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>, %z: memref<8xf32>) {
  // expected-note @+1 {{written by this coll.all_reduce, not ordered with the read}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  // expected-error @+1 {{linalg.add reads %arg2[0, 8) while an unordered op may write it}}
  linalg.add ins(%y0, %y0 : memref<8xf32>, memref<8xf32>) outs(%z : memref<8xf32>)
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
