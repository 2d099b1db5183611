// Two matmuls whose accumulators have one shape (a hidden size equal to the
// model size), sharded differently by propagation: column-split, then a
// partial sum. coll-shard-partition runs no cse between upstream's
// sharding-propagation and shard-partition: cse would make the two
// tensor.empty + linalg.fill one value, and shard-partition (22.1.8)
// aborts on it (Assertion `gridOp' failed).
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-shard-partition)' | FileCheck %s

// CHECK-LABEL: func.func @mlp(%arg0: tensor<8x16xf32>, %arg1: tensor<16x2xf32>, %arg2: tensor<2x16xf32>) -> tensor<8x16xf32>
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<8x16xf32>, tensor<16x2xf32>)
// CHECK: linalg.matmul ins({{.*}}, %arg2 : tensor<8x2xf32>, tensor<2x16xf32>)
// CHECK: shard.all_reduce {{.*}} on @mesh grid_axes = [0] : tensor<8x16xf32> -> tensor<8x16xf32>
module {
  shard.grid @mesh(shape = 8)
  func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x16xf32>) -> tensor<8x16xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %s1 = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding
    %a1 = shard.shard %w1 to %s1 : tensor<16x16xf32>
    %s2 = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
    %a2 = shard.shard %w2 to %s2 : tensor<16x16xf32>
    %e0 = tensor.empty() : tensor<8x16xf32>
    %f0 = linalg.fill ins(%cst : f32) outs(%e0 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h = linalg.matmul ins(%x, %a1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f0 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %e1 = tensor.empty() : tensor<8x16xf32>
    %f1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %y = linalg.matmul ins(%h, %a2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f1 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %sr = shard.sharding @mesh split_axes = [[]] : !shard.sharding
    %ys = shard.shard %y to %sr : tensor<8x16xf32>
    %yr = shard.shard %ys to %sr annotate_for_users : tensor<8x16xf32>
    return %yr : tensor<8x16xf32>
  }
}
