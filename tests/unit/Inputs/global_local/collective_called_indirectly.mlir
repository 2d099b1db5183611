func.func private @ar(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>, %d: memref<8xf32>) {
  %t = "coll.all_reduce"(%a, %b, %c, %d) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
func.func @f(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) attributes {llvm.emit_c_interface} {
  %fn = func.constant @ar : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  func.call_indirect %fn(%x0, %x1, %y0, %y1) : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return
}
