module {
  func.func @all_gather(%arg0: memref<300000x1xi8>, %arg1: memref<300000x1xi8>, %arg2: memref<300000x1xi8>, %arg3: memref<300000x3xi8>, %arg4: memref<300000x3xi8>, %arg5: memref<300000x3xi8>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_gather"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {devices = array<i64: 0, 1, 2>, gather_axis = 1 : i64, operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<300000x1xi8>, memref<300000x1xi8>, memref<300000x1xi8>, memref<300000x3xi8>, memref<300000x3xi8>, memref<300000x3xi8>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
