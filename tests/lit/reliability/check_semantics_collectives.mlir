// coll-check-semantics on wrong hand-written programs of the collectives
// other than all_reduce (check_semantics.mlir has all_reduce's and the
// all_gather with its two sources swapped along axis 0): each is ordered
// (coll-check-order passes, except where a claimed output is read before
// anything writes it) but computes something else, and each error says
// which region holds what and what it should hold.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-semantics
// RUN: not coll-opt %s --split-input-file --coll-check-order 2>&1 >/dev/null | FileCheck %s --check-prefix=ORDER
// RUN: not coll-opt %s --split-input-file --coll-check-order 2>&1 >/dev/null | grep -c error: | FileCheck %s --check-prefix=COUNT
// COUNT: {{^2$}}

// reduce_scatter over 2 devices: y1 gets the reduced block 0, not block 1.
!a = memref<4xi32>
!s = memref<2xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!e0 = memref<2xi32, #coll.device<0>>
!e1 = memref<2xi32, #coll.device<1>>
!l0 = memref<2xi32, strided<[1]>, #coll.device<0>>
!l1 = memref<2xi32, strided<[1]>, #coll.device<1>>
!t = !coll.token
func.func @reduce_scatter_chunk_to_the_wrong_slice(%a0: !a, %a1: !a, %b0: !s, %b1: !s) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y0 = memref.memory_space_cast %b0 : !s to !e0
  %y1 = memref.memory_space_cast %b1 : !s to !e1
  %x0l = memref.subview %x0[0] [2] [1] : !d0 to !l0
  %x1l = memref.subview %x1[0] [2] [1] : !d1 to !l1
  %r0 = "coll.alloc"() : () -> !e0
  %r1 = "coll.alloc"() : () -> !e1
  %c0 = "coll.copy"(%x1l, %r0) : (!l1, !e0) -> !t
  %c1 = "coll.copy"(%x0l, %r1) : (!l0, !e1) -> !t
  %k0 = "coll.combine"(%x0l, %r0, %y0, %c0) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!l0, !e0, !e0, !t) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %k1 = "coll.combine"(%r1, %x1l, %y1, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!e1, !l1, !e1, !t) -> !t
  %j = "coll.join"(%k0, %k1) : (!t, !t) -> !t
  // expected-error @+1 {{output #1 (%arg3 on device 1) [0, 2) holds sum(x0[0:2], x1[0:2]) but should hold sum(x0[2:4], x1[2:4]): x0 comes from x0[0:2] instead of x0[2:4] (the wrong slice); x1 comes from x1[0:2] instead of x1[2:4] (the wrong slice)}}
  "coll.implements"(%a0, %a1, %b0, %b1, %j) {op = "reduce_scatter", kind = "sum", devices = array<i64: 0, 1>, axes = array<i64: 0>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !s, !s, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}

