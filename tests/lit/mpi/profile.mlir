// coll-profile-collectives on the MPI route (coll-run --backend=mpi
// --profile): placed after coll-to-mpi, it brackets each rank's run of
// messages, waits and combines (inside its case of the rank switch, and in
// a loop's body) with clock reads; the local work (the fill, the loop's
// scale) stays outside. SPMD, 2 ranks, ring.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-spmd-to-mpi{strategy=ring},coll-to-mpi,coll-mpi-static-scratch,coll-static-local-buffers,coll-profile-collectives)' | FileCheck %s

// CHECK-LABEL: func.func @step(
// The entry counts its calls.
// CHECK: memref.get_global @coll_profile_counters
// CHECK: linalg.fill
// The all_reduce before the loop: rank 0's messages, waits and combine in one bracket.
// CHECK: scf.index_switch
// CHECK: case 0 {
// CHECK-NEXT: memref.get_global @coll_scratch
// CHECK: %[[T0:.*]] = func.call @coll_profile_now()
// CHECK-NEXT: mpi.irecv
// CHECK-NOT: coll_profile_now
// CHECK: mpi.isend
// CHECK-NOT: coll_profile_now
// CHECK: "coll.combine"
// CHECK-NOT: coll_profile_now
// CHECK: mpi.isend
// CHECK-NOT: coll_profile_now
// CHECK: mpi.wait
// CHECK-NEXT: mpi.wait
// CHECK-NEXT: mpi.wait
// CHECK-NEXT: %[[T1:.*]] = func.call @coll_profile_now()
// CHECK-NEXT: arith.subi %[[T1]], %[[T0]]
// In the loop: the local scale outside, the collective's run bracketed.
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK: func.call @coll_profile_now()
// CHECK: mpi.isend
// CHECK: func.call @coll_profile_now()
module {
  func.func @step(%x: memref<64xf32>, %y: memref<64xf32>) attributes {coll.ranks = 2 : i64, llvm.emit_c_interface} {
    %c = arith.constant 2.0 : f32
    linalg.fill ins(%c : f32) outs(%y : memref<64xf32>)
    %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<64xf32>, memref<64xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    scf.for %i = %c0 to %c3 step %c1 {
      linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%y : memref<64xf32>) {
      ^bb0(%v: f32):
        %h = arith.mulf %v, %c : f32
        linalg.yield %h : f32
      }
      %u = "coll.all_reduce"(%y, %y) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<64xf32>, memref<64xf32>) -> !coll.token
      "coll.wait"(%u) : (!coll.token) -> ()
    }
    return
  }
}
