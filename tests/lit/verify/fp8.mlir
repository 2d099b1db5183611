// What the verifier refuses on fp8 (f8E4M3FN, f8E5M2), located: a bitwise
// kind (floats take sum, prod, max, min), and an accumulator other than
// f32 (ir/kinds.py: fp8 is combined in f32).
// RUN: coll-opt %s --split-input-file --verify-diagnostics

func.func @xor_fp8(%x0: memref<8xf8E5M2>, %x1: memref<8xf8E5M2>, %y0: memref<8xf8E5M2>, %y1: memref<8xf8E5M2>) {
  // expected-error @+1 {{bitwise reduction kind 'xor' needs an integer or i1 element type, got f8E5M2}}
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "xor", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf8E5M2>, memref<8xf8E5M2>, memref<8xf8E5M2>, memref<8xf8E5M2>) -> !coll.token
  return
}

// -----
func.func @and_fp8(%x0: memref<8xf8E4M3FN>, %y0: memref<8xf8E4M3FN>) {
  // expected-error @+1 {{bitwise reduction kind 'and' needs an integer or i1 element type, got f8E4M3FN}}
  %t = "coll.reduce"(%x0, %y0) {kind = "and", devices = array<i64: 0>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<8xf8E4M3FN>, memref<8xf8E4M3FN>) -> !coll.token
  return
}

// -----
func.func @f16_partial(%a: memref<8xf16, #coll.device<0>>, %b: memref<8xf8E4M3FN, #coll.device<0>>, %c: memref<8xf8E4M3FN, #coll.device<0>>) {
  // expected-error @+1 {{combine lhs is memref<8xf16> but rhs #0 is memref<8xf8E4M3FN>; expected the same shape and element type (or f32 for the lhs and the output: a partial result)}}
  %t = "coll.combine"(%a, %b, %c) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<8xf16, #coll.device<0>>, memref<8xf8E4M3FN, #coll.device<0>>, memref<8xf8E4M3FN, #coll.device<0>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
