// An outside attack's case: a call through a global (exec_region) under MPI; refused where the call is.
// A call whose callee writes a global that local work on two devices reads (an outside attack's case): under MPI
// each rank has its own @G; coll-to-mpi dropped the call (a wrong number) and now refuses it.
#id = affine_map<(i, j) -> (i, j)>
module {
memref.global "private" @G : memref<4x8xf32> = dense<1.0>
func.func @bump() {
  %g = memref.get_global @G : memref<4x8xf32>
  %c = arith.constant 3.0 : f32
  linalg.fill ins(%c : f32) outs(%g : memref<4x8xf32>)
  return
}
func.func @f(%x0: memref<4x8xf32>, %x1: memref<4x8xf32>, %z0: memref<4x8xf32>, %z1: memref<4x8xf32>) attributes {llvm.emit_c_interface} {
  %t = "coll.all_reduce"(%x0, %x1, %x0, %x1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  scf.execute_region {
    func.call @bump() : () -> ()
    scf.yield
  }
  %g = memref.get_global @G : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x0, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%z0 : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x1, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%z1 : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}
}
