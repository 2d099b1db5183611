// An argument nothing uses: rank 0 holds it (it was refused as 'placed on no device').
func.func @f(%x0: memref<4xf32>, %x1: memref<4xf32>, %unused: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
