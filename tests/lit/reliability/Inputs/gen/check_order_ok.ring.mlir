module {
  func.func @all_reduce(%arg0: memref<203xf32>, %arg1: memref<203xf32>, %arg2: memref<203xf32>, %arg3: memref<203xf32>, %arg4: memref<203xf32>, %arg5: memref<203xf32>, %arg6: memref<203xf32>, %arg7: memref<203xf32>, %arg8: memref<203xf32>, %arg9: memref<203xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_reduce"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %arg9) {devices = array<i64: 0, 1, 2, 3, 4>, kind = "sum", operandSegmentSizes = array<i32: 5, 5, 0>} : (memref<203xf32>, memref<203xf32>, memref<203xf32>, memref<203xf32>, memref<203xf32>, memref<203xf32>, memref<203xf32>, memref<203xf32>, memref<203xf32>, memref<203xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
