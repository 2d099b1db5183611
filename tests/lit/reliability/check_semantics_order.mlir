// coll-check-semantics proves the order too where a claim states it
// (`order = "canonical"`, sum or prod on floats): every output element must
// be the left fold in device order, ((x0 + x1) + x2) ..., its 16-bit
// partials held in f32 (rounded once, at the end). An error is at the first
// coll.combine that breaks the association, with a note at the claim.
// Operands of one combine commute (x1 + x0 has the bits of x0 + x1).
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-semantics
// RUN: coll-opt %s --split-input-file --coll-check-order > /dev/null

// Every strategy's canonical lowering of every reducing collective, N = 2,
// 3, 4, 8, f32 and bf16 (104 functions), claims and proves the order; under
// order=any none claims it, and each is proved as a multiset.
// RUN: %PYTHON %S/Inputs/order_lowerings.py | coll-opt --coll-lower-collectives --coll-check-semantics | FileCheck %s --check-prefix=CANON
// RUN: %PYTHON %S/Inputs/order_lowerings.py | coll-opt --coll-lower-collectives=order=any --coll-check-semantics | FileCheck %s --check-prefix=ANY
// CANON-COUNT-104: "coll.implements"{{.*}}order = "canonical"
// CANON-NOT: "coll.implements"
// ANY: "coll.implements"
// ANY-NOT: order = "canonical"

// An order=any ring (chunk c starts on device c) claimed canonical is
// refused at the combine that starts chunk 1's partial (chunk 0 starts on d0).
// RUN: coll-gen all-reduce --devices 4 --shape 24 --strategy ring | coll-opt --coll-lower-collectives=order=any | sed 's/op = "all_reduce"/op = "all_reduce", order = "canonical"/' | not coll-opt --coll-check-semantics 2>&1 | FileCheck %s --check-prefix=CLAIMED
// CLAIMED: error: coll-check-semantics: coll.combine breaks the canonical order: it starts a partial with x1 and x2; in device order a partial starts with x0 and x1; output #0 (%arg4 on device 0) [8, 16) holds ((x1[8:16] + x2[8:16]) + x3[8:16]) + x0[8:16] but the claimed all_reduce (order = "canonical") is ((x0[8:16] + x1[8:16]) + x2[8:16]) + x3[8:16]
// CLAIMED: note: the claim

// The hand-written 2x2 grid all-reduce (rows, then columns) is proved as a
// multiset; it sums (x0 + x1) + (x2 + x3), so claimed canonical it is refused.
// RUN: sed 's/op = "all_reduce"/op = "all_reduce", order = "canonical"/' %root/examples/allreduce_2x2_grid.mlir | not coll-opt --coll-check-semantics 2>&1 | FileCheck %s --check-prefix=GRID
// GRID: error: coll-check-semantics: coll.combine breaks the canonical order: it starts a partial with x2 and x3; in device order a partial starts with x0 and x1; output #0 (%arg4 on device 0) [0, 4) holds (x0[0:4] + x1[0:4]) + (x2[0:4] + x3[0:4])

