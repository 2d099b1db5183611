module attributes {coll.peer_access} {
func.func @step(%x0: memref<64xf32>, %x1: memref<64xf32>, %y0: memref<64xf32>, %y1: memref<64xf32>,
                %z0: memref<64xf32>, %w: memref<64xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum",
      operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  %c = arith.constant 1.0 : f32
  %true = arith.constant true
  %alias = arith.select %true, %y0, %w : memref<64xf32>
  linalg.fill ins(%c : f32) outs(%alias : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%y0 : memref<64xf32>) outs(%z0 : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}
}
