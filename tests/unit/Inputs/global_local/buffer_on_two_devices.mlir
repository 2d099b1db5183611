// %y1 is device 1's in the first allreduce and device 0's in the second: refused under MPI, at the second.
func.func @f(%a: memref<4xf32>, %b: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  %t = "coll.all_reduce"(%a, %b, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  %t2 = "coll.all_reduce"(%y1, %y0, %y1, %y0) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t2) : (!coll.token) -> ()
  linalg.exp ins(%y0 : memref<4xf32>) outs(%y0 : memref<4xf32>)
  return
}
