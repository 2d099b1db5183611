// Tensor form: the root's work before a broadcast, per-device work, an all_gather, an unused input.
func.func @t(%x0: tensor<4xf32>, %x1: tensor<4xf32>, %x2: tensor<4xf32>, %k: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<12xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a1 = linalg.add ins(%x1, %k : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %t, %b0, %b1, %b2 = "coll.broadcast"(%a1) {devices = array<i64: 0, 1, 2>, root = 1 : i64, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4xf32>) -> (!coll.token, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %e0 = tensor.empty() : tensor<4xf32>
  %c0 = linalg.mul ins(%b0, %x0 : tensor<4xf32>, tensor<4xf32>) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %c2 = linalg.exp ins(%b2 : tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %t2, %g0, %g1, %g2 = "coll.all_gather"(%c0, %b1, %c2) {devices = array<i64: 0, 1, 2>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 3, 0, 0>} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (!coll.token, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>)
  %e3 = tensor.empty() : tensor<12xf32>
  %n = linalg.negf ins(%g2 : tensor<12xf32>) outs(%e3 : tensor<12xf32>) -> tensor<12xf32>
  return %c0, %c2, %n : tensor<4xf32>, tensor<4xf32>, tensor<12xf32>
}
