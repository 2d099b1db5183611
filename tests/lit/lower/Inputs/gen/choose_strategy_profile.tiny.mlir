module {
  func.func @all_reduce(%arg0: memref<4xf32>, %arg1: memref<4xf32>, %arg2: memref<4xf32>, %arg3: memref<4xf32>, %arg4: memref<4xf32>, %arg5: memref<4xf32>, %arg6: memref<4xf32>, %arg7: memref<4xf32>, %arg8: memref<4xf32>, %arg9: memref<4xf32>, %arg10: memref<4xf32>, %arg11: memref<4xf32>, %arg12: memref<4xf32>, %arg13: memref<4xf32>, %arg14: memref<4xf32>, %arg15: memref<4xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_reduce"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %arg9, %arg10, %arg11, %arg12, %arg13, %arg14, %arg15) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "sum", operandSegmentSizes = array<i32: 8, 8, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
