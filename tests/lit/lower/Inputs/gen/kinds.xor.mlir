module {
  func.func @all_reduce(%arg0: memref<48xi64>, %arg1: memref<48xi64>, %arg2: memref<48xi64>, %arg3: memref<48xi64>, %arg4: memref<48xi64>, %arg5: memref<48xi64>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_reduce"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {devices = array<i64: 0, 1, 2>, kind = "xor", operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<48xi64>, memref<48xi64>, memref<48xi64>, memref<48xi64>, memref<48xi64>, memref<48xi64>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
