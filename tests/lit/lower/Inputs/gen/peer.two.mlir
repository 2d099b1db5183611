module attributes {coll.peer_access} {
  func.func @all_reduce(%arg0: memref<1000xf32>, %arg1: memref<1000xf32>, %arg2: memref<1000xf32>, %arg3: memref<1000xf32>, %arg4: memref<1000xf32>, %arg5: memref<1000xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_reduce"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {devices = array<i64: 0, 1, 2>, kind = "sum", operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<1000xf32>, memref<1000xf32>, memref<1000xf32>, memref<1000xf32>, memref<1000xf32>, memref<1000xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
