module {
  func.func @all_to_all(%arg0: memref<300000x2xi8>, %arg1: memref<300000x2xi8>, %arg2: memref<150000x4xi8>, %arg3: memref<150000x4xi8>) attributes {llvm.emit_c_interface} {
    %0 = "coll.all_to_all"(%arg0, %arg1, %arg2, %arg3) {concat_axis = 1 : i64, devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>, split_axis = 0 : i64} : (memref<300000x2xi8>, memref<300000x2xi8>, memref<150000x4xi8>, memref<150000x4xi8>) -> !coll.token
    "coll.wait"(%0) : (!coll.token) -> ()
    return
  }
}
