// Inputs found by tools/fuzz.py that aborted the process or raised a Python
// traceback: now each is a located error with exit code 1.
// RUN: coll-opt %s --split-input-file --verify-diagnostics
// RUN: not coll-opt %s --split-input-file 2>&1 | FileCheck %s
// CHECK: fuzz_regressions.mlir:13:61: error: dense arrays of 'index' elements are not supported
// CHECK-NOT: Assertion
// CHECK-NOT: Traceback

// The upstream parser asserts in DenseArrayAttr::parse (getIntOrFloatBitWidth
// of `index`).
func.func @f(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{dense arrays of 'index' elements are not supported (they crash the MLIR parser); use i64}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<index: 0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// expected-error @+1 {{dense arrays of 'index' elements are not supported}}
func.func @g() attributes {a = array< index : 1, 2>} {
  return
}

// -----
// The lexer reports the lone '@' but the parse succeeds; the Python
// bindings then abort on the unhandled error.
func.func @lone_at() {
  %0 = "coll.join"() : () -> !coll.token
  // expected-error @+1 {{expected a symbol name after '@'}}
  @ "coll.wait"(%0) : (!coll.token) -> ()
  return
}

// -----
// The bindings cannot build a dense array of f8 in Python (TypeError in the
// verifier).
func.func @f8_devices(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{'devices' must be an array<i64: ...> of device ids}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<f8E4M3FN: 0.0>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
func.func @f8_to_device(%x0: memref<8xf32>, %y0: memref<8xf32>) {
  // expected-error @+1 {{'to_device' must be an integer device id}}
  %t = "coll.all_reduce"(%x0, %y0) {kind = "sum", devices = array<i64: 0>, to_device = array<f8E4M3FN>, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----
// An SPMD function over more ranks than supported: the verifier built a
// list of 2^31 ranks (MemoryError, a traceback).
func.func @reduce(%arg0: memref<8xf32>, %arg1: memref<8xf32>) attributes {coll.ranks = 2147483648 : i64} {
  // expected-error @+1 {{its function has coll.ranks = 2147483648, more ranks than the supported maximum of 1024}}
  %0 = "coll.reduce"(%arg0, %arg1) {devices = array<i64: 0, 2>, kind = "max", operandSegmentSizes = array<i32: 1, 1, 0>, root = -1 : i64} : (memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%0) : (!coll.token) -> ()
  return
}