// -----
// all_gather along axis 1 (columns) over 2 devices: y1 gets the two
// sources in swapped columns. A column is a strided view (stride 2).
!a = memref<2x1xi32>
!g = memref<2x2xi32>
!d0 = memref<2x1xi32, #coll.device<0>>
!d1 = memref<2x1xi32, #coll.device<1>>
!o0 = memref<2x2xi32, #coll.device<0>>
!o1 = memref<2x2xi32, #coll.device<1>>
!c0 = memref<2x1xi32, strided<[2, 1]>, #coll.device<0>>
!k0 = memref<2x1xi32, strided<[2, 1], offset: 1>, #coll.device<0>>
!c1 = memref<2x1xi32, strided<[2, 1]>, #coll.device<1>>
!k1 = memref<2x1xi32, strided<[2, 1], offset: 1>, #coll.device<1>>
!t = !coll.token
func.func @gather_columns_swapped(%a0: !a, %a1: !a, %b0: !g, %b1: !g) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y0 = memref.memory_space_cast %b0 : !g to !o0
  %y1 = memref.memory_space_cast %b1 : !g to !o1
  %y0c = memref.subview %y0[0, 0] [2, 1] [1, 1] : !o0 to !c0
  %y0k = memref.subview %y0[0, 1] [2, 1] [1, 1] : !o0 to !k0
  %y1c = memref.subview %y1[0, 0] [2, 1] [1, 1] : !o1 to !c1
  %y1k = memref.subview %y1[0, 1] [2, 1] [1, 1] : !o1 to !k1
  %g0 = "coll.copy"(%x0, %y0c) : (!d0, !c0) -> !t
  %g1 = "coll.copy"(%x1, %y0k) : (!d1, !k0) -> !t
  // expected-note @+2 {{last written by this coll.copy}}
  // expected-note @+1 {{last written by this coll.copy}}
  %g2 = "coll.copy"(%x1, %y1c) : (!d1, !c1) -> !t
  // expected-note @+1 {{last written by this coll.copy}}
  %g3 = "coll.copy"(%x0, %y1k) : (!d0, !k1) -> !t
  %j = "coll.join"(%g0, %g1, %g2, %g3) : (!t, !t, !t, !t) -> !t
  // expected-error @+4 {{output #1 (%arg3 on device 1) [0, 1) holds x1[0:1] but should hold x0[0:1]: it holds x1's data instead of x0's}}
  // expected-error @+3 {{output #1 (%arg3 on device 1) [1, 2) holds x0[0:1] but should hold x1[0:1]: it holds x0's data instead of x1's}}
  // expected-error @+2 {{output #1 (%arg3 on device 1) [2, 3) holds x1[1:2] but should hold x0[1:2]: it holds x1's data instead of x0's}}
  // expected-note @+1 {{and 1 more wrong regions of output #1}}
  "coll.implements"(%a0, %a1, %b0, %b1, %j) {op = "all_gather", devices = array<i64: 0, 1>, axes = array<i64: 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !g, !g, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}

