// Outputs and inputs of a collective share memory only in place: an
// output is its device's input, the same elements in the same order,
// followed through every view op (ir/views.py span). A partial overlap,
// through any view, is a located error; disjoint parts of one buffer are
// distinct memory.
// RUN: coll-opt %s --split-input-file --verify-diagnostics

!s0 = memref<4xf32, strided<[1]>>
!s1 = memref<4xf32, strided<[1], offset: 1>>
func.func @partial_overlap_subview(%a0: memref<5xf32>, %a1: memref<5xf32>) {
  %x0 = memref.subview %a0[0] [4] [1] : memref<5xf32> to !s0
  %x1 = memref.subview %a1[0] [4] [1] : memref<5xf32> to !s0
  %y0 = memref.subview %a0[1] [4] [1] : memref<5xf32> to !s1
  %y1 = memref.subview %a1[1] [4] [1] : memref<5xf32> to !s1
  // expected-error @+1 {{output #0 (elements [1, 5) of %arg0) partly overlaps input #0 (elements [0, 4) of %arg0); expected the input itself (in place) or memory disjoint from it}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (!s0, !s0, !s1, !s1) -> !coll.token
  return
}

// -----
// Through a memref.reinterpret_cast (its offset moves the view).
!s0 = memref<4xf32, strided<[1]>>
!s2 = memref<4xf32, strided<[1], offset: 2>>
func.func @partial_overlap_reinterpret_cast(%a0: memref<8xf32>, %a1: memref<8xf32>) {
  %x0 = memref.subview %a0[0] [4] [1] : memref<8xf32> to !s0
  %x1 = memref.subview %a1[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %x1c = memref.reinterpret_cast %a1 to offset: [0], sizes: [4], strides: [1] : memref<8xf32> to !s0
  %y0 = memref.reinterpret_cast %a0 to offset: [2], sizes: [4], strides: [1] : memref<8xf32> to !s2
  %y1 = memref.reinterpret_cast %a1 to offset: [2], sizes: [4], strides: [1] : memref<8xf32> to !s2
  // expected-error @+1 {{output #0 (elements [2, 6) of %arg0) partly overlaps input #0 (elements [0, 4) of %arg0)}}
  %t = "coll.all_reduce"(%x0, %x1c, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (!s0, !s0, !s2, !s2) -> !coll.token
  return
}

// -----
// Through memref.view: constant byte shifts into one i8 buffer.
func.func @partial_overlap_view(%raw: memref<64xi8>, %x1: memref<4xf32>, %y1: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %x0 = memref.view %raw[%c0][] : memref<64xi8> to memref<4xf32>
  %y0 = memref.view %raw[%c4][] : memref<64xi8> to memref<4xf32>
  // expected-error @+1 {{output #0 (elements [1, 5) of %arg0) partly overlaps input #0 (elements [0, 4) of %arg0)}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
// A memref.view whose shift is not a constant: whether it overlaps is not known.
func.func @view_shift_unknown(%raw: memref<64xi8>, %k: index, %x1: memref<4xf32>, %y1: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %x0 = memref.view %raw[%c0][] : memref<64xi8> to memref<4xf32>
  %y0 = memref.view %raw[%k][] : memref<64xi8> to memref<4xf32>
  // expected-error @+1 {{output #0 and input #0 view one buffer through views whose offsets are not static; expected the input itself (in place) or another buffer}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
// Through expand_shape and subview: a 2x2 view of elements [2, 6).
!o = memref<2x2xf32, strided<[2, 1], offset: 2>>
func.func @partial_overlap_reshaped(%a0: memref<8xf32>, %a1: memref<8xf32>, %x1: memref<2x2xf32>) {
  %v0 = memref.expand_shape %a0 [[0, 1]] output_shape [4, 2] : memref<8xf32> into memref<4x2xf32>
  %v1 = memref.expand_shape %a1 [[0, 1]] output_shape [4, 2] : memref<8xf32> into memref<4x2xf32>
  %x0s = memref.subview %v0[0, 0] [2, 2] [1, 1] : memref<4x2xf32> to memref<2x2xf32, strided<[2, 1]>>
  %x0 = memref.cast %x0s : memref<2x2xf32, strided<[2, 1]>> to memref<2x2xf32>
  %y0 = memref.subview %v0[1, 0] [2, 2] [1, 1] : memref<4x2xf32> to !o
  %y1 = memref.subview %v1[1, 0] [2, 2] [1, 1] : memref<4x2xf32> to !o
  // expected-error @+1 {{output #0 (elements [2, 6) of %arg0) partly overlaps input #0 (elements [0, 4) of %arg0)}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<2x2xf32>, memref<2x2xf32>, !o, !o) -> !coll.token
  return
}

// -----
// all_gather has no in-place form: any shared memory is an error.
func.func @gather_output_holds_input(%a: memref<8xf32>, %x1: memref<4xf32, strided<[1]>>) {
  %x0 = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %y1 = memref.alloc() : memref<8xf32>
  // expected-error @+1 {{output #0 (elements [0, 8) of %arg0) partly overlaps input #0 (elements [0, 4) of %arg0)}}
  %t = "coll.all_gather"(%x0, %x1, %a, %y1) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32, strided<[1]>>, memref<4xf32, strided<[1]>>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
// In place through a memref.cast is in place (on its own device).
func.func @in_place_cast_other_device(%x0: memref<4xf32>, %x1: memref<4xf32>) {
  %y0 = memref.cast %x1 : memref<4xf32> to memref<4xf32, strided<[1]>>
  %y1 = memref.cast %x0 : memref<4xf32> to memref<4xf32, strided<[1]>>
  // expected-error @+1 {{output #0 (device 0) is input #1 (device 1); in place, an output must be the input on its own device}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32, strided<[1]>>, memref<4xf32, strided<[1]>>) -> !coll.token
  return
}

// -----
// Two outputs that overlap partly (views into one i8 buffer).
func.func @outputs_overlap(%x0: memref<4xf32>, %x1: memref<4xf32>, %raw: memref<64xi8>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %y0 = memref.view %raw[%c0][] : memref<64xi8> to memref<4xf32>
  %y1 = memref.view %raw[%c8][] : memref<64xi8> to memref<4xf32>
  // expected-error @+1 {{outputs #0 and #1 share memory; expected disjoint memory for each output}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  return
}

// -----
// Disjoint parts of one buffer are distinct memory, inputs and outputs alike.
func.func @disjoint_parts(%raw: memref<64xi8>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %x0 = memref.view %raw[%c0][] : memref<64xi8> to memref<4xf32>
  %x1 = memref.view %raw[%c16][] : memref<64xi8> to memref<4xf32>
  %y0 = memref.view %raw[%c32][] : memref<64xi8> to memref<4xf32>
  %y1 = memref.view %raw[%c48][] : memref<64xi8> to memref<4xf32>
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// A buffer yielded by scf.if may be the input: the lowering could not tell
// in place from not (an outside attack: wrong sums, `ok`).
func.func @may_be_the_input_through_scf_if(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>, %cond: i1) {
  %o = scf.if %cond -> (memref<8xf32>) {
    scf.yield %x0 : memref<8xf32>
  } else {
    scf.yield %y0 : memref<8xf32>
  }
  // expected-error @+1 {{output #0 and input #0 may be one buffer (through 'scf.if'); expected views of one buffer (in place) or distinct buffers}}
  %t = "coll.all_reduce"(%x0, %x1, %o, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// A loop's results are its iteration arguments' first values too.
func.func @may_be_the_input_through_scf_for(%x0: memref<8xf32>, %x1: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r0, %r1 = scf.for %i = %c0 to %c1 step %c1 iter_args(%p = %x0, %q = %x1) -> (memref<8xf32>, memref<8xf32>) {
    scf.yield %p, %q : memref<8xf32>, memref<8xf32>
  }
  // expected-error @+1 {{output #0 and input #0 may be one buffer (through 'scf.for'); expected views of one buffer (in place) or distinct buffers}}
  %t = "coll.permute"(%x0, %x1, %r0, %r1) {devices = array<i64: 0, 1>, pairs = array<i64: 0, 1, 1, 0>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// Two memref.get_global of one global are one buffer.
memref.global "private" @g : memref<16xf32> = uninitialized
func.func @partial_overlap_through_two_get_globals(%x1: memref<12xf32>, %y1: memref<8xf32>) {
  %g = memref.get_global @g : memref<16xf32>
  %a = memref.subview %g[4] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>>
  %b = memref.subview %x1[4] [8] [1] : memref<12xf32> to memref<8xf32, strided<[1], offset: 4>>
  %d = memref.cast %y1 : memref<8xf32> to memref<8xf32, strided<[1]>>
  %g2 = memref.get_global @g : memref<16xf32>
  %c = memref.subview %g2[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  // expected-error @+1 {{output #0 (elements [0, 8) of %1) partly overlaps input #0 (elements [4, 12) of %0); expected the input itself (in place) or memory disjoint from it}}
  %t = "coll.all_reduce"(%a, %b, %c, %d) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32, strided<[1], offset: 4>>, memref<8xf32, strided<[1], offset: 4>>, memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1]>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// What a loop's previous iteration allocated and yielded is not what this
// iteration allocates (ring attention's blocks travel so): no error.
func.func @a_buffer_of_the_previous_iteration_is_another(%x0: memref<8xf32>, %x1: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r0, %r1 = scf.for %i = %c0 to %c4 step %c1 iter_args(%p = %x0, %q = %x1) -> (memref<8xf32>, memref<8xf32>) {
    %n0 = memref.alloc() : memref<8xf32>
    %n1 = memref.alloc() : memref<8xf32>
    %t = "coll.permute"(%p, %q, %n0, %n1) {devices = array<i64: 0, 1>, pairs = array<i64: 0, 1, 1, 0>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    scf.yield %n0, %n1 : memref<8xf32>, memref<8xf32>
  }
  return
}

// -----
// Double buffering: the loop hands its buffers round, each to another, and
// starts from distinct ones: distinct in every iteration, no error.
func.func @double_buffering(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r:4 = scf.for %i = %c0 to %c3 step %c1 iter_args(%p0 = %x0, %p1 = %x1, %q0 = %y0, %q1 = %y1) -> (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) {
    %t = "coll.all_reduce"(%p0, %p1, %q0, %q1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    scf.yield %q0, %q1, %p0, %p1 : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>
  }
  return
}

// -----
// The same loop started on one buffer twice: refused.
func.func @double_buffering_from_one_buffer(%x0: memref<8xf32>, %x1: memref<8xf32>, %y1: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r:4 = scf.for %i = %c0 to %c3 step %c1 iter_args(%p0 = %x0, %p1 = %x1, %q0 = %x0, %q1 = %y1) -> (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) {
    // expected-error @+1 {{output #0 and input #0 may be one buffer (through 'scf.for'); expected views of one buffer (in place) or distinct buffers}}
    %t = "coll.all_reduce"(%p0, %p1, %q0, %q1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    scf.yield %q0, %q1, %p0, %p1 : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>
  }
  return
}

// -----
// A buffer out of a region op the rule does not follow (scf.while,
// affine.for, memref.alloca_scope, ...) may be any (an outside attack: in
// place unknown to the lowering, `ok`).
func.func @may_be_any_buffer_through_scf_while(%x0: memref<8xf32>, %x1: memref<8xf32>, %y1: memref<8xf32>) {
  %r = scf.while (%a = %x0) : (memref<8xf32>) -> memref<8xf32> {
    %false = arith.constant false
    scf.condition(%false) %a : memref<8xf32>
  } do {
  ^bb0(%b: memref<8xf32>):
    scf.yield %b : memref<8xf32>
  }
  // expected-error @+1 {{output #0 and input #0 may be one buffer (through 'scf.while'); expected views of one buffer (in place) or distinct buffers}}
  %t = "coll.all_reduce"(%x0, %x1, %r, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// scf.execute_region (as scf.if and scf.index_switch) is followed to what
// it yields: here the input itself, a choice the verifier does not take
// for in place.
func.func @may_be_any_buffer_through_execute_region(%x0: memref<8xf32>, %x1: memref<8xf32>, %y1: memref<8xf32>) {
  %r = scf.execute_region -> memref<8xf32> {
    scf.yield %x0 : memref<8xf32>
  }
  // expected-error @+1 {{output #0 and input #0 may be one buffer (through 'scf.execute_region'); expected views of one buffer (in place) or distinct buffers}}
  %t = "coll.all_reduce"(%x0, %x1, %r, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
