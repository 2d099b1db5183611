module {
  func.func @all_gather(%arg0: memref<4x2xf32>, %arg1: memref<4x2xf32>, %arg2: memref<4x2xf32>, %arg3: memref<4x6xf32>, %arg4: memref<4x6xf32>, %arg5: memref<4x6xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_gather"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {devices = array<i64: 0, 1, 2>, gather_axis = 1 : i64, operandSegmentSizes = array<i32: 3, 3, 0>, strategy = "ring"} : (memref<4x2xf32>, memref<4x2xf32>, memref<4x2xf32>, memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
