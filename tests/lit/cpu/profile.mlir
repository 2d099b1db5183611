// coll-profile-collectives (coll-run --profile): every run of copies and
// combines is bracketed by clock reads whose difference is added to
// counter 0; the entry (llvm.emit_c_interface) counts its calls in
// counter 1; coll_profile_read hands both over and zeroes them. Local work
// (the fill) stays outside the brackets.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-collectives{strategy=ring},coll-profile-collectives)' | FileCheck %s

// CHECK: memref.global "private" @coll_profile_counters : memref<2xi64> = dense<0>
// CHECK: llvm.func @clock_gettime(i32, !llvm.ptr) -> i32
// CHECK-LABEL: func.func private @coll_profile_now() -> i64
// CHECK: llvm.call @clock_gettime
// CHECK-LABEL: func.func @coll_profile_read(%arg0: memref<2xi64>) attributes {llvm.emit_c_interface}
// CHECK: memref.copy
// CHECK-LABEL: func.func @step
// CHECK: %[[C:.*]] = memref.get_global @coll_profile_counters
// CHECK: %[[N:.*]] = memref.load %[[C]][%c1]
// CHECK: arith.addi %[[N]], %c1_i64
// CHECK: linalg.fill
// CHECK: %[[T0:.*]] = call @coll_profile_now()
// CHECK-NEXT: "coll.copy"
// CHECK-NEXT: %[[T1:.*]] = call @coll_profile_now()
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[T1]], %[[T0]]
// CHECK: %[[S:.*]] = memref.load %{{.*}}[%c0]
// CHECK: arith.addi %[[S]], %[[D]]
// CHECK: "coll.wait"
func.func @step(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) attributes {llvm.emit_c_interface} {
  %c = arith.constant 2.0 : f32
  linalg.fill ins(%c : f32) outs(%z : memref<64xf32>)
  %t = "coll.all_reduce"(%x, %y) {devices = array<i64: 0>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<64xf32>, memref<64xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
