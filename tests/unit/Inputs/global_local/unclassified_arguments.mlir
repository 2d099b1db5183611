// Inputs written before the collective: the arguments are not classified, all given, read back in place.
func.func @f(%k: memref<1xf32>, %x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %v = memref.load %k[%c0] : memref<1xf32>
  linalg.fill ins(%v : f32) outs(%x0 : memref<4xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %v, %x1[%i] : memref<4xf32>
  }
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
