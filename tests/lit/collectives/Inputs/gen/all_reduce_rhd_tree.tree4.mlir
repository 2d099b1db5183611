module {
  func.func @all_reduce(%arg0: memref<8xf32>, %arg1: memref<8xf32>, %arg2: memref<8xf32>, %arg3: memref<8xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_reduce"(%arg0, %arg1, %arg2, %arg3, %arg0, %arg1, %arg2, %arg3) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 4, 4, 0>, strategy = "tree"} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
