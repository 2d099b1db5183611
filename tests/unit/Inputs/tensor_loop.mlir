// Two devices allreduce their loop-carried tensors three times.
func.func @in_loop(%t0: tensor<4xf32>, %t1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %t0, %b = %t1) -> (tensor<4xf32>, tensor<4xf32>) {
    %tok, %x, %y = "coll.all_reduce"(%a, %b) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
        : (tensor<4xf32>, tensor<4xf32>) -> (!coll.token, tensor<4xf32>, tensor<4xf32>)
    scf.yield %x, %y : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
