// In an SPMD function a collective takes this rank's input and output and
// names the whole group.
// RUN: coll-opt %s --split-input-file --verify-diagnostics

module {
  func.func @two_inputs(%x: memref<8xf32>, %x2: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 2 : i64} {
    // expected-error @below {{in an SPMD function (coll.ranks = 2) a collective takes one input and one output (this rank's) and names its group devices = [0..1]}}
    %t = "coll.all_reduce"(%x, %x2, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 1, 0>}
        : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// -----

module {
  func.func @wrong_group(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 3 : i64} {
    // expected-error @below {{names its group devices = [0..2]}}
    %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
