module {
  func.func @broadcast(%arg0: memref<12xf32>, %arg1: memref<12xf32>, %arg2: memref<12xf32>, %arg3: memref<12xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.broadcast"(%arg0, %arg1, %arg2, %arg3) {devices = array<i64: 0, 1, 2>, operandSegmentSizes = array<i32: 1, 3, 0>, root = 3 : i64, strategy = "ring"} : (memref<12xf32>, memref<12xf32>, memref<12xf32>, memref<12xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
