// An explicit program of the user's (y1 = x1 + x1: wrong) in a called function, with no
// coll.implements: the plain program would run it as it is (an outside attack: `ok`).
  func.func private @ar(%arg0: memref<8xf32>, %arg1: memref<8xf32>, %arg2: memref<8xf32>, %arg3: memref<8xf32>) {
    %memspacecast = memref.memory_space_cast %arg0 : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
    %memspacecast_0 = memref.memory_space_cast %arg1 : memref<8xf32> to memref<8xf32, #coll.device<1 : i64>>
    %memspacecast_1 = memref.memory_space_cast %arg2 : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
    %memspacecast_2 = memref.memory_space_cast %arg3 : memref<8xf32> to memref<8xf32, #coll.device<1 : i64>>
    %0 = "coll.alloc"() : () -> memref<8xf32, #coll.device<0 : i64>>
    %1 = "coll.copy"(%memspacecast_0, %0) : (memref<8xf32, #coll.device<1 : i64>>, memref<8xf32, #coll.device<0 : i64>>) -> !coll.token
    %2 = "coll.combine"(%memspacecast, %0, %memspacecast_1, %1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (memref<8xf32, #coll.device<0 : i64>>, memref<8xf32, #coll.device<0 : i64>>, memref<8xf32, #coll.device<0 : i64>>, !coll.token) -> !coll.token
    %3 = "coll.alloc"() : () -> memref<8xf32, #coll.device<1 : i64>>
    %4 = "coll.copy"(%memspacecast, %3) : (memref<8xf32, #coll.device<0 : i64>>, memref<8xf32, #coll.device<1 : i64>>) -> !coll.token
    %5 = "coll.combine"(%memspacecast_0, %memspacecast_0, %memspacecast_2, %4) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (memref<8xf32, #coll.device<1 : i64>>, memref<8xf32, #coll.device<1 : i64>>, memref<8xf32, #coll.device<1 : i64>>, !coll.token) -> !coll.token
    %6 = "coll.join"(%2, %5) : (!coll.token, !coll.token) -> !coll.token
    "coll.wait"(%6) : (!coll.token) -> ()
    return
}
func.func @main(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  func.call @ar(%x0, %x1, %y0, %y1) : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return
}
