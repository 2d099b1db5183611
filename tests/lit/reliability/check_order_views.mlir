// coll-check-order follows every view op to its root buffer and intersects
// the exact sets of elements (bytes, across memref.view) that views cover.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-order

// Strided subviews: interleaved columns of a 4x8 buffer written in parallel
// are disjoint, though their hulls overlap.
!b = memref<4x8xf32, #coll.device<1>>
!s = memref<4x2xf32, strided<[8, 2]>, #coll.device<1>>
!t = memref<4x2xf32, strided<[8, 2], offset: 1>, #coll.device<1>>
!h = memref<4x2xf32, #coll.device<0>>
func.func @interleaved_columns(%x: !h, %w: !h, %y: !b) {
  %a = memref.subview %y[0, 0] [4, 2] [1, 2] : !b to !s
  %b = memref.subview %y[0, 1] [4, 2] [1, 2] : !b to !t
  %t0 = "coll.copy"(%x, %a) : (!h, !s) -> !coll.token
  %t1 = "coll.copy"(%w, %b) : (!h, !t) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
// The same columns shifted by two: they share elements 2 and 10, ... and
// the error names the strided region.
!b = memref<4x8xf32, #coll.device<1>>
!s = memref<4x2xf32, strided<[8, 2]>, #coll.device<1>>
!t = memref<4x2xf32, strided<[8, 2], offset: 2>, #coll.device<1>>
!h = memref<4x2xf32, #coll.device<0>>
func.func @columns_sharing_elements(%x: !h, %w: !h, %y: !b) {
  %a = memref.subview %y[0, 0] [4, 2] [1, 2] : !b to !s
  %b = memref.subview %y[0, 2] [4, 2] [1, 2] : !b to !t
  // expected-note @+1 {{also written by this coll.copy, not ordered with it}}
  %t0 = "coll.copy"(%x, %a) : (!h, !s) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg2[2, 29) (4x2 elements at strides 8, 2) on device 1, racing with another write}}
  %t1 = "coll.copy"(%w, %b) : (!h, !t) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
// Scratch written at its even elements only: reading all of it is a read of
// unwritten data; the even elements alone are fine.
!d = memref<8xf32, #coll.device<1>>
!e = memref<4xf32, strided<[2]>, #coll.device<1>>
!h = memref<4xf32, #coll.device<0>>
func.func @even_elements_written(%x: !h, %y: !d, %z: !h) {
  %s = "coll.alloc"() : () -> !d
  %e = memref.subview %s[0] [4] [2] : !d to !e
  %t0 = "coll.copy"(%x, %e) : (!h, !e) -> !coll.token
  %t1 = "coll.copy"(%e, %z, %t0) : (!e, !h, !coll.token) -> !coll.token
  // expected-error @+1 {{coll.copy reads %0[0, 8) on device 1, which is only partly written by the ops ordered before it}}
  %t2 = "coll.copy"(%s, %y, %t0) : (!d, !d, !coll.token) -> !coll.token
  "coll.wait"(%t1, %t2) : (!coll.token, !coll.token) -> ()
  return
}

// -----
!d = memref<12xf32, #coll.device<1>>
!r = memref<2x2xf32, strided<[6, 1], offset: 1>, #coll.device<1>>
!q = memref<2x2xf32, strided<[3, 2], offset: 5>, #coll.device<1>>
!h = memref<2x2xf32, #coll.device<0>>
func.func @reinterpret_casts(%x: !h, %w: !h, %y: !d) {
  // elements 1, 2, 7, 8 and 5, 7, 8, 10
  %a = memref.reinterpret_cast %y to offset: [1], sizes: [2, 2], strides: [6, 1] : !d to !r
  %b = memref.reinterpret_cast %y to offset: [5], sizes: [2, 2], strides: [3, 2] : !d to !q
  // expected-note @+1 {{also written by this coll.copy}}
  %t0 = "coll.copy"(%x, %a) : (!h, !r) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg2[5, 11) (2x2 elements at strides 3, 2) on device 1, racing with another write}}
  %t1 = "coll.copy"(%w, %b) : (!h, !q) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
