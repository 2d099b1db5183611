func.func @race(%x: memref<8xf32, #coll.device<0>>, %w: memref<8xf32, #coll.device<0>>, %y: memref<8xf32, #coll.device<1>>) {
  %t0 = "coll.copy"(%x, %y) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<1>>) -> !coll.token
  %t1 = "coll.copy"(%w, %y) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<1>>) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}
