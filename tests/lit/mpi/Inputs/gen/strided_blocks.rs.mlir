module {
  func.func @reduce_scatter(%arg0: memref<3000x2xf32>, %arg1: memref<3000x2xf32>, %arg2: memref<3000x1xf32>, %arg3: memref<3000x1xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.reduce_scatter"(%arg0, %arg1, %arg2, %arg3) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>, scatter_axis = 1 : i64} : (memref<3000x2xf32>, memref<3000x2xf32>, memref<3000x1xf32>, memref<3000x1xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
