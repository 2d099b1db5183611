module {
  func.func @all_reduce(%arg0: memref<48xi1>, %arg1: memref<48xi1>, %arg2: memref<48xi1>, %arg3: memref<48xi1>, %arg4: memref<48xi1>, %arg5: memref<48xi1>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_reduce"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {devices = array<i64: 0, 1, 2>, kind = "and", operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<48xi1>, memref<48xi1>, memref<48xi1>, memref<48xi1>, memref<48xi1>, memref<48xi1>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
