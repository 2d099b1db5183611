module {
  func.func @all_gather(%arg0: memref<2xf32>, %arg1: memref<2xf32>, %arg2: memref<4xf32>, %arg3: memref<4xf32>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_gather"(%arg0, %arg1, %arg2, %arg3) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 0>, strategy = "ring"} : (memref<2xf32>, memref<2xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
