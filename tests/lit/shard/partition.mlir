// coll-shard-partition runs upstream's sharding-propagation and
// shard-partition in a child mlir-opt: LLVM 22.1.8 aborts on resharding
// over a grid of more than one axis, and the user gets a located error
// instead of a crash. Returning y replicated needs an all_gather over axis 0
// of the 2x2 grid here (mlp_shard_2x2.mlir returns it split instead).
// RUN: coll-opt %s --verify-diagnostics --pass-pipeline='builtin.module(coll-shard-partition)'

module {
  shard.grid @grid(shape = 2x2)
  func.func @f(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>) -> tensor<8x8xf32> {
    // expected-error @below {{coll-shard-partition: upstream shard-partition aborted (Assertion `grid.getRank() == 1 && "Only 1D grides are currently supported."' failed.): LLVM 22.1.8 reshards only on 1-D grids, and grid @grid is 2x2; expected shardings on it that need no resharding (a partial sum over some axes, results returned as they are split)}}
    %sw = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
    %w1 = shard.shard %w to %sw : tensor<16x8xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    %y = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
    %sy = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
    %ys = shard.shard %y to %sy : tensor<8x8xf32>
    %sr = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %yr = shard.shard %ys to %sr annotate_for_users : tensor<8x8xf32>
    return %yr : tensor<8x8xf32>
  }
}
