module attributes {coll.peer_access} {
func.func @step(%x: memref<48xf32>, %z: memref<48xf32>) attributes {coll.ranks = 2 : i64} {
  %raw = memref.alloc() : memref<196xi8>
  %c0 = arith.constant 0 : index
  %zb = arith.constant 0 : i8
  linalg.fill ins(%zb : i8) outs(%raw : memref<196xi8>)
  %y = memref.view %raw[%c0][] : memref<196xi8> to memref<48xf32>
  %c4 = arith.constant 4 : index
  %yi = memref.view %raw[%c4][] : memref<196xi8> to memref<48xf32>
  %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum",
      operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<48xf32>, memref<48xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%yi : memref<48xf32>) outs(%z : memref<48xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %raw : memref<196xi8>
  return
}
}
