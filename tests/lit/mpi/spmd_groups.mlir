// SPMD collectives over groups: `groups` lists the ranks group after group,
// `devices` the positions in a group. coll-spmd-to-global makes one
// global-view collective per group (root, a position, becomes that group's
// rank) and joins their tokens.
// RUN: coll-opt %s --split-input-file --coll-spmd-to-global | FileCheck %s --check-prefix=GLOBAL
// RUN: coll-opt %s --split-input-file --coll-spmd-to-mpi | FileCheck %s --check-prefix=RANK

// GLOBAL-LABEL: func.func @rows(%arg0: memref<8xf32>, %arg1: memref<8xf32>, %arg2: memref<8xf32>, %arg3: memref<8xf32>, %arg4: memref<8xf32>, %arg5: memref<8xf32>, %arg6: memref<8xf32>, %arg7: memref<8xf32>) {
// GLOBAL-NEXT: %[[A:.*]] = "coll.all_reduce"(%arg0, %arg1, %arg4, %arg5) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
// GLOBAL-NEXT: %[[B:.*]] = "coll.all_reduce"(%arg2, %arg3, %arg6, %arg7) {devices = array<i64: 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
// GLOBAL-NEXT: %[[J:.*]] = "coll.join"(%[[A]], %[[B]])
// GLOBAL-NEXT: "coll.wait"(%[[J]])
// The same through coll-spmd-to-mpi: one global view per group, projected.
// RANK-LABEL: func.func @rows
// RANK: scf.index_switch
// RANK-COUNT-4: mpi.isend
module {
  func.func @rows(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 4 : i64} {
    %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, groups = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// -----

// Columns of a 2x2 grid, a broadcast from position 1 of each: ranks 2 and 3.
// The inputs off the roots stay placed on their ranks (for the projection).
// GLOBAL-LABEL: func.func @columns
// GLOBAL-NEXT: memref.memory_space_cast %arg0 : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
// GLOBAL-NEXT: memref.memory_space_cast %arg1 : memref<8xf32> to memref<8xf32, #coll.device<1 : i64>>
// GLOBAL-NEXT: "coll.broadcast"(%arg2, %arg4, %arg6) {devices = array<i64: 0, 2>, operandSegmentSizes = array<i32: 1, 2, 0>, root = 2 : i64}
// GLOBAL-NEXT: "coll.broadcast"(%arg3, %arg5, %arg7) {devices = array<i64: 1, 3>, operandSegmentSizes = array<i32: 1, 2, 0>, root = 3 : i64}
module {
  func.func @columns(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 4 : i64} {
    %t = "coll.broadcast"(%x, %y) {devices = array<i64: 0, 1>, groups = array<i64: 0, 2, 1, 3>, root = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

// -----

// A reduce writes only its root's output (the other ranks' stay as they are).
// GLOBAL-LABEL: func.func @reduce
// GLOBAL-NEXT: memref.memory_space_cast %arg3 : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
// GLOBAL-NEXT: memref.memory_space_cast %arg5 : memref<8xf32> to memref<8xf32, #coll.device<2 : i64>>
// GLOBAL-NEXT: "coll.reduce"(%arg0, %arg1, %arg2, %arg4) {devices = array<i64: 0, 1, 2>, kind = "max", operandSegmentSizes = array<i32: 3, 1, 0>, root = 1 : i64}
module {
  func.func @reduce(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 3 : i64} {
    %t = "coll.reduce"(%x, %y) {devices = array<i64: 0, 1, 2>, root = 1 : i64, kind = "max", operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}

