module {
  func.func @reduce(%arg0: memref<4xf32>, %arg1: memref<4xf32>, %arg2: memref<4xf32>, %arg3: memref<4xf32>, %arg4: memref<4xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.reduce"(%arg0, %arg1, %arg2, %arg3, %arg4) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 4, 1, 0>, root = 0 : i64, strategy = "tree"} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
