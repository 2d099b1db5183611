// coll-check-order on hand-written explicit programs that are broken: each
// error names the op, the region and the device, with a note at the other op.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-order

!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @missing_dependency(%x: !d0, %y: !d1, %z: !d1) {
  %s = "coll.alloc"() : () -> !d1
  // expected-note @+1 {{written by this coll.copy, not ordered before the read}}
  %t0 = "coll.copy"(%x, %s) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{coll.combine reads %0[0, 8) on device 1 before it is written}}
  %t1 = "coll.combine"(%s, %y, %z) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!d1, !d1, !d1) -> !coll.token
  %j = "coll.join"(%t0, %t1) : (!coll.token, !coll.token) -> !coll.token
  "coll.wait"(%j) : (!coll.token) -> ()
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @racing_writes(%x: !d0, %y: !d0, %z: !d1) {
  // expected-note @+1 {{also written by this coll.copy, not ordered with it}}
  %t0 = "coll.copy"(%x, %z) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg2[0, 8) on device 1, racing with another write}}
  %t1 = "coll.copy"(%y, %z) : (!d0, !d1) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
// Scratch reused for a second message before the first was forwarded (WAR).
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
!d2 = memref<8xf32, #coll.device<2>>
func.func @reused_scratch(%x: !d0, %y: !d0, %a: !d2, %b: !d2) {
  %s = "coll.alloc"() : () -> !d1
  %t0 = "coll.copy"(%x, %s) : (!d0, !d1) -> !coll.token
  // expected-note @+1 {{read by this coll.copy, not ordered before the write}}
  %t1 = "coll.copy"(%s, %a, %t0) : (!d1, !d2, !coll.token) -> !coll.token
  // expected-error @+1 {{coll.copy writes %0[0, 8) on device 1 while an unordered op may still read it}}
  %t2 = "coll.copy"(%y, %s, %t0) : (!d0, !d1, !coll.token) -> !coll.token
  %t3 = "coll.copy"(%s, %b, %t2) : (!d1, !d2, !coll.token) -> !coll.token
  "coll.wait"(%t1, %t3) : (!coll.token, !coll.token) -> ()
  return
}

// -----
!d1 = memref<8xf32, #coll.device<1>>
func.func @unwritten_scratch(%y: !d1, %z: !d1) {
  %s = "coll.alloc"() : () -> !d1
  // expected-error @+1 {{coll.combine reads %0[0, 8) on device 1, which is not written by the ops ordered before it}}
  %t = "coll.combine"(%s, %y, %z) {kind = "max", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!d1, !d1, !d1) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
!d1 = memref<8xf32, #coll.device<1>>
!h0 = memref<4xf32, #coll.device<0>>
!h1 = memref<4xf32, strided<[1]>, #coll.device<1>>
func.func @partly_written_scratch(%x: !h0, %y: !d1, %z: !d1) {
  %s = "coll.alloc"() : () -> !d1
  %h = memref.subview %s[0] [4] [1] : !d1 to !h1
  %t0 = "coll.copy"(%x, %h) : (!h0, !h1) -> !coll.token
  // expected-error @+1 {{coll.combine reads %0[0, 8) on device 1, which is only partly written by the ops ordered before it}}
  %t1 = "coll.combine"(%s, %y, %z, %t0) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (!d1, !d1, !d1, !coll.token) -> !coll.token
  "coll.wait"(%t1) : (!coll.token) -> ()
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @final_token_misses_a_write(%x: !d0, %y: !d1, %z: !d1) {
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg2[0, 8) on device 1 but is not ordered before the final coll.wait}}
  %t1 = "coll.copy"(%x, %z) : (!d0, !d1) -> !coll.token
  // expected-note @+1 {{the final coll.wait}}
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @no_wait(%x: !d0, %y: !d1) {
  // expected-error @+1 {{coll.copy writes %arg1[0, 8) on device 1 but nothing waits for it: @no_wait has no coll.wait and returns no token}}
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @returned_token_misses_a_write(%x: !d0, %y: !d1, %z: !d1) -> !coll.token {
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg2[0, 8) on device 1 but is not ordered before the final returned token}}
  %t1 = "coll.copy"(%x, %z) : (!d0, !d1) -> !coll.token
  // expected-note @+1 {{the final returned token}}
  return %t0 : !coll.token
}

