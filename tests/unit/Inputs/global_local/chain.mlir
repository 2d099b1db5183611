// Local work before, between and after four collectives on 3 devices (an outside attack's case).
func.func @f(%x0: memref<6xf32>, %x1: memref<6xf32>, %x2: memref<6xf32>, %k: memref<6xf32>,
             %a0: memref<6xf32>, %a1: memref<6xf32>, %a2: memref<6xf32>,
             %g0: memref<18xf32>, %g1: memref<18xf32>, %g2: memref<18xf32>,
             %r: memref<18xf32>) {
  linalg.exp ins(%x0 : memref<6xf32>) outs(%a0 : memref<6xf32>)
  linalg.add ins(%x1, %k : memref<6xf32>, memref<6xf32>) outs(%a1 : memref<6xf32>)
  linalg.mul ins(%x2, %k : memref<6xf32>, memref<6xf32>) outs(%a2 : memref<6xf32>)
  %t = "coll.all_reduce"(%a0, %a1, %a2, %a0, %a1, %a2) {devices = array<i64: 0, 1, 2>, kind = "sum", operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<6xf32>, memref<6xf32>, memref<6xf32>, memref<6xf32>, memref<6xf32>, memref<6xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.add ins(%a1, %k : memref<6xf32>, memref<6xf32>) outs(%a1 : memref<6xf32>)
  %t2 = "coll.broadcast"(%a1, %a0, %a1, %a2) {devices = array<i64: 0, 1, 2>, root = 1 : i64, operandSegmentSizes = array<i32: 1, 3, 0>} : (memref<6xf32>, memref<6xf32>, memref<6xf32>, memref<6xf32>) -> !coll.token
  "coll.wait"(%t2) : (!coll.token) -> ()
  linalg.mul ins(%a0, %a0 : memref<6xf32>, memref<6xf32>) outs(%a0 : memref<6xf32>)
  linalg.exp ins(%a2 : memref<6xf32>) outs(%a2 : memref<6xf32>)
  %t3 = "coll.all_gather"(%a0, %a1, %a2, %g0, %g1, %g2) {devices = array<i64: 0, 1, 2>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<6xf32>, memref<6xf32>, memref<6xf32>, memref<18xf32>, memref<18xf32>, memref<18xf32>) -> !coll.token
  "coll.wait"(%t3) : (!coll.token) -> ()
  %t4 = "coll.reduce"(%g0, %g1, %g2, %r) {devices = array<i64: 0, 1, 2>, root = 2 : i64, kind = "max", operandSegmentSizes = array<i32: 3, 1, 0>} : (memref<18xf32>, memref<18xf32>, memref<18xf32>, memref<18xf32>) -> !coll.token
  "coll.wait"(%t4) : (!coll.token) -> ()
  linalg.negf ins(%r : memref<18xf32>) outs(%r : memref<18xf32>)
  return
}
