// coll-from-stablehlo on what JAX 0.10.2 exports (Inputs/gen.py): the
// shard_map body becomes the function (coll.ranks = the mesh's size, the
// arguments and results one device's blocks), each collective coll's tensor
// collective over the groups of its replica groups (dense partition ids
// here), its kind read from the reduction region. Nothing of Shardy is left.
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/psum.mlir | FileCheck %s --check-prefix=PSUM
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/pmax.mlir | FileCheck %s --check-prefix=PMAX
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/pmin_i32.mlir | FileCheck %s --check-prefix=PMIN
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/all_gather.mlir | FileCheck %s --check-prefix=GATHER
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/psum_scatter.mlir | FileCheck %s --check-prefix=SCATTER
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/all_to_all.mlir | FileCheck %s --check-prefix=A2A
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/psum_2d.mlir | FileCheck %s --check-prefix=MESH2D
// The reductions are under the default order contract (no `order`: the
// same bits whatever strategy lowers them).
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/psum.mlir | FileCheck %s --check-prefix=ORDER
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/psum_scatter.mlir | FileCheck %s --check-prefix=ORDER
// ORDER: "coll.{{all_reduce|reduce_scatter}}"
// ORDER-NOT: order =
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/axis_index.mlir | FileCheck %s --check-prefix=RANK
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/psum_2d_gspmd.mlir | FileCheck %s --check-prefix=GSPMD

// PSUM-LABEL: func.func @main(%arg0: tensor<8xf32> {bufferization.writable = false}) -> tensor<8xf32> attributes {coll.ranks = 8 : i64}
// PSUM-NEXT: %[[R:.*]]:2 = "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>)
// PSUM-NEXT: return %[[R]]#1 : tensor<8xf32>
// PSUM-NOT: sdy.
// PSUM-NOT: stablehlo
// PSUM-NOT: mhlo

// PMAX: "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "max"
// PMIN: "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "min", {{.*}} : (tensor<8xi32>) -> (!coll.token, tensor<8xi32>)

// tiled all_gather: one device's 8 -> all 64, along all_gather_dim.
// GATHER-LABEL: func.func @main(%arg0: tensor<8xf32> {bufferization.writable = false}) -> tensor<64xf32>
// GATHER: "coll.all_gather"(%arg0) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8xf32>) -> (!coll.token, tensor<64xf32>)

// SCATTER: "coll.reduce_scatter"(%arg0) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>, scatter_axis = 0 : i64} : (tensor<8xf32>) -> (!coll.token, tensor<1xf32>)

// A2A: "coll.all_to_all"(%arg0) {concat_axis = 0 : i64, devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, operandSegmentSizes = array<i32: 1, 0, 0>, split_axis = 0 : i64} : (tensor<8x4xf32>) -> (!coll.token, tensor<8x4xf32>)

// psum over "tp" of a 2x4 mesh: groups {0..3}, {4..7} (devices: the positions in a group).
// MESH2D: "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1, 2, 3>, groups = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "sum"

// axis_index is a read of the rank (partition_id -> mpi.comm_rank, back to
// tensor<ui32> by a convert that is legalized with its users).
// RANK: %[[C:.*]] = mpi.comm_world : !mpi.comm
// RANK-NEXT: %[[RK:.*]] = mpi.comm_rank(%[[C]]) : i32
// RANK-NEXT: %[[T:.*]] = tensor.from_elements %[[RK]] : tensor<i32>
// RANK-NEXT: "stablehlo.convert"(%[[T]]) : (tensor<i32>) -> tensor<ui32>
// RANK-NOT: stablehlo.partition_id
// RANK: "coll.all_reduce"

// The same psum as GSPMD lowers it: its manual region (the callee between
// SPMDFullToShardShape and SPMDShardToFullShape) becomes the function, and
// the custom calls, the call and the callee go.
// GSPMD-LABEL: func.func @main(%arg0: tensor<8xf32> {bufferization.writable = false}) -> tensor<8xf32> attributes {coll.ranks = 8 : i64}
// GSPMD-NEXT: %[[R:.*]]:2 = "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1, 2, 3>, groups = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "sum"
// GSPMD-NEXT: return %[[R]]#1 : tensor<8xf32>
// GSPMD-NOT: custom_call
// GSPMD-NOT: shmap_body
