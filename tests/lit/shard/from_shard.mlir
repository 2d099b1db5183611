// coll-from-shard: every shard collective of a partitioned SPMD function
// becomes a coll SPMD collective on tensors (token first, then the tensor);
// the groups come from the grid and grid_axes, the kinds are mapped, and
// the function gets coll.ranks (its arguments read-only for bufferization).
// RUN: coll-opt %s --split-input-file --coll-from-shard | FileCheck %s

shard.grid @g(shape = 4)
// CHECK-LABEL: func.func @all_reduce(%arg0: tensor<8x16xf32> {bufferization.writable = false}) -> tensor<8x16xf32> attributes {coll.ranks = 4 : i64}
// CHECK: %[[R:.*]]:2 = "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8x16xf32>) -> (!coll.token, tensor<8x16xf32>)
// CHECK: return %[[R]]#1
// CHECK-NOT: shard.
func.func @all_reduce(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = shard.all_reduce %arg0 on @g grid_axes = [0] : tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// shard's kinds -> coll's: product is prod, bitwise_* are and/or/xor.
shard.grid @g(shape = 2)
// CHECK-LABEL: func.func @kinds
// CHECK: kind = "max"
// CHECK: kind = "min"
// CHECK: kind = "prod"
// CHECK: kind = "and"
// CHECK: kind = "or"
// CHECK: kind = "xor"
func.func @kinds(%a: tensor<8xi32>) -> tensor<8xi32> {
  %0 = shard.all_reduce %a on @g grid_axes = [0] reduction = max : tensor<8xi32> -> tensor<8xi32>
  %1 = shard.all_reduce %0 on @g grid_axes = [0] reduction = min : tensor<8xi32> -> tensor<8xi32>
  %2 = shard.all_reduce %1 on @g grid_axes = [0] reduction = product : tensor<8xi32> -> tensor<8xi32>
  %3 = shard.all_reduce %2 on @g grid_axes = [0] reduction = bitwise_and : tensor<8xi32> -> tensor<8xi32>
  %4 = shard.all_reduce %3 on @g grid_axes = [0] reduction = bitwise_or : tensor<8xi32> -> tensor<8xi32>
  %5 = shard.all_reduce %4 on @g grid_axes = [0] reduction = bitwise_xor : tensor<8xi32> -> tensor<8xi32>
  return %5 : tensor<8xi32>
}

// -----

shard.grid @g(shape = 4)
// CHECK-LABEL: func.func @all_gather
// CHECK: "coll.all_gather"(%arg0) {devices = array<i64: 0, 1, 2, 3>, gather_axis = 1 : i64, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8x2xf32>) -> (!coll.token, tensor<8x8xf32>)
func.func @all_gather(%arg0: tensor<8x2xf32>) -> tensor<8x8xf32> {
  %0 = shard.all_gather %arg0 on @g grid_axes = [0] gather_axis = 1 : tensor<8x2xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

shard.grid @g(shape = 4)
// CHECK-LABEL: func.func @reduce_scatter
// CHECK: "coll.reduce_scatter"(%arg0) {devices = array<i64: 0, 1, 2, 3>, kind = "max", operandSegmentSizes = array<i32: 1, 0, 0>, scatter_axis = 0 : i64} : (tensor<8x16xf32>) -> (!coll.token, tensor<2x16xf32>)
func.func @reduce_scatter(%arg0: tensor<8x16xf32>) -> tensor<2x16xf32> {
  %0 = shard.reduce_scatter %arg0 on @g grid_axes = [0] reduction = max scatter_axis = 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

shard.grid @g(shape = 4)
// CHECK-LABEL: func.func @all_to_all
// CHECK: "coll.all_to_all"(%arg0) {concat_axis = 0 : i64, devices = array<i64: 0, 1, 2, 3>, operandSegmentSizes = array<i32: 1, 0, 0>, split_axis = 1 : i64} : (tensor<8x16xf32>) -> (!coll.token, tensor<32x4xf32>)
func.func @all_to_all(%arg0: tensor<8x16xf32>) -> tensor<32x4xf32> {
  %0 = shard.all_to_all %arg0 on @g grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<8x16xf32> -> tensor<32x4xf32>
  return %0 : tensor<32x4xf32>
}

// -----

// root is a multi-index over grid_axes; on the whole grid it is the rank.
shard.grid @g(shape = 4)
// CHECK-LABEL: func.func @broadcast
// CHECK: "coll.broadcast"(%arg0) {devices = array<i64: 0, 1, 2, 3>, operandSegmentSizes = array<i32: 1, 0, 0>, root = 2 : i64}
// CHECK-LABEL: func.func @reduce
// CHECK: "coll.reduce"(%arg0) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>, root = 1 : i64}
func.func @broadcast(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.broadcast %arg0 on @g grid_axes = [0] root = [2] : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @reduce(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.reduce %arg0 on @g grid_axes = [0] reduction = sum root = [1] : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// all_slice is local work: the block at the rank's position, the rank read
// once at the function's entry.
shard.grid @g(shape = 4)
// CHECK-LABEL: func.func @all_slice
// CHECK: %[[W:.*]] = mpi.comm_world : !mpi.comm
// CHECK: %[[RANK:.*]] = mpi.comm_rank(%[[W]]) : i32
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i32 to index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[R]], %[[C2]] : index
// CHECK: tensor.extract_slice %arg0[%[[OFF]], 0] [2, 16] [1, 1] : tensor<8x16xf32> to tensor<2x16xf32>
// CHECK-NOT: coll.
func.func @all_slice(%arg0: tensor<8x16xf32>) -> tensor<2x16xf32> {
  %0 = shard.all_slice %arg0 on @g grid_axes = [0] slice_axis = 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// On a 2x3 grid over axis 1: the position is the column, rank % 3.
shard.grid @g(shape = 2x3)
// CHECK-LABEL: func.func @all_slice_2d
// CHECK: %[[R:.*]] = arith.index_cast
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[COL:.*]] = arith.remui %[[R]], %[[C3]] : index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[COL]], %[[C4]] : index
// CHECK: tensor.extract_slice %arg0[0, %[[OFF]]] [8, 4] [1, 1] : tensor<8x12xf32> to tensor<8x4xf32>
func.func @all_slice_2d(%arg0: tensor<8x12xf32>) -> tensor<8x4xf32> {
  %0 = shard.all_slice %arg0 on @g grid_axes = [1] slice_axis = 1 : tensor<8x12xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A 2x2 grid: rank = 2 * row + column. Over axis 1 (the columns) the groups
// are the rows {0, 1}, {2, 3}; over axis 0 the columns {0, 2}, {1, 3};
// devices are then the positions in a group. Over both axes in order it is
// one group; over [1, 0] one group in the other order.
shard.grid @g(shape = 2x2)
// CHECK-LABEL: func.func @grid_2x2
// CHECK: "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1>, groups = array<i64: 0, 1, 2, 3>, kind = "sum"
// CHECK: "coll.all_gather"(%{{.*}}) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, groups = array<i64: 0, 2, 1, 3>
// CHECK: "coll.all_reduce"(%{{.*}}) {devices = array<i64: 0, 1, 2, 3>, kind = "max"
// CHECK: "coll.all_reduce"(%{{.*}}) {devices = array<i64: 0, 1, 2, 3>, groups = array<i64: 0, 2, 1, 3>, kind = "min"
func.func @grid_2x2(%arg0: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %0 = shard.all_reduce %arg0 on @g grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = shard.all_gather %0 on @g grid_axes = [0] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %2 = shard.all_reduce %1 on @g grid_axes = [0, 1] reduction = max : tensor<8x8xf32> -> tensor<8x8xf32>
  %3 = shard.all_reduce %2 on @g grid_axes = [1, 0] reduction = min : tensor<8x8xf32> -> tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}

// -----

// A 2x3 grid, axis subsets of every collective; root is a position in each
// group.
shard.grid @g(shape = 2x3)
// CHECK-LABEL: func.func @grid_2x3
// CHECK-SAME: coll.ranks = 6 : i64
// CHECK: "coll.reduce_scatter"(%arg0) {devices = array<i64: 0, 1, 2>, groups = array<i64: 0, 1, 2, 3, 4, 5>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>, scatter_axis = 0 : i64} : (tensor<6x4xf32>) -> (!coll.token, tensor<2x4xf32>)
// CHECK: "coll.all_to_all"(%{{.*}}) {concat_axis = 1 : i64, devices = array<i64: 0, 1>, groups = array<i64: 0, 3, 1, 4, 2, 5>, operandSegmentSizes = array<i32: 1, 0, 0>, split_axis = 0 : i64} : (tensor<2x4xf32>) -> (!coll.token, tensor<1x8xf32>)
// CHECK: "coll.broadcast"(%{{.*}}) {devices = array<i64: 0, 1, 2>, groups = array<i64: 0, 1, 2, 3, 4, 5>, operandSegmentSizes = array<i32: 1, 0, 0>, root = 2 : i64}
// CHECK: "coll.reduce"(%{{.*}}) {devices = array<i64: 0, 1>, groups = array<i64: 0, 3, 1, 4, 2, 5>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>, root = 1 : i64}
func.func @grid_2x3(%arg0: tensor<6x4xf32>) -> tensor<1x8xf32> {
  %0 = shard.reduce_scatter %arg0 on @g grid_axes = [1] scatter_axis = 0 : tensor<6x4xf32> -> tensor<2x4xf32>
  %1 = shard.all_to_all %0 on @g grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<2x4xf32> -> tensor<1x8xf32>
  %2 = shard.broadcast %1 on @g grid_axes = [1] root = [2] : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %3 = shard.reduce %2 on @g grid_axes = [0] root = [1] : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return %3 : tensor<1x8xf32>
}

// -----

// Over no grid axes (or axes of size 1) a collective is the identity.
shard.grid @g(shape = 4x1)
// CHECK-LABEL: func.func @no_axes
// CHECK-NEXT: return %arg0 : tensor<8xf32>
func.func @no_axes(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.all_reduce %arg0 on @g grid_axes = [] : tensor<8xf32> -> tensor<8xf32>
  %1 = shard.all_reduce %0 on @g grid_axes = [1] : tensor<8xf32> -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// The process indices that shard-partition emits: coordinates of the rank.
shard.grid @g(shape = 2x3)
// CHECK-LABEL: func.func @indices
// CHECK: %[[W:.*]] = mpi.comm_world
// CHECK: %[[RANK:.*]] = mpi.comm_rank(%[[W]])
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i32 to index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[ROW:.*]] = arith.divui %[[R]], %[[C3]] : index
// CHECK: return %[[ROW]], %[[R]]
func.func @indices() -> (index, index) {
  %i = shard.process_multi_index on @g axes = [0] : index
  %j = shard.process_linear_index on @g : index
  return %i, %j : index, index
}