// Row 0 of the transpose is column 0 of the buffer.
!b = memref<4x4xf32, #coll.device<1>>
!tr = memref<4x4xf32, strided<[1, 4]>, #coll.device<1>>
!row = memref<4xf32, strided<[4]>, #coll.device<1>>
!col = memref<4xf32, strided<[4]>, #coll.device<1>>
!h = memref<4xf32, #coll.device<0>>
func.func @transpose(%x: !h, %w: !h, %y: !b) {
  %t = memref.transpose %y (d0, d1) -> (d1, d0) : !b to !tr
  %r = memref.subview %t[0, 0] [1, 4] [1, 1] : !tr to !row
  %c = memref.subview %y[0, 0] [4, 1] [1, 1] : !b to !col
  // expected-note @+1 {{also written by this coll.copy}}
  %t0 = "coll.copy"(%x, %r) : (!h, !row) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg2[0, 13) (4 elements at strides 4) on device 1, racing with another write}}
  %t1 = "coll.copy"(%w, %c) : (!h, !col) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
// memref.view shifts by bytes: f32 views at byte 0 and byte 6 share bytes
// 6 and 7; at bytes 0 and 8 they do not.
!raw = memref<32xi8, #coll.device<1>>
!v = memref<2xf32, #coll.device<1>>
!h = memref<2xf32, #coll.device<0>>
func.func @byte_shifted_views(%x: !h, %w: !h, %u: !h, %y: !raw) {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %a = memref.view %y[%c0][] : !raw to !v
  %b = memref.view %y[%c8][] : !raw to !v
  %c = memref.view %y[%c6][] : !raw to !v
  // expected-note @+1 {{also written by this coll.copy}}
  %t0 = "coll.copy"(%x, %a) : (!h, !v) -> !coll.token
  %t1 = "coll.copy"(%w, %b) : (!h, !v) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg3[6, 14) on device 1, racing with another write}}
  %t2 = "coll.copy"(%u, %c) : (!h, !v) -> !coll.token
  "coll.wait"(%t0, %t1, %t2) : (!coll.token, !coll.token, !coll.token) -> ()
  return
}

// -----
!raw = memref<32xi8, #coll.device<1>>
!v = memref<2xf32, #coll.device<1>>
!h = memref<2xf32, #coll.device<0>>
func.func @view_with_a_dynamic_shift(%x: !h, %y: !raw, %i: index) {
  // expected-note @+1 {{this memref.view}}
  %a = memref.view %y[%i][] : !raw to !v
  // expected-error @+1 {{cannot order the writes of this coll.copy: the byte shift of this memref.view is not a constant}}
  %t0 = "coll.copy"(%x, %a) : (!h, !v) -> !coll.token
  "coll.wait"(%t0) : (!coll.token) -> ()
  return
}

// -----
// Collapse and expand keep the elements: row 1 of the 2x4 expansion is
// [4, 8) of the flat buffer.
!d = memref<8xf32, #coll.device<1>>
!e = memref<2x4xf32, #coll.device<1>>
!row = memref<1x4xf32, strided<[4, 1], offset: 4>, #coll.device<1>>
!flat = memref<4xf32, strided<[1], offset: 4>, #coll.device<1>>
!half = memref<4xf32, strided<[1], offset: 2>, #coll.device<1>>
!h = memref<4xf32, #coll.device<0>>
func.func @collapse_and_expand(%x: !h, %w: !h, %y: !d) {
  %e = memref.expand_shape %y [[0, 1]] output_shape [2, 4] : !d into !e
  %r = memref.subview %e[1, 0] [1, 4] [1, 1] : !e to !row
  %f = memref.collapse_shape %r [[0, 1]] : !row into !flat
  %m = memref.subview %y[2] [4] [1] : !d to !half
  // expected-note @+1 {{also written by this coll.copy}}
  %t0 = "coll.copy"(%x, %f) : (!h, !flat) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg2[2, 6) on device 1, racing with another write}}
  %t1 = "coll.copy"(%w, %m) : (!h, !half) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
