// coll-from-shard refuses what it cannot convert, at the op, and never
// leaves a shard op behind.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-from-shard

shard.grid @g(shape = 4)
func.func @average(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @below {{coll-from-shard: 'shard.all_reduce' reduction 'average' has no coll reduction kind; expected one of: sum, product, max, min, bitwise_and, bitwise_or, bitwise_xor}}
  %0 = shard.all_reduce %a on @g grid_axes = [0] reduction = average : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @g(shape = 4)
func.func @generic(%a: tensor<8xf32>) -> tensor<2xf32> {
  // expected-error @below {{reduction 'generic' has no coll reduction kind}}
  %0 = shard.reduce_scatter %a on @g grid_axes = [0] reduction = generic scatter_axis = 0 : tensor<8xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

shard.grid @g(shape = ?x2)
func.func @dynamic_grid(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @below {{grid @g has dynamic shape ?x2; coll-from-shard needs a static grid (the number of ranks is fixed at compile time)}}
  %0 = shard.all_reduce %a on @g grid_axes = [1] : tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @g(shape = 4)
func.func @dynamic_shape(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @below {{'shard.all_reduce' on tensor<?xf32>: coll-from-shard needs static shapes, expected a tensor with no dynamic dimension}}
  %0 = shard.all_reduce %a on @g grid_axes = [0] : tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

shard.grid @g(shape = 4)
func.func @memref(%a: memref<8xf32>) -> memref<8xf32> {
  // expected-error @below {{'shard.all_reduce' on memref<8xf32>: coll-from-shard converts shard collectives on tensors (before bufferization), expected a ranked tensor}}
  %0 = shard.all_reduce %a on @g grid_axes = [0] : memref<8xf32> -> memref<8xf32>
  return %0 : memref<8xf32>
}

// -----

shard.grid @g(shape = 4)
func.func @element_type(%a: tensor<8xf32>) -> tensor<8xf64> {
  // expected-error @below {{'shard.all_reduce' converts tensor<8xf32> to tensor<8xf64>; coll collectives keep the element type, expected the same element type}}
  %0 = shard.all_reduce %a on @g grid_axes = [0] : tensor<8xf32> -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// -----

// An unpartitioned program: its annotations are not collectives.
shard.grid @g(shape = 4)
func.func @not_partitioned(%a: tensor<8xf32>) -> tensor<8xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @below {{'shard.shard' has no coll form; coll-from-shard converts shard.all_gather, shard.all_reduce, shard.all_to_all, shard.broadcast, shard.reduce, shard.reduce_scatter, shard.all_slice and the process index ops (partition with shard-partition first)}}
  %0 = shard.shard %a to %s : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @g(shape = 4)
shard.grid @h(shape = 2)
func.func @two_sizes(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = shard.all_reduce %a on @g grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  // expected-error @below {{'shard.all_reduce' runs on grid @h of 2 processes, but this function also uses grid @g of 4; expected grids of one size (one rank per process)}}
  %1 = shard.all_reduce %0 on @h grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
