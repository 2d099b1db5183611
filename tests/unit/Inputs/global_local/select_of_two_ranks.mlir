// A select between two devices' buffers: which rank stores is not known.
func.func @main(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  %i0 = arith.constant 0 : index
  %f = arith.constant 7.0 : f32
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  %v = memref.load %y0[%i0] : memref<8xf32>
  %z = arith.constant 50.0 : f32
  %c = arith.cmpf ogt, %v, %z : f32
  %s = arith.select %c, %y0, %y1 : memref<8xf32>
  memref.store %f, %s[%i0] : memref<8xf32>
  return
}
