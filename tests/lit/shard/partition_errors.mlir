// coll-shard-partition runs upstream's partitioning in a child mlir-opt; when
// it fails, the error is at the op the child named (its location, a JAX
// line in an export), not at the function.
// RUN: coll-opt %s --verify-diagnostics --coll-shard-partition

#bcast = affine_map<(d0, d1) -> (0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @g(shape = 4)
func.func @bias(%bias: tensor<1x8xf32>, %x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x8xf32>
  // expected-error @+1 {{coll-shard-partition: upstream shard-partition failed: 'linalg.generic' op fail to get sharding option}}
  %r = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<1x8xf32>) outs(%xs : tensor<8x8xf32>) {
  ^bb0(%b: f32, %o: f32):
    %t = arith.addf %b, %o : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
