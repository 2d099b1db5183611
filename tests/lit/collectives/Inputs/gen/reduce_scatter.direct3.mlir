module {
  func.func @reduce_scatter(%arg0: memref<6xf32>, %arg1: memref<6xf32>, %arg2: memref<6xf32>, %arg3: memref<2xf32>, %arg4: memref<2xf32>, %arg5: memref<2xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.reduce_scatter"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {devices = array<i64: 0, 1, 2>, kind = "sum", operandSegmentSizes = array<i32: 3, 3, 0>, scatter_axis = 0 : i64, strategy = "direct"} : (memref<6xf32>, memref<6xf32>, memref<6xf32>, memref<2xf32>, memref<2xf32>, memref<2xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
