module {
  func.func @all_to_all(%arg0: memref<2x8xf32>, %arg1: memref<2x8xf32>, %arg2: memref<2x8xf32>, %arg3: memref<2x8xf32>, %arg4: memref<8x2xf32>, %arg5: memref<8x2xf32>, %arg6: memref<8x2xf32>, %arg7: memref<8x2xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_to_all"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7) {concat_axis = 0 : i64, devices = array<i64: 0, 1, 2, 3>, operandSegmentSizes = array<i32: 4, 4, 0>, split_axis = 1 : i64} : (memref<2x8xf32>, memref<2x8xf32>, memref<2x8xf32>, memref<2x8xf32>, memref<8x2xf32>, memref<8x2xf32>, memref<8x2xf32>, memref<8x2xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
