// A two-layer MLP on tensors in upstream MLIR, annotated for a grid of 4:
//   h = relu(x @ w1)   layer 1 split on its contracting dimension (16):
//                      every process holds a partial sum -> all_reduce
//   y = h @ w2         layer 2 split on its output dimension (16): every
//                      process computes 4 columns -> all_gather (y is
//                      returned replicated)
// coll-run partitions it (sharding-propagation, shard-partition), converts
// the collectives (coll-from-shard), runs it under mpirun and checks the
// gathered result against the same function run unsharded:
//
//   coll-run examples/mlp_shard_4.mlir --backend=mpi --ranks 4
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  shard.grid @grid(shape = 4)
  func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
    %sx = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
    %x1 = shard.shard %x to %sx : tensor<8x16xf32>
    %sw1 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
    %w1s = shard.shard %w1 to %sw1 : tensor<16x32xf32>
    %sw2 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
    %w2s = shard.shard %w2 to %sw2 : tensor<32x16xf32>
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<8x32xf32>
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %h = linalg.matmul ins(%x1, %w1s : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %srep = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %hr = shard.shard %h to %srep : tensor<8x32xf32>
    %hr2 = shard.shard %hr to %srep annotate_for_users : tensor<8x32xf32>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%hr2 : tensor<8x32xf32>) outs(%e1 : tensor<8x32xf32>) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<8x32xf32>
    %e2 = tensor.empty() : tensor<8x16xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %y = linalg.matmul ins(%r, %w2s : tensor<8x32xf32>, tensor<32x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %scol = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
    %ys = shard.shard %y to %scol : tensor<8x16xf32>
    %yr = shard.shard %ys to %srep annotate_for_users : tensor<8x16xf32>
    return %yr : tensor<8x16xf32>
  }
}
