// The verifier's checks of SPMD groups: every rank in exactly one group,
// devices = the positions in a group, root one of them.
// RUN: coll-opt %s --split-input-file --verify-diagnostics

module {
  func.func @not_covering(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 4 : i64} {
    // expected-error @below {{'groups' must hold every rank 0..3 exactly once (disjoint groups covering the function's ranks), got [0, 1, 2, 2]}}
    %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, groups = array<i64: 0, 1, 2, 2>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// -----

module {
  func.func @positions(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 4 : i64} {
    // expected-error @below {{with 'groups' a collective's devices = [0..size-1] are the positions in a group of `size` ranks, and size divides the length of 'groups'; got devices = [0, 2] and 4 ranks in groups}}
    %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 2>, groups = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// -----

module {
  func.func @uneven(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 3 : i64} {
    // expected-error @below {{size divides the length of 'groups'; got devices = [0, 1] and 3 ranks in groups}}
    %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, groups = array<i64: 0, 1, 2>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// -----

module {
  func.func @root(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 4 : i64} {
    // expected-error @below {{'root' 2 is out of range for groups of 2; with 'groups' it is a position in each group, expected 0 <= root < 2}}
    %t = "coll.broadcast"(%x, %y) {devices = array<i64: 0, 1>, groups = array<i64: 0, 1, 2, 3>, root = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