// -----
// A copy issued after the last wait may still run when the function returns.
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @copy_after_the_wait(%x: !d0, %y: !d1, %z: !d1) {
  %t0 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-note @+1 {{the final coll.wait}}
  "coll.wait"(%t0) : (!coll.token) -> ()
  // expected-error @+1 {{coll.copy writes %arg2[0, 8) on device 1 but is not ordered before the final coll.wait}}
  %t1 = "coll.copy"(%y, %z) : (!d1, !d1) -> !coll.token
  return
}

// -----
!d1 = memref<8xf32, #coll.device<1>>
!h0 = memref<4xf32, #coll.device<0>>
!a1 = memref<4xf32, strided<[1]>, #coll.device<1>>
!b1 = memref<4xf32, strided<[1], offset: 2>, #coll.device<1>>
func.func @overlapping_slices(%x: !h0, %w: !h0, %y: !d1) {
  %a = memref.subview %y[0] [4] [1] : !d1 to !a1
  %b = memref.subview %y[2] [4] [1] : !d1 to !b1
  // expected-note @+1 {{also written by this coll.copy}}
  %t0 = "coll.copy"(%x, %a) : (!h0, !a1) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg2[2, 6) on device 1, racing with another write}}
  %t1 = "coll.copy"(%w, %b) : (!h0, !b1) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
!d1 = memref<8xf32, #coll.device<1>>
!a1 = memref<4xf32, strided<[1]>, #coll.device<1>>
!b1 = memref<4xf32, strided<[1], offset: 2>, #coll.device<1>>
func.func @copy_onto_itself(%y: !d1) {
  %a = memref.subview %y[0] [4] [1] : !d1 to !a1
  %b = memref.subview %y[2] [4] [1] : !d1 to !b1
  // expected-error @+1 {{coll.copy reads %arg0[0, 4) on device 1 and writes the overlapping %arg0[2, 6) on device 1}}
  %t = "coll.copy"(%a, %b) : (!a1, !b1) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
!d1 = memref<8xf32, #coll.device<1>>
!a1 = memref<4xf32, strided<[1]>, #coll.device<1>>
!b1 = memref<4xf32, strided<[1], offset: 2>, #coll.device<1>>
func.func @combine_output_overlaps_an_input(%y: !d1, %z: !d1) {
  %a = memref.subview %y[0] [4] [1] : !d1 to !a1
  %b = memref.subview %y[2] [4] [1] : !d1 to !b1
  // expected-error @+1 {{coll.combine reads %arg0[0, 4) on device 1 and writes the overlapping %arg0[2, 6) on device 1}}
  %t = "coll.combine"(%a, %b, %b) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (!a1, !b1, !b1) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
!d1 = memref<8xf32, #coll.device<1>>
!h0 = memref<4xf32, #coll.device<0>>
!s1 = memref<4xf32, strided<[1], offset: ?>, #coll.device<1>>
func.func @dynamic_offset(%x: !h0, %y: !d1, %i: index) {
  %s = memref.subview %y[%i] [4] [1] : !d1 to !s1
  // expected-error @+1 {{cannot order the writes of this coll.copy: memref<4xf32, strided<[1], offset: ?>, #coll.device<1 : i64>> has a dynamic offset, stride or size; expected static ones}}
  %t = "coll.copy"(%x, %s) : (!h0, !s1) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func @inside_a_loop(%x: !d0, %y: !d1) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    // expected-error @+1 {{coll.copy inside 'scf.for' is not supported by coll-check-order}}
    %t = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
  }
  return
}
