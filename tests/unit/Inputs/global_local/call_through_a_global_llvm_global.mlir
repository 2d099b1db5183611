// An outside attack's case: a call through a global (llvm_global) under MPI; refused where the call is.
// @bump writes an llvm.mlir.global; @scale reads it and scales its operand. No memref.get_global anywhere.
module {
llvm.mlir.global internal @K(1.0 : f32) : f32
func.func @bump() {
  %p = llvm.mlir.addressof @K : !llvm.ptr
  %c = llvm.mlir.constant(3.0 : f32) : f32
  llvm.store %c, %p : f32, !llvm.ptr
  return
}
func.func @scale(%z: memref<4x8xf32>) {
  %p = llvm.mlir.addressof @K : !llvm.ptr
  %k = llvm.load %p : !llvm.ptr -> f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%z : memref<4x8xf32>) {
  ^bb0(%o: f32):
    %s = arith.mulf %o, %k : f32
    linalg.yield %s : f32
  }
  return
}
func.func @f(%x0: memref<4x8xf32>, %x1: memref<4x8xf32>) attributes {llvm.emit_c_interface} {
  %t = "coll.all_reduce"(%x0, %x1, %x0, %x1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  func.call @bump() : () -> ()
  func.call @scale(%x0) : (memref<4x8xf32>) -> ()
  func.call @scale(%x1) : (memref<4x8xf32>) -> ()
  return
}
}
