func.func @bad_kind(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %y0) {kind = "avg", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}
// -----
func.func @mixed_shapes(%x0: memref<8xf32>, %x1: memref<4xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<4xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}
