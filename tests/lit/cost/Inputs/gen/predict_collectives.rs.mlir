module {
  func.func @reduce_scatter(%arg0: memref<1024xf32>, %arg1: memref<1024xf32>, %arg2: memref<1024xf32>, %arg3: memref<1024xf32>, %arg4: memref<256xf32>, %arg5: memref<256xf32>, %arg6: memref<256xf32>, %arg7: memref<256xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.reduce_scatter"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 4, 4, 0>, scatter_axis = 0 : i64} : (memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<256xf32>, memref<256xf32>, memref<256xf32>, memref<256xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