// A cast to a dynamic layout is followed back to its source's layout.
!d = memref<8xf32, #coll.device<1>>
!dyn = memref<8xf32, strided<[?], offset: ?>, #coll.device<1>>
!sub = memref<4xf32, strided<[?], offset: ?>, #coll.device<1>>
!lo = memref<4xf32, strided<[1]>, #coll.device<1>>
!h = memref<4xf32, #coll.device<0>>
func.func @cast_then_subview(%x: !h, %w: !h, %y: !d) {
  %c = memref.cast %y : !d to !dyn
  %a = memref.subview %c[3] [4] [1] : !dyn to !sub
  %b = memref.subview %y[0] [4] [1] : !d to !lo
  // expected-note @+1 {{also written by this coll.copy}}
  %t0 = "coll.copy"(%x, %a) : (!h, !sub) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg2[0, 4) on device 1, racing with another write}}
  %t1 = "coll.copy"(%w, %b) : (!h, !lo) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
!d1 = memref<8xf32, #coll.device<1>>
!d2 = memref<8xf32, #coll.device<2>>
!h = memref<8xf32, #coll.device<0>>
func.func @memory_space_cast(%x: !h, %w: !h, %y: !d1) {
  %a = memref.memory_space_cast %y : !d1 to !d2
  // expected-note @+1 {{also written by this coll.copy}}
  %t0 = "coll.copy"(%x, %a) : (!h, !d2) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg2[0, 8) on device 1, racing with another write}}
  %t1 = "coll.copy"(%w, %y) : (!h, !d1) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
// memref.reshape and memref.assume_alignment are views too; reshape also
// reads its shape buffer.
!d = memref<8xf32, #coll.device<1>>
!e = memref<2x4xf32, #coll.device<1>>
!h = memref<2x4xf32, #coll.device<0>>
!shape = memref<2xindex, #coll.device<1>>
func.func @reshape(%x: !h, %w: !h, %y: !d, %shape: !shape) {
  %a = memref.assume_alignment %y, 16 : !d
  %r = memref.reshape %a(%shape) : (!d, !shape) -> !e
  // expected-note @+1 {{also written by this coll.copy}}
  %t0 = "coll.copy"(%x, %r) : (!h, !e) -> !coll.token
  %e = memref.expand_shape %y [[0, 1]] output_shape [2, 4] : !d into !e
  // expected-error @+1 {{coll.copy writes %arg2[0, 8) on device 1, racing with another write}}
  %t1 = "coll.copy"(%w, %e) : (!h, !e) -> !coll.token
  "coll.wait"(%t0, %t1) : (!coll.token, !coll.token) -> ()
  return
}

// -----
// A reinterpret_cast may point past the end of its buffer (upstream cannot
// verify it): the copy would write other memory, so it is an error at the
// copy with a note at the cast, not a region.
!h = memref<8xf32, #coll.device<0>>
!d = memref<8xf32, #coll.device<1>>
!r = memref<4xf32, strided<[1], offset: 6>, #coll.device<1>>
!x = memref<4xf32, #coll.device<0>>
func.func @reinterpret_past_the_end(%x: !x, %y: !d) {
  // expected-note @+1 {{this memref.reinterpret_cast}}
  %r = memref.reinterpret_cast %y to offset: [6], sizes: [4], strides: [1] : !d to !r
  // expected-error @+1 {{the writes of this coll.copy leave %arg1: bytes [24, 40) of a buffer of bytes [0, 32); expected a view inside its buffer}}
  %t = "coll.copy"(%x, %r) : (!x, !r) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// The same cast at offset 4 stays inside: no error.
!d = memref<8xf32, #coll.device<1>>
!r = memref<4xf32, strided<[1], offset: 4>, #coll.device<1>>
!x = memref<4xf32, #coll.device<0>>
func.func @reinterpret_inside(%x: !x, %y: !d) {
  %r = memref.reinterpret_cast %y to offset: [4], sizes: [4], strides: [1] : !d to !r
  %t = "coll.copy"(%x, %r) : (!x, !r) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
