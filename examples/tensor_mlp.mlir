// A frontend's function on tensors: a matmul per device, their allreduce
// and an elementwise exp, in the tensor form of coll.all_reduce. Run it:
//   coll-opt examples/tensor_mlp.mlir --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},coll-check-results)'
func.func @mlp(%x0: tensor<2x4xf32>, %x1: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x3xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %m0 = linalg.matmul ins(%x0, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z0 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e1 = tensor.empty() : tensor<2x3xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %m1 = linalg.matmul ins(%x1, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z1 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %t, %s0, %s1 = "coll.all_reduce"(%m0, %m1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<2x3xf32>, tensor<2x3xf32>) -> (!coll.token, tensor<2x3xf32>, tensor<2x3xf32>)
  %r0 = linalg.exp ins(%s0 : tensor<2x3xf32>) outs(%s0 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %r1 = linalg.exp ins(%s1 : tensor<2x3xf32>) outs(%s1 : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r0, %r1 : tensor<2x3xf32>, tensor<2x3xf32>
}
