module {
  func.func @permute(%arg0: memref<2x3xi32>, %arg1: memref<2x3xi32>, %arg2: memref<2x3xi32>, %arg3: memref<2x3xi32>, %arg4: memref<2x3xi32>, %arg5: memref<2x3xi32>, %arg6: memref<2x3xi32>, %arg7: memref<2x3xi32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.permute"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) {devices = array<i64: 0, 1, 2, 3>, operandSegmentSizes = array<i32: 4, 4, 0>, pairs = array<i64: 0, 1, 1, 2, 2, 3, 3, 0>, strategy = "direct"} : (memref<2x3xi32>, memref<2x3xi32>, memref<2x3xi32>, memref<2x3xi32>, memref<2x3xi32>, memref<2x3xi32>, memref<2x3xi32>, memref<2x3xi32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
