// The two-layer MLP of mlp_shard_4.mlir on a 2x2 grid (axis 0: the
// contracting dimension of layer 1, axis 1: the batch):
//   h = relu(x @ w1)   x split [[1], [0]], w1 split [[0]]: partial sums over
//                      axis 0 -> all_reduce within each column of the grid
//                      (grid_axes = [0]: groups {0, 2} and {1, 3})
//   y = h @ w2         w2 split on its output dimension over axis 0: y is
//                      returned split [[1], [0]], and coll-run gathers it.
// LLVM 22.1.8's shard-partition reshards only on 1-D grids (it aborts
// otherwise), so every sharding here needs none: a partial sum over one
// axis, and a split result.
//
//   coll-run examples/mlp_shard_2x2.mlir --backend=mpi --ranks 4
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  shard.grid @grid(shape = 2x2)
  func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
    %sx = shard.sharding @grid split_axes = [[1], [0]] : !shard.sharding
    %x1 = shard.shard %x to %sx : tensor<8x16xf32>
    %sw1 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
    %w1s = shard.shard %w1 to %sw1 : tensor<16x32xf32>
    %sw2 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
    %w2s = shard.shard %w2 to %sw2 : tensor<32x16xf32>
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<8x32xf32>
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %h = linalg.matmul ins(%x1, %w1s : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %sbatch = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %hr = shard.shard %h to %sbatch : tensor<8x32xf32>
    %hr2 = shard.shard %hr to %sbatch annotate_for_users : tensor<8x32xf32>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%hr2 : tensor<8x32xf32>) outs(%e1 : tensor<8x32xf32>) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<8x32xf32>
    %e2 = tensor.empty() : tensor<8x16xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %y = linalg.matmul ins(%r, %w2s : tensor<8x32xf32>, tensor<32x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %sy = shard.sharding @grid split_axes = [[1], [0]] : !shard.sharding
    %ys = shard.shard %y to %sy : tensor<8x16xf32>
    return %ys : tensor<8x16xf32>
  }
}
