// coll-check-semantics on claims it cannot prove for other reasons than a
// wrong output: a read of memory nothing wrote (reported at the op), and
// claims that are malformed or name no known collective.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-semantics

!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func @unwritten_scratch_read(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  %r1 = "coll.alloc"() : () -> !d0
  // expected-error @+1 {{coll.combine reads %0[0, 4) on device 0, which nothing has written: it is no input of the claimed all_reduce and no op before it in the program writes it}}
  %s = "coll.combine"(%x0, %r1, %y) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!d0, !d0, !d0) -> !t
  // expected-note @+1 {{the claim}}
  "coll.implements"(%a0, %a1, %b, %s) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%s) : (!t) -> ()
  return
}

// -----
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!t = !coll.token
func.func @unknown_collective(%a0: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  %c = "coll.copy"(%x0, %y) : (!d0, !d0) -> !t
  // expected-error @+1 {{no specification for collective 'all_shuffle'; expected one of: all_reduce, reduce_scatter, all_gather, reduce, broadcast, all_to_all}}
  "coll.implements"(%a0, %b, %c) {op = "all_shuffle", devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 1, 1>} : (!a, !a, !t) -> ()
  "coll.wait"(%c) : (!t) -> ()
  return
}

// -----
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!t = !coll.token
func.func @claim_without_kind(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  %c = "coll.copy"(%x0, %y) : (!d0, !d0) -> !t
  // expected-error @+1 {{coll.implements claims all_reduce without a reduction 'kind'}}
  "coll.implements"(%a0, %a1, %b, %c) {op = "all_reduce", devices = array<i64: 0, 1>, to_device = 0, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%c) : (!t) -> ()
  return
}

// -----
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!t = !coll.token
func.func @claim_with_too_few_outputs(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  %c = "coll.copy"(%x0, %y) : (!d0, !d0) -> !t
  // expected-error @+1 {{coll.implements claims all_reduce with 1 output buffer(s); expected 2}}
  "coll.implements"(%a0, %a1, %b, %c) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 1, 1>} : (!a, !a, !a, !t) -> ()
  "coll.wait"(%c) : (!t) -> ()
  return
}

// -----
!a = memref<4xi32>
!t = !coll.token
func.func @claim_over_a_collective(%a0: !a, %a1: !a, %b0: !a, %b1: !a) {
  // expected-note @+1 {{this coll.all_reduce}}
  %c = "coll.all_reduce"(%a0, %a1, %b0, %b1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (!a, !a, !a, !a) -> !t
  // expected-error @+1 {{the program claimed here still holds a coll.all_reduce; lower it first (coll-lower-collectives)}}
  "coll.implements"(%a0, %a1, %b0, %b1, %c) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%c) : (!t) -> ()
  return
}