// -----
// broadcast claimed from root 1; the program sends the buffer as if it
// were on device 0.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!d2 = memref<4xi32, #coll.device<2>>
!t = !coll.token
func.func @broadcast_from_the_wrong_root(%a: !a, %b0: !a, %b1: !a, %b2: !a) {
  // expected-note @+1 {{placed on device 0 here}}
  %x = memref.memory_space_cast %a : !a to !d0
  %y0 = memref.memory_space_cast %b0 : !a to !d0
  %y1 = memref.memory_space_cast %b1 : !a to !d1
  %y2 = memref.memory_space_cast %b2 : !a to !d2
  // expected-error @+1 {{coll.copy uses %arg0 on device 0, but the claim places it on device 1 (input #0 of the claimed broadcast, the buffer of root 1)}}
  %c0 = "coll.copy"(%x, %y0) : (!d0, !d0) -> !t
  %c1 = "coll.copy"(%x, %y1) : (!d0, !d1) -> !t
  %c2 = "coll.copy"(%x, %y2) : (!d0, !d2) -> !t
  %j = "coll.join"(%c0, %c1, %c2) : (!t, !t, !t) -> !t
  // expected-note @+1 {{the claim}}
  "coll.implements"(%a, %b0, %b1, %b2, %j) {op = "broadcast", devices = array<i64: 0, 1, 2>, root = 1, operandSegmentSizes = array<i32: 1, 3, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}

// -----
// In place (the root's buffer is its output): root 0 claimed, but the
// program broadcasts device 1's buffer, which is only an output.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!d2 = memref<4xi32, #coll.device<2>>
!t = !coll.token
func.func @in_place_broadcast_from_the_wrong_root(%b0: !a, %b1: !a, %b2: !a) {
  %y0 = memref.memory_space_cast %b0 : !a to !d0
  %y1 = memref.memory_space_cast %b1 : !a to !d1
  %y2 = memref.memory_space_cast %b2 : !a to !d2
  // ORDER: :[[# @LINE + 3]]:9: error: coll-check-order: coll.copy reads %arg1{{.}}0, 4) on device 1, which is not written by the ops ordered before it
  // ORDER: :[[# @LINE + 4]]:9: error: coll-check-order: coll.copy reads %arg1{{.}}0, 4) on device 1, which is not written by the ops ordered before it
  // expected-error @+1 {{coll.copy reads %arg1[0, 4) on device 1, which nothing has written: %arg1 is output #1 of the claimed broadcast, not an input and no op before it in the program writes it; the claimed input(s): %arg0 (the buffer of root 0)}}
  %c0 = "coll.copy"(%y1, %y0) : (!d1, !d0) -> !t
  // expected-error @+1 {{coll.copy reads %arg1[0, 4) on device 1, which nothing has written}}
  %c2 = "coll.copy"(%y1, %y2) : (!d1, !d2) -> !t
  %j = "coll.join"(%c0, %c2) : (!t, !t) -> !t
  // expected-note @+3 {{the claim}}
  // expected-note @+2 {{the claim}}
  // expected-error @+1 {{output #1 (%arg1 on device 1) [0, 4) holds nothing (never written) but should hold x0[0:4]: it is never written}}
  "coll.implements"(%b0, %b0, %b1, %b2, %j) {op = "broadcast", devices = array<i64: 0, 1, 2>, root = 0, operandSegmentSizes = array<i32: 1, 3, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}

// -----
// reduce of 3 devices to root 3 (outside the group): device 2's input
// never arrives.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!d3 = memref<4xi32, #coll.device<3>>
!t = !coll.token
func.func @reduce_missing_one_device(%a0: !a, %a1: !a, %a2: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y = memref.memory_space_cast %b : !a to !d3
  %r0 = "coll.alloc"() : () -> !d3
  %r1 = "coll.alloc"() : () -> !d3
  %c0 = "coll.copy"(%x0, %r0) : (!d0, !d3) -> !t
  %c1 = "coll.copy"(%x1, %r1) : (!d1, !d3) -> !t
  // expected-note @+1 {{last written by this coll.combine}}
  %k = "coll.combine"(%r0, %r1, %y, %c0, %c1) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!d3, !d3, !d3, !t, !t) -> !t
  // expected-error @+1 {{output #0 (%arg3 on device 3) [0, 4) holds sum(x0[0:4], x1[0:4]) but should hold sum(x0[0:4], x1[0:4], x2[0:4]): x2 is missing}}
  "coll.implements"(%a0, %a1, %a2, %b, %k) {op = "reduce", kind = "sum", devices = array<i64: 0, 1, 2>, root = 3, operandSegmentSizes = array<i32: 3, 1, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%k) : (!t) -> ()
  return
}

// -----
// all_to_all over 2 devices: y_j[2i:2i+2] must be x_i[2j:2j+2]; the two
// off-diagonal blocks are transposed (y_j[2i:] gets x_j[2i:]).
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!l0 = memref<2xi32, strided<[1]>, #coll.device<0>>
!l1 = memref<2xi32, strided<[1]>, #coll.device<1>>
!u0 = memref<2xi32, strided<[1], offset: 2>, #coll.device<0>>
!u1 = memref<2xi32, strided<[1], offset: 2>, #coll.device<1>>
!t = !coll.token
func.func @all_to_all_block_transposed(%a0: !a, %a1: !a, %b0: !a, %b1: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y0 = memref.memory_space_cast %b0 : !a to !d0
  %y1 = memref.memory_space_cast %b1 : !a to !d1
  %x0l = memref.subview %x0[0] [2] [1] : !d0 to !l0
  %x0u = memref.subview %x0[2] [2] [1] : !d0 to !u0
  %x1l = memref.subview %x1[0] [2] [1] : !d1 to !l1
  %x1u = memref.subview %x1[2] [2] [1] : !d1 to !u1
  %y0l = memref.subview %y0[0] [2] [1] : !d0 to !l0
  %y0u = memref.subview %y0[2] [2] [1] : !d0 to !u0
  %y1l = memref.subview %y1[0] [2] [1] : !d1 to !l1
  %y1u = memref.subview %y1[2] [2] [1] : !d1 to !u1
  %c0 = "coll.copy"(%x0l, %y0l) : (!l0, !l0) -> !t
  // expected-note @+1 {{last written by this coll.copy}}
  %c1 = "coll.copy"(%x0u, %y0u) : (!u0, !u0) -> !t
  // expected-note @+1 {{last written by this coll.copy}}
  %c2 = "coll.copy"(%x1l, %y1l) : (!l1, !l1) -> !t
  %c3 = "coll.copy"(%x1u, %y1u) : (!u1, !u1) -> !t
  %j = "coll.join"(%c0, %c1, %c2, %c3) : (!t, !t, !t, !t) -> !t
  // expected-error @+2 {{output #0 (%arg2 on device 0) [2, 4) holds x0[2:4] but should hold x1[0:2]: it holds x0's data instead of x1's}}
  // expected-error @+1 {{output #1 (%arg3 on device 1) [0, 2) holds x1[0:2] but should hold x0[2:4]: it holds x1's data instead of x0's}}
  "coll.implements"(%a0, %a1, %b0, %b1, %j) {op = "all_to_all", devices = array<i64: 0, 1>, axes = array<i64: 0, 0>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%j) : (!t) -> ()
  return
}

// -----
// A claim whose buffers do not fit its collective: all_gather of 2x1
// inputs along axis 1 gives 2x2 outputs.
!a = memref<2x1xi32>
!d0 = memref<2x1xi32, #coll.device<0>>
!t = !coll.token
func.func @claim_of_the_wrong_output_shape(%a0: !a, %a1: !a, %b0: !a, %b1: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %y0 = memref.memory_space_cast %b0 : !a to !d0
  %c = "coll.copy"(%x0, %y0) : (!d0, !d0) -> !t
  // expected-error @+1 {{coll.implements claims all_gather of 2x1 inputs on 2 devices into 2x1 outputs; expected 2x2 outputs}}
  "coll.implements"(%a0, %a1, %b0, %b1, %c) {op = "all_gather", devices = array<i64: 0, 1>, axes = array<i64: 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%c) : (!t) -> ()
  return
}

// -----
// No claim: nothing says what the program computes, so nothing is proved;
// the pass says so (a warning at its first copy), and succeeds.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!t = !coll.token
func.func @no_claim(%a0: !a, %b1: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %y1 = memref.memory_space_cast %b1 : !a to !d1
  // expected-warning @+1 {{coll-check-semantics: this coll.copy (and 1 more coll.copy/coll.combine of this function) belongs to no coll.implements claim, so nothing checks what it computes}}
  %c0 = "coll.copy"(%x0, %y1) : (!d0, !d1) -> !t
  %c1 = "coll.copy"(%y1, %x0, %c0) : (!d1, !d0, !t) -> !t
  "coll.wait"(%c1) : (!t) -> ()
  return
}

// -----
!a = memref<2x4xi32>
!d0 = memref<2x4xi32, #coll.device<0>>
!t = !coll.token
func.func @claim_with_too_few_axes(%a0: !a, %a1: !a, %b0: !a, %b1: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %y0 = memref.memory_space_cast %b0 : !a to !d0
  %c = "coll.copy"(%x0, %y0) : (!d0, !d0) -> !t
  // expected-error @+1 {{coll.implements claims all_to_all with 1 axes; expected 2 (split_axis, concat_axis)}}
  "coll.implements"(%a0, %a1, %b0, %b1, %c) {op = "all_to_all", devices = array<i64: 0, 1>, axes = array<i64: 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%c) : (!t) -> ()
  return
}

// -----
!a = memref<3xi32>
!s = memref<1xi32>
!d0 = memref<3xi32, #coll.device<0>>
!t = !coll.token
func.func @claim_of_an_indivisible_scatter(%a0: !a, %a1: !a, %b0: !s, %b1: !s) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %r = "coll.alloc"() : () -> !d0
  %c = "coll.copy"(%x0, %r) : (!d0, !d0) -> !t
  // expected-error @+1 {{coll.implements claims reduce_scatter with scatter_axis 0 of size 3, which its 2 devices do not divide}}
  "coll.implements"(%a0, %a1, %b0, %b1, %c) {op = "reduce_scatter", kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !s, !s, !t) -> ()
  "coll.wait"(%c) : (!t) -> ()
  return
}

// -----
// One buffer claimed as both outputs would hold "both" results.
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!t = !coll.token
func.func @claim_with_one_buffer_for_two_outputs(%a0: !a, %a1: !a, %b: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %y = memref.memory_space_cast %b : !a to !d0
  %c = "coll.copy"(%x0, %y) : (!d0, !d0) -> !t
  // expected-error @+1 {{coll.implements: outputs #0 and #1 overlap; expected distinct memory for each claimed output}}
  "coll.implements"(%a0, %a1, %b, %b, %c) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (!a, !a, !a, !a, !t) -> ()
  "coll.wait"(%c) : (!t) -> ()
  return
}
