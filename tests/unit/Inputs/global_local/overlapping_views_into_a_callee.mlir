func.func private @ar(%a: memref<8xf32, strided<[1]>>, %b: memref<8xf32, strided<[1]>>, %c: memref<8xf32, strided<[1], offset: 4>>, %d: memref<8xf32, strided<[1], offset: 4>>) {
  %t = "coll.all_reduce"(%a, %b, %c, %d) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1], offset: 4>>, memref<8xf32, strided<[1], offset: 4>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
func.func @f(%x0: memref<16xf32>, %x1: memref<8xf32>, %y1: memref<12xf32>) attributes {llvm.emit_c_interface} {
  %a = memref.subview %x0[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  %c = memref.subview %x0[4] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>>
  %b = memref.cast %x1 : memref<8xf32> to memref<8xf32, strided<[1]>>
  %d = memref.subview %y1[4] [8] [1] : memref<12xf32> to memref<8xf32, strided<[1], offset: 4>>
  func.call @ar(%a, %b, %c, %d) : (memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1], offset: 4>>, memref<8xf32, strided<[1], offset: 4>>) -> ()
  return
}
