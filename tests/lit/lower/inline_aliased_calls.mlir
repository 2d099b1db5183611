// coll-inline-aliased-calls: a call into a function holding coll ops is
// inlined where its buffers may alias (a collective's checks take distinct
// arguments for distinct buffers), and the verifier runs on the result;
// calls whose buffers are distinct stay calls.
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-inline-aliased-calls)' | FileCheck %s

// One buffer as a collective's input and output: inlined, in place; the
// private callee, named by no call any more, is erased.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME:    (%[[X0:.*]]: memref<8xf32>, %[[X1:.*]]: memref<8xf32>)
// CHECK-NEXT:    %[[T:.*]] = "coll.all_reduce"(%[[X0]], %[[X1]], %[[X0]], %[[X1]])
// CHECK-NEXT:    "coll.wait"(%[[T]])
// CHECK-NEXT:    return
// CHECK-NOT:   @ar
func.func private @ar(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>, %d: memref<8xf32>) {
  %t = "coll.all_reduce"(%a, %b, %c, %d) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
func.func @in_place(%x0: memref<8xf32>, %x1: memref<8xf32>) {
  func.call @ar(%x0, %x1, %x0, %x1) : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return
}

// -----
// Distinct buffers: the call stays, and so does its callee.
// CHECK-LABEL: func.func private @ar2
// CHECK-LABEL: func.func @distinct
// CHECK:         call @ar2(
func.func private @ar2(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>, %d: memref<8xf32>) {
  %t = "coll.all_reduce"(%a, %b, %c, %d) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
func.func @distinct(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>) {
  %y1 = memref.alloc() : memref<8xf32>
  func.call @ar2(%x0, %x1, %y0, %y1) : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return
}

// -----
// Through call_indirect of a func.constant, a global the callee also names,
// and a callee that calls another holder: each level is inlined, in turn.
// Both callees, named by no call any more, are erased.
// CHECK-NOT:   func.func private
// CHECK-LABEL: func.func @indirect_global_nested
// CHECK-NEXT:    %[[G:.*]] = memref.get_global @g
// CHECK-NEXT:    %[[G2:.*]] = memref.get_global @g
// CHECK-NEXT:    %[[T:.*]] = "coll.all_reduce"(%[[G]], %{{.*}}, %[[G2]], %{{.*}})
// CHECK-NEXT:    "coll.wait"(%[[T]])
// CHECK-NEXT:    return
memref.global "private" @g : memref<8xf32> = uninitialized
func.func private @inner(%a: memref<8xf32>, %b: memref<8xf32>, %d: memref<8xf32>) {
  %c = memref.get_global @g : memref<8xf32>
  %t = "coll.all_reduce"(%a, %b, %c, %d) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
func.func private @outer(%a: memref<8xf32>, %b: memref<8xf32>, %d: memref<8xf32>) {
  func.call @inner(%a, %b, %d) : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return
}
func.func @indirect_global_nested(%x1: memref<8xf32>, %y1: memref<8xf32>) {
  %g = memref.get_global @g : memref<8xf32>
  %f = func.constant @outer : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  func.call_indirect %f(%g, %x1, %y1) : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return
}

// -----
// A function value passed as an argument: the function that calls it may
// run @ar, so its call is inlined, and then the call_indirect of the
// func.constant.
// CHECK-LABEL: func.func @value_through_an_argument
// CHECK-SAME:    (%[[X0:.*]]: memref<8xf32>, %[[X1:.*]]: memref<8xf32>)
// CHECK-NEXT:    %[[T:.*]] = "coll.all_reduce"(%[[X0]], %[[X1]], %[[X0]], %[[X1]])
// CHECK-NEXT:    "coll.wait"(%[[T]])
// CHECK-NEXT:    return
func.func private @ar(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>, %d: memref<8xf32>) {
  %t = "coll.all_reduce"(%a, %b, %c, %d) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
func.func private @apply(%f: (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> (), %a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>, %d: memref<8xf32>) {
  func.call_indirect %f(%a, %b, %c, %d) : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return
}
func.func @value_through_an_argument(%x0: memref<8xf32>, %x1: memref<8xf32>) {
  %fc = func.constant @ar : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  func.call @apply(%fc, %x0, %x1, %x0, %x1) : ((memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> (), memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return
}
