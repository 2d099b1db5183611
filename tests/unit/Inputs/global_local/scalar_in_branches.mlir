// A loaded scalar feeding a loop, comparisons and scf.if around each device's work.
func.func @f(%k: memref<1xf32>, %x0: memref<4xf32>, %x1: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f32
  %v = memref.load %k[%c0] : memref<1xf32>
  scf.for %i = %c0 to %c3 step %c1 {

    %e = memref.load %x1[%i] : memref<4xf32>
    %e2 = arith.addf %e, %v : f32
    memref.store %e2, %x1[%i] : memref<4xf32>
  }
  %cond = arith.cmpf ogt, %v, %z : f32
  scf.if %cond {
    linalg.exp ins(%x0 : memref<4xf32>) outs(%x0 : memref<4xf32>)
  }
  %nc = arith.cmpf ole, %v, %z : f32
  scf.if %nc {
    linalg.negf ins(%x1 : memref<4xf32>) outs(%x1 : memref<4xf32>)
  }
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  scf.for %i = %c0 to %c3 step %c1 {
    %e = memref.load %y1[%i] : memref<4xf32>
    %e2 = arith.mulf %e, %v : f32
    memref.store %e2, %y1[%i] : memref<4xf32>
  }
  return
}
