// What coll-check-order accepts: lowered programs (also after coll-shuffle),
// writes to disjoint slices in parallel, a combine in place, scratch reused
// after a wait.
// RUN: coll-opt %s --coll-check-order | FileCheck %s
// GEN: ring = coll-gen all-reduce --devices 5 --shape 203
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-shuffle{seed=3},coll-check-order)' < %S/Inputs/gen/check_order_ok.ring.mlir | FileCheck %s --check-prefix=RING
// GEN: empty = coll-gen all-reduce --devices 5 --shape 12 --to-device 7
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-shuffle{seed=4},coll-check-order)' < %S/Inputs/gen/check_order_ok.empty.mlir | FileCheck %s --check-prefix=EMPTY
// GEN: naive = coll-gen all-reduce --devices 5 --shape 2x3 --dtype i32
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-shuffle{seed=5},coll-check-order)' < %S/Inputs/gen/check_order_ok.naive.mlir | FileCheck %s --check-prefix=NAIVE

// Ring: 2N(N-1) copies and N(N-1) combines survive the shuffle.
// RING-COUNT-40: "coll.copy"
// RING-NOT: "coll.copy"
// RING: "coll.wait"
// Chunks of 4, 4, 4, 0, 0 elements (one 16-byte vector each): three reduced
// on devices 0..2 and copied to device 7.
// EMPTY-COUNT-15: "coll.copy"
// EMPTY-NOT: "coll.copy"
// EMPTY: "coll.wait"
// NAIVE-COUNT-20: "coll.copy"
// NAIVE-NOT: "coll.copy"

!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
!a1 = memref<4xf32, strided<[1]>, #coll.device<1>>
!b1 = memref<4xf32, strided<[1], offset: 4>, #coll.device<1>>
!h0 = memref<4xf32, #coll.device<0>>

// CHECK-LABEL: func.func @disjoint_slices
func.func @disjoint_slices(%x: !h0, %w: !h0, %y: !d1) {
  %a = memref.subview %y[0] [4] [1] : !d1 to !a1
  %b = memref.subview %y[4] [4] [1] : !d1 to !b1
  %t0 = "coll.copy"(%x, %a) : (!h0, !a1) -> !coll.token
  %t1 = "coll.copy"(%w, %b) : (!h0, !b1) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// CHECK-LABEL: func.func @combine_in_place
func.func @combine_in_place(%x: !d0, %y: !d1) {
  %s = "coll.alloc"() : () -> !d1
  %t0 = "coll.copy"(%x, %s) : (!d0, !d1) -> !coll.token
  %t1 = "coll.combine"(%s, %y, %s, %t0) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d1, !d1, !d1, !coll.token) -> !coll.token
  %t2 = "coll.copy"(%s, %y, %t1) : (!d1, !d1, !coll.token) -> !coll.token
  "coll.wait"(%t2) : (!coll.token) -> ()
  return
}

// CHECK-LABEL: func.func @scratch_reused_after_a_wait
func.func @scratch_reused_after_a_wait(%x: !d0, %w: !d0, %y: !d1, %z: !d1) {
  %s = "coll.alloc"() : () -> !d1
  %t0 = "coll.copy"(%x, %s) : (!d0, !d1) -> !coll.token
  %t1 = "coll.copy"(%s, %y, %t0) : (!d1, !d1, !coll.token) -> !coll.token
  "coll.wait"(%t1) : (!coll.token) -> ()
  %t2 = "coll.copy"(%w, %s) : (!d0, !d1) -> !coll.token
  %t3 = "coll.copy"(%s, %z, %t2) : (!d1, !d1, !coll.token) -> !coll.token
  "coll.wait"(%t3) : (!coll.token) -> ()
  return
}

// CHECK-LABEL: func.func @returns_its_token
func.func @returns_its_token(%x: !d0, %y: !d1) -> !coll.token {
  %t = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  return %t : !coll.token
}