!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
!d1 = memref<4xf32, #coll.device<1>>
!d2 = memref<4xf32, #coll.device<2>>
!t = !coll.token
func.func @wrong_association(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %x2 = memref.memory_space_cast %a2 : !a to !d2
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %r2 = "coll.alloc"() : () -> !d0
  %p = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  %c2 = "coll.copy"(%x2, %r2) : (!d2, !d0) -> !t
  // expected-error @+1 {{coll.combine breaks the canonical order: it starts a partial with x0 and x2; in device order a partial starts with x0 and x1; output #0 (%arg3 on device 0) [0, 4) holds (x0[0:4] + x2[0:4]) + x1[0:4] but the claimed all_reduce (order = "canonical") is (x0[0:4] + x1[0:4]) + x2[0:4]}}
  %s1 = "coll.combine"(%x0, %r2, %p, %c2) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  // expected-note @+1 {{output #0 last written by this coll.combine}}
  %s = "coll.combine"(%p, %r1, %y, %s1, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!d0, !d0, !d0, !t, !t) -> !t
  // expected-note @+1 {{the claim}}
  "coll.implements"(%a0, %a1, %a2, %b, %s) {op = "all_reduce", kind = "sum", order = "canonical", devices = array<i64: 0, 1, 2>, to_device = 0, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// The same program without the order claim (or with order = "any") is
// proved as before: it combines each input once.
!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
!d1 = memref<4xf32, #coll.device<1>>
!d2 = memref<4xf32, #coll.device<2>>
!t = !coll.token
func.func @wrong_association_unclaimed(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %x2 = memref.memory_space_cast %a2 : !a to !d2
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %r2 = "coll.alloc"() : () -> !d0
  %p = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  %c2 = "coll.copy"(%x2, %r2) : (!d2, !d0) -> !t
  %s1 = "coll.combine"(%x0, %r2, %p, %c2) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  %s = "coll.combine"(%p, %r1, %y, %s1, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!d0, !d0, !d0, !t, !t) -> !t
  "coll.implements"(%a0, %a1, %a2, %b, %s) {op = "all_reduce", kind = "sum", order = "any", devices = array<i64: 0, 1, 2>, to_device = 0, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// Operands commute: x1 + x0 then + x2 is the canonical fold.
!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
!d1 = memref<4xf32, #coll.device<1>>
!d2 = memref<4xf32, #coll.device<2>>
!t = !coll.token
func.func @commuted_operands(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %x2 = memref.memory_space_cast %a2 : !a to !d2
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %r2 = "coll.alloc"() : () -> !d0
  %p = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  %c2 = "coll.copy"(%x2, %r2) : (!d2, !d0) -> !t
  %s1 = "coll.combine"(%r1, %x0, %p, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  %s = "coll.combine"(%r2, %p, %y, %s1, %c2) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!d0, !d0, !d0, !t, !t) -> !t
  "coll.implements"(%a0, %a1, %a2, %b, %s) {op = "all_reduce", kind = "sum", order = "canonical", devices = array<i64: 0, 1, 2>, to_device = 0, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// bf16: a partial rounded to bf16 and combined again rounds twice.
!a = memref<4xbf16>
!d0 = memref<4xbf16, #coll.device<0>>
!d1 = memref<4xbf16, #coll.device<1>>
!d2 = memref<4xbf16, #coll.device<2>>
!t = !coll.token
func.func @rounded_partial(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %x2 = memref.memory_space_cast %a2 : !a to !d2
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %r2 = "coll.alloc"() : () -> !d0
  %p = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  %c2 = "coll.copy"(%x2, %r2) : (!d2, !d0) -> !t
  // expected-note @+1 {{this coll.combine rounded it}}
  %s1 = "coll.combine"(%x0, %r1, %p, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{coll.combine breaks the canonical order: it combines a partial result already rounded to bf16 (see the note): the canonical order rounds once, at the end; keep partials in the accumulator type (f32); output #0 (%arg3 on device 0) [0, 4) holds bf16(x0[0:4] + x1[0:4]) + x2[0:4] but the claimed all_reduce (order = "canonical") is (x0[0:4] + x1[0:4]) + x2[0:4]}}
  %s = "coll.combine"(%p, %r2, %y, %s1, %c2) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!d0, !d0, !d0, !t, !t) -> !t
  // expected-note @+1 {{the claim}}
  "coll.implements"(%a0, %a1, %a2, %b, %s) {op = "all_reduce", kind = "sum", order = "canonical", devices = array<i64: 0, 1, 2>, to_device = 0, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// bf16 with the partial held in f32: rounded once, into the output.
!a = memref<4xbf16>
!d0 = memref<4xbf16, #coll.device<0>>
!d1 = memref<4xbf16, #coll.device<1>>
!d2 = memref<4xbf16, #coll.device<2>>
!p = memref<4xf32, #coll.device<0>>
!t = !coll.token
func.func @f32_partial(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %x2 = memref.memory_space_cast %a2 : !a to !d2
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %r2 = "coll.alloc"() : () -> !d0
  %p = "coll.alloc"() : () -> !p
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  %c2 = "coll.copy"(%x2, %r2) : (!d2, !d0) -> !t
  %s1 = "coll.combine"(%x0, %r1, %p, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !p, !t) -> !t
  %s = "coll.combine"(%p, %r2, %y, %s1, %c2) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!p, !d0, !d0, !t, !t) -> !t
  "coll.implements"(%a0, %a1, %a2, %b, %s) {op = "all_reduce", kind = "sum", order = "canonical", devices = array<i64: 0, 1, 2>, to_device = 0, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// A wrong input under the order claim is reported as without it, at the claim.
!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
!d1 = memref<4xf32, #coll.device<1>>
!d2 = memref<4xf32, #coll.device<2>>
!t = !coll.token
func.func @dropped_contribution(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %r1, %y, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  // expected-error @+1 {{output #0 (%arg3 on device 0) [0, 4) holds sum(x0[0:4], x1[0:4]) but should hold sum(x0[0:4], x1[0:4], x2[0:4]): x2 is missing}}
  "coll.implements"(%a0, %a1, %a2, %b, %s) {op = "all_reduce", kind = "sum", order = "canonical", devices = array<i64: 0, 1, 2>, to_device = 0, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// Integers (and max, min) associate exactly: the order claim is proved as a
// multiset, whatever the association.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!d2 = memref<4xi32, #coll.device<2>>
!t = !coll.token
func.func @integers_associate(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %x2 = memref.memory_space_cast %a2 : !a to !d2
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  %r2 = "coll.alloc"() : () -> !d0
  %p = "coll.alloc"() : () -> !d0
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d0) -> !t
  %c2 = "coll.copy"(%x2, %r2) : (!d2, !d0) -> !t
  %s1 = "coll.combine"(%x0, %r2, %p, %c2) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d0, !d0, !d0, !t) -> !t
  %s = "coll.combine"(%p, %r1, %y, %s1, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!d0, !d0, !d0, !t, !t) -> !t
  "coll.implements"(%a0, %a1, %a2, %b, %s) {op = "all_reduce", kind = "sum", order = "canonical", devices = array<i64: 0, 1, 2>, to_device = 0, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
// One device: the output must be x0 itself; a combine of x0 with itself is
// said as a multiset (a doubled contribution), under the order claim too.
!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
!t = !coll.token
func.func @one_device_doubled(%a0: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  // expected-note @+1 {{last written by this coll.combine}}
  %s = "coll.combine"(%x0, %x0, %y) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!d0, !d0, !d0) -> !t
  // expected-error @+1 {{output #0 (%arg1 on device 0) [0, 4) holds sum(x0[0:4], x0[0:4]) but should hold x0[0:4]}}
  "coll.implements"(%a0, %b, %s) {op = "all_reduce", kind = "sum", order = "canonical", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 1>} : (!a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}
