// coll-inline-aliased-calls refuses what inlining shows wrong, located in
// the callee with a note at the call, and a recursion it cannot inline.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(coll-inline-aliased-calls)'

// Overlapping views of one buffer: the verifier's rule, as if written in
// the caller (they computed wrong sums that every check took for ok).
func.func private @ar(%a: memref<8xf32, strided<[1]>>, %b: memref<8xf32, strided<[1]>>, %c: memref<8xf32, strided<[1], offset: 4>>, %d: memref<8xf32, strided<[1], offset: 4>>) {
  // expected-error @+1 {{output #0 (elements [4, 12) of %arg0) partly overlaps input #0 (elements [0, 8) of %arg0); expected the input itself (in place) or memory disjoint from it}}
  %t = "coll.all_reduce"(%a, %b, %c, %d) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1], offset: 4>>, memref<8xf32, strided<[1], offset: 4>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
func.func @overlapping(%x0: memref<16xf32>, %x1: memref<8xf32>, %y1: memref<12xf32>) {
  %a = memref.subview %x0[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  %c = memref.subview %x0[4] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>>
  %b = memref.cast %x1 : memref<8xf32> to memref<8xf32, strided<[1]>>
  %d = memref.subview %y1[4] [8] [1] : memref<12xf32> to memref<8xf32, strided<[1], offset: 4>>
  // expected-note @+1 {{'@ar' inlined here, its arguments' buffers may alias}}
  func.call @ar(%a, %b, %c, %d) : (memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1], offset: 4>>, memref<8xf32, strided<[1], offset: 4>>) -> ()
  return
}

// -----
// A recursion that passes its buffers on aliased is refused at the call.
// expected-note @+1 {{@rec is here}}
func.func private @rec(%a: memref<8xf32>, %b: memref<8xf32>) {
  %t = "coll.all_reduce"(%a, %b, %a, %b) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  // expected-error @+1 {{the call's buffers may alias and '@rec' holds coll ops, but it cannot be inlined to check them: it calls itself (a recursion); expected distinct buffers}}
  func.call @rec(%a, %a) : (memref<8xf32>, memref<8xf32>) -> ()
  return
}
func.func @recursion(%x0: memref<8xf32>) {
  func.call @rec(%x0, %x0) : (memref<8xf32>, memref<8xf32>) -> ()
  return
}

// -----
// A function value chosen by arith.select: the call cannot be followed.
func.func private @ar(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>, %d: memref<8xf32>) {
  %t = "coll.all_reduce"(%a, %b, %c, %d) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
func.func private @nothing(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>, %d: memref<8xf32>) {
  return
}
func.func @selected(%x0: memref<8xf32>, %x1: memref<8xf32>, %which: i1) {
  %f = func.constant @ar : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  %g = func.constant @nothing : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  %h = arith.select %which, %f, %g : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  // expected-error @+1 {{the call's buffers may alias and it may run a function holding coll ops ('@ar') through a function value this pass cannot follow (a func.constant that flows through arith.select, scf.if or an argument); expected func.call, or call_indirect of a func.constant}}
  func.call_indirect %h(%x0, %x1, %x0, %x1) : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return
}
