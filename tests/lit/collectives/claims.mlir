// Every collective's lowering ends in its claim (coll.implements), with the
// collective's own attributes, and coll-check-semantics proves it. A float
// sum or prod under the default (canonical) order claims that order too
// (`order = "canonical"`); a max (RS) lowers alike under either order and
// claims none.
// GEN: a2a = coll-gen all-to-all --devices 3 --shape 2x6 --split-axis 1 --concat-axis 0
// RUN: coll-opt --coll-lower-collectives --coll-check-semantics < %S/Inputs/gen/claims.a2a.mlir | FileCheck %s --check-prefix=A2A
// GEN: rs = coll-gen reduce-scatter --devices 2 --shape 3x4 --axis 1 --kind max --strategy ring
// RUN: coll-opt --coll-lower-collectives --coll-check-semantics < %S/Inputs/gen/claims.rs.mlir | FileCheck %s --check-prefix=RS
// GEN: reduce = coll-gen reduce --devices 3 --shape 8 --root 3 --strategy tree
// RUN: coll-opt --coll-lower-collectives --coll-check-semantics < %S/Inputs/gen/claims.reduce.mlir | FileCheck %s --check-prefix=REDUCE
// GEN: bcast = coll-gen broadcast --devices 3 --shape 8 --root 2 --strategy ring --in-place
// RUN: coll-opt --coll-lower-collectives --coll-check-semantics < %S/Inputs/gen/claims.bcast.mlir | FileCheck %s --check-prefix=BCAST
// RUN: coll-opt %s --coll-lower-collectives --coll-check-semantics | FileCheck %s --check-prefix=CHAIN

// A2A: %[[J:.*]] = "coll.join"
// A2A: "coll.implements"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %[[J]]) {axes = array<i64: 1, 0>, devices = array<i64: 0, 1, 2>, lowered, op = "all_to_all", operandSegmentSizes = array<i32: 3, 3, 1>}
// RS: "coll.implements"(%arg0, %arg1, %arg2, %arg3, %{{.*}}) {axes = array<i64: 1>, devices = array<i64: 0, 1>, kind = "max", lowered, op = "reduce_scatter", operandSegmentSizes = array<i32: 2, 2, 1>}
// REDUCE: "coll.implements"(%arg0, %arg1, %arg2, %arg3, %{{.*}}) {devices = array<i64: 0, 1, 2>, kind = "sum", lowered, op = "reduce", operandSegmentSizes = array<i32: 3, 1, 1>, order = "canonical", root = 3 : i64}
// BCAST: "coll.implements"(%arg0, %{{.*}}) {devices = array<i64: 0, 1, 2>, lowered, op = "broadcast", operandSegmentSizes = array<i32: 1, 3, 1>, root = 2 : i64}

// Chained: each claim covers its own program, the second's inputs are the
// first's outputs.
// CHAIN: %[[A:.*]] = "coll.join"
// CHAIN: "coll.implements"(%arg0, %arg1, %arg2, %arg3, %[[A]]) {axes = array<i64: 0>, devices = array<i64: 0, 1>, lowered, op = "all_gather", operandSegmentSizes = array<i32: 2, 2, 1>}
// CHAIN: %[[B:.*]] = "coll.join"
// CHAIN: "coll.implements"(%arg2, %arg3, %arg4, %arg5, %[[B]]) {axes = array<i64: 0>, devices = array<i64: 0, 1>, kind = "sum", lowered, op = "reduce_scatter", operandSegmentSizes = array<i32: 2, 2, 1>, order = "canonical"}
func.func @chain(%x0: memref<4xf32>, %x1: memref<4xf32>, %g0: memref<8xf32>, %g1: memref<8xf32>, %z0: memref<4xf32>, %z1: memref<4xf32>) {
  %t = "coll.all_gather"(%x0, %x1, %g0, %g1) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  %u = "coll.reduce_scatter"(%g0, %g1, %z0, %z1, %t) {kind = "sum", devices = array<i64: 0, 1>, scatter_axis = 0 : i64, strategy = "ring", operandSegmentSizes = array<i32: 2, 2, 1>} : (memref<8xf32>, memref<8xf32>, memref<4xf32>, memref<4xf32>, !coll.token) -> !coll.token
  "coll.wait"(%u) : (!coll.token) -> ()
  return
}
