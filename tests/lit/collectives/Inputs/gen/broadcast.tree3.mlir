module {
  func.func @broadcast(%arg0: memref<8xf32>, %arg1: memref<8xf32>, %arg2: memref<8xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.broadcast"(%arg0, %arg1, %arg2, %arg0) {devices = array<i64: 0, 1, 2>, operandSegmentSizes = array<i32: 1, 3, 0>, root = 2 : i64, strategy = "tree"} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
