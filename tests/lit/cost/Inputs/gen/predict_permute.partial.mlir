module {
  func.func @permute(%arg0: memref<1024xf32>, %arg1: memref<1024xf32>, %arg2: memref<1024xf32>, %arg3: memref<1024xf32>, %arg4: memref<1024xf32>, %arg5: memref<1024xf32>, %arg6: memref<1024xf32>, %arg7: memref<1024xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.permute"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) {devices = array<i64: 0, 1, 2, 3>, operandSegmentSizes = array<i32: 4, 4, 0>, pairs = array<i64: 0, 3, 3, 1, 2, 2>} : (memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1024xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
