func.func private @h(%x0: memref<64xf32>, %x1: memref<64xf32>, %y0: memref<64xf32>, %y1: memref<64xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
func.func @main(%x0: memref<64xf32>, %x1: memref<64xf32>, %y0: memref<64xf32>, %y1: memref<64xf32>) {
  call @h(%x0, %x1, %y0, %y1) : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> ()
  linalg.add ins(%y0, %y0 : memref<64xf32>, memref<64xf32>) outs(%y1 : memref<64xf32>)
  return
}
