module {
  func.func @permute(%arg0: memref<8xf32>, %arg1: memref<8xf32>, %arg2: memref<8xf32>, %arg3: memref<8xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.permute"(%arg0, %arg1, %arg2, %arg3) {devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>, pairs = array<i64: 0, 1, 1, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
