// SPMD form: a function that holds one rank's buffers (coll.ranks = N, the
// rank read at run time), its collective naming the group. Its lowering
// expands it into the global view (argument i of rank r is argument
// i * N + r) and then projects the explicit program back onto one rank.
// RUN: coll-opt %s --coll-spmd-to-global | FileCheck %s --check-prefix=GLOBAL
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-spmd-to-global,coll-lower-all-reduce{strategy=all2all},coll-to-mpi)' | FileCheck %s --check-prefix=RANK

// GLOBAL-LABEL: func.func @all_reduce(%arg0: memref<12xi32>, %arg1: memref<12xi32>, %arg2: memref<12xi32>, %arg3: memref<12xi32>, %arg4: memref<12xi32>, %arg5: memref<12xi32>) {
// GLOBAL-NEXT: %0 = "coll.all_reduce"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {devices = array<i64: 0, 1, 2>, kind = "max", operandSegmentSizes = array<i32: 3, 3, 0>}

// RANK-LABEL: func.func @all_reduce(%arg0: memref<12xi32>, %arg1: memref<12xi32>)
// RANK-SAME: coll.global_args = array<i64: 0, 3, 1, 4, 2, 5>, coll.max_tag = 1 : i64, coll.rank_inputs = 1 : i64, coll.ranks = 3 : i64
// RANK: scf.index_switch
// RANK: case 2 {
// RANK: default {

module {
  func.func @all_reduce(%x: memref<12xi32>, %y: memref<12xi32>) attributes {coll.ranks = 3 : i64} {
    %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1, 2>, kind = "max", operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<12xi32>, memref<12xi32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
