// The coll verifier on coll.implements (what IRDL cannot say); what the
// claim means is coll-check-semantics' (tests/lit/reliability).
// RUN: coll-opt %s --split-input-file --verify-diagnostics
// (A non-string 'op' is IRDL's to reject.)

!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
func.func @op_not_a_string(%a: !a, %b: !a) {
  %x = memref.memory_space_cast %a : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  %t = "coll.copy"(%x, %y) : (!d0, !d0) -> !coll.token
  // expected-error @+1 {{expected base attribute 'builtin.string' but got 'builtin.integer'}}
  "coll.implements"(%a, %b, %t) {op = 3 : i64, operandSegmentSizes = array<i32: 1, 1, 1>} : (!a, !a, !coll.token) -> ()
  return
}

// -----
!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
func.func @unknown_kind(%a: !a, %b: !a) {
  %x = memref.memory_space_cast %a : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  %t = "coll.copy"(%x, %y) : (!d0, !d0) -> !coll.token
  // expected-error @+1 {{unknown reduction kind "avg"; expected one of: sum, prod, max, min, and, or, xor}}
  "coll.implements"(%a, %b, %t) {op = "all_reduce", kind = "avg", operandSegmentSizes = array<i32: 1, 1, 1>} : (!a, !a, !coll.token) -> ()
  return
}

// -----
!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
func.func @devices_per_input(%a: !a, %b: !a) {
  %x = memref.memory_space_cast %a : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  %t = "coll.copy"(%x, %y) : (!d0, !d0) -> !coll.token
  // expected-error @+1 {{'devices' names 2 devices but the claim has 1 inputs; expected one device per input}}
  "coll.implements"(%a, %b, %t) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 1, 1>} : (!a, !a, !coll.token) -> ()
  return
}

// -----
// A broadcast claim names its outputs' devices (its one input is the root's).
!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
func.func @broadcast_devices_per_output(%a: !a, %b0: !a, %b1: !a) {
  %x = memref.memory_space_cast %a : !a to !d0
  %y = memref.memory_space_cast %b0 : !a to !d0
  %t = "coll.copy"(%x, %y) : (!d0, !d0) -> !coll.token
  "coll.implements"(%a, %b0, %b1, %t) {op = "broadcast", root = 0, devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 2, 1>} : (!a, !a, !a, !coll.token) -> ()
  // expected-error @+1 {{'devices' names 1 devices but the claim has 2 outputs; expected one device per output}}
  "coll.implements"(%a, %b0, %b1, %t) {op = "broadcast", root = 0, devices = array<i64: 0>, operandSegmentSizes = array<i32: 1, 2, 1>} : (!a, !a, !a, !coll.token) -> ()
  return
}

// -----
!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
func.func @unknown_order(%a: !a, %b: !a) {
  %x = memref.memory_space_cast %a : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  %t = "coll.copy"(%x, %y) : (!d0, !d0) -> !coll.token
  // expected-error @+1 {{unknown order "fastest" for the claim; expected one of: canonical, any}}
  "coll.implements"(%a, %b, %t) {op = "all_reduce", kind = "sum", order = "fastest", operandSegmentSizes = array<i32: 1, 1, 1>} : (!a, !a, !coll.token) -> ()
  return
}

// -----
!a = memref<4xf32>
!d0 = memref<4xf32, #coll.device<0>>
func.func @order_without_kind(%a: !a, %b: !a) {
  %x = memref.memory_space_cast %a : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  %t = "coll.copy"(%x, %y) : (!d0, !d0) -> !coll.token
  // expected-error @+1 {{'order' applies to a claim of a reduction only; this claim has no 'kind'}}
  "coll.implements"(%a, %b, %t) {op = "all_gather", order = "canonical", operandSegmentSizes = array<i32: 1, 1, 1>} : (!a, !a, !coll.token) -> ()
  return
}
