module {
  func.func @reduce(%arg0: memref<1024xf32>, %arg1: memref<1024xf32>, %arg2: memref<1024xf32>, %arg3: memref<1024xf32>, %arg4: memref<1024xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.reduce"(%arg0, %arg1, %arg2, %arg3, %arg4) {devices = array<i64: 0, 1, 2, 3>, kind = "max", operandSegmentSizes = array<i32: 4, 1, 0>, root = 2 : i64} : (memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1024xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
