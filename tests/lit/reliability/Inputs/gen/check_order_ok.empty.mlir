module {
  func.func @all_reduce(%arg0: memref<12xf32>, %arg1: memref<12xf32>, %arg2: memref<12xf32>, %arg3: memref<12xf32>, %arg4: memref<12xf32>, %arg5: memref<12xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_reduce"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {devices = array<i64: 0, 1, 2, 3, 4>, kind = "sum", operandSegmentSizes = array<i32: 5, 1, 0>, to_device = 7 : i64} : (memref<12xf32>, memref<12xf32>, memref<12xf32>, memref<12xf32>, memref<12xf32>, memref<12xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
