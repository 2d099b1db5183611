// An SPMD function with local work around a collective (linalg before it,
// a dealloc after it): coll-spmd-to-global cannot expand it (it refuses, at
// the buffer), coll-spmd-to-mpi lowers the collective in place to this
// rank's part (a switch on the rank), the tokens go, the local work stays.
// RUN: coll-opt %s --coll-spmd-to-mpi | filecheck %s --check-prefix=RANK
// RUN: not coll-opt %s --coll-spmd-to-global 2>&1 | filecheck %s --check-prefix=ERR

// ERR: spmd_local.mlir:31:10: error: coll-spmd-to-global: coll-spmd-to-global expands collectives on the SPMD function's own arguments; a collective on another buffer (local work around collectives) lowers in place with coll-spmd-to-mpi
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
