// A scalar loaded from an input, through arith, used by device 1's work only: the load runs on rank 1.
func.func @f(%k: memref<1xf32>, %x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %k[%c0] : memref<1xf32>
  %w = arith.addf %v, %v : f32
  linalg.fill ins(%w : f32) outs(%x1 : memref<4xf32>)
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
