// A tensor collective given straight to the explicit lowering.
func.func @gather(%t0: tensor<4xf32>, %t1: tensor<4xf32>) -> tensor<8xf32> {
  // the op below is line 4
  %tok, %r0, %r1 = "coll.all_gather"(%t0, %t1) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<4xf32>, tensor<4xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return %r0 : tensor<8xf32>
}
