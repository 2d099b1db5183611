func.func @f(%x0: memref<8xf32>, %x1: memref<8xi32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xi32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}
