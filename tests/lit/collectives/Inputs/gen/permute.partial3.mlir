module {
  func.func @permute(%arg0: memref<5xf32>, %arg1: memref<5xf32>, %arg2: memref<5xf32>, %arg3: memref<5xf32>, %arg4: memref<5xf32>, %arg5: memref<5xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.permute"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {devices = array<i64: 0, 1, 2>, operandSegmentSizes = array<i32: 3, 3, 0>, pairs = array<i64: 0, 2, 2, 1>} : (memref<5xf32>, memref<5xf32>, memref<5xf32>, memref<5xf32>, memref<5xf32>, memref<5xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
