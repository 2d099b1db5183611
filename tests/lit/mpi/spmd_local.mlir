// An SPMD function with local work around a collective (linalg before it,
// a dealloc after it): coll-spmd-to-mpi lowers the collective in place to
// this rank's part (a switch on the rank), the tokens go, the local work
// stays; coll-spmd-to-global (the single-process back ends) clones the local
// work once per rank around one global-view collective.
// RUN: coll-opt %s --coll-spmd-to-mpi | FileCheck %s --check-prefix=RANK
// RUN: coll-opt %s --coll-spmd-to-global | FileCheck %s --check-prefix=GLOBAL

// GLOBAL-LABEL: func.func @local(%arg0: memref<8xf32>, %arg1: memref<8xf32>, %arg2: memref<8xf32>, %arg3: memref<8xf32>) {
// GLOBAL: %[[A0:.*]] = memref.alloc() {coll.device = 0 : i64}
// GLOBAL: %[[A1:.*]] = memref.alloc() {coll.device = 1 : i64}
// GLOBAL: linalg.add {coll.device = 0 : i64} ins(%arg0, %arg0 : {{.*}}) outs(%[[A0]] : memref<8xf32>)
// GLOBAL: linalg.add {coll.device = 1 : i64} ins(%arg1, %arg1 : {{.*}}) outs(%[[A1]] : memref<8xf32>)
// GLOBAL: "coll.all_reduce"(%[[A0]], %[[A1]], %arg2, %arg3)
// GLOBAL: "coll.wait"
// GLOBAL: memref.dealloc %[[A0]] {coll.device = 0 : i64}
// GLOBAL: memref.dealloc %[[A1]] {coll.device = 1 : i64}
// RANK-LABEL: func.func @local(%arg0: memref<8xf32>, %arg1: memref<8xf32>) attributes {coll.global_args = array<i64: 0, 2, 1, 3>, coll.rank_inputs = 1 : i64, coll.ranks = 2 : i64}
// RANK-NEXT: %[[A:.*]] = memref.alloc() : memref<8xf32>
// RANK-NEXT: linalg.add ins(%arg0, %arg0 : memref<8xf32>, memref<8xf32>) outs(%[[A]] : memref<8xf32>)
// RANK-NEXT: %[[W:.*]] = mpi.comm_world
// RANK-NEXT: %[[R:.*]] = mpi.comm_rank(%[[W]])
// RANK-NEXT: %[[I:.*]] = arith.index_cast %[[R]]
// RANK-NEXT: scf.index_switch %[[I]]
// RANK-NEXT: case 0 {
// RANK: mpi.irecv
// RANK: memref.memory_space_cast %[[A]]
// RANK: mpi.isend
// RANK: "coll.combine"
// RANK: case 1 {
// RANK: default {
// RANK: memref.dealloc %[[A]]
// RANK-NOT: coll.wait
// RANK-NOT: coll.all_reduce
// RANK: return
module {
  func.func @local(%x: memref<8xf32>, %y: memref<8xf32>) attributes {coll.ranks = 2 : i64} {
    %a = memref.alloc() : memref<8xf32>
    linalg.add ins(%x, %x : memref<8xf32>, memref<8xf32>) outs(%a : memref<8xf32>)
    %t = "coll.all_reduce"(%a, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}
        : (memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    memref.dealloc %a : memref<8xf32>
    return
  }
}
