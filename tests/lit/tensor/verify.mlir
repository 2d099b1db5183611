// The verifier on the tensor form: the same shape and element-type checks as
// the memref form, plus one form per op, as located diagnostics.
// RUN: coll-opt %s --split-input-file --verify-diagnostics

// One IRDL constraint variable binds the type of a whole variadic group, so
// IRDL itself rejects tensors and memrefs mixed among the inputs.
func.func @mixed_inputs(%t: tensor<8xf32>, %m: memref<8xf32>) {
  // expected-error @+1 {{expected 'tensor<8xf32>' but got 'memref<8xf32>'}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t, %m) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, memref<8xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----
func.func @tensor_with_outputs(%t0: tensor<8xf32>, %t1: tensor<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  // expected-error @+1 {{a collective on tensors takes no output buffers, got 2; expected its outputs as tensor results after the token}}
  %tok = "coll.all_reduce"(%t0, %t1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
      : (tensor<8xf32>, tensor<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  return
}

// -----
func.func @memref_inputs_tensor_results(%x0: memref<8xf32>, %x1: memref<8xf32>) {
  // expected-error @+1 {{the op returns tensors but input #0 is a memref; expected tensor inputs (tensor form) or no results but the token}}
  %tok, %r0, %r1 = "coll.all_reduce"(%x0, %x1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (memref<8xf32>, memref<8xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----
func.func @too_few_results(%t0: tensor<8xf32>, %t1: tensor<8xf32>) {
  // expected-error @+1 {{multi-device output returns 2 tensor(s) after its token, got 1}}
  %tok, %r0 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, tensor<8xf32>) -> (!coll.token, tensor<8xf32>)
  return
}

// -----
func.func @no_results(%t0: tensor<8xf32>, %t1: tensor<8xf32>) {
  // expected-error @+1 {{multi-device output returns 2 tensor(s) after its token, got 0}}
  %tok = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, tensor<8xf32>) -> !coll.token
  return
}

// -----
func.func @dynamic_shape(%t0: tensor<?xf32>, %t1: tensor<?xf32>) {
  // expected-error @+1 {{input #0 has dynamic shape tensor<?xf32>; dynamic shapes are not supported yet, expected a static shape}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<?xf32>, tensor<?xf32>) -> (!coll.token, tensor<?xf32>, tensor<?xf32>)
  return
}

// -----
func.func @result_shape(%t0: tensor<8xf32>, %t1: tensor<8xf32>) {
  // expected-error @+1 {{result #1 is tensor<4xf32> but input #0 is tensor<8xf32>; expected the same shape and element type on every device}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, tensor<8xf32>) -> (!coll.token, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----
func.func @result_element(%t0: tensor<8xf32>, %t1: tensor<8xf32>) {
  // expected-error @+1 {{result #1 is tensor<8xf16> but input #0 is tensor<8xf32>; expected the same shape and element type on every device}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, tensor<8xf32>) -> (!coll.token, tensor<8xf16>, tensor<8xf16>)
  return
}

// -----
func.func @scatter_shape(%t0: tensor<8xf32>, %t1: tensor<8xf32>) {
  // expected-error @+1 {{result #1 is tensor<8xf32> but reduce_scatter over 2 devices of tensor<8xf32> inputs gives tensor<4xf32>; expected that shape}}
  %tok, %r0, %r1 = "coll.reduce_scatter"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, tensor<8xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----
func.func @gather_axis(%t0: tensor<8xf32>, %t1: tensor<8xf32>) {
  // expected-error @+1 {{gather_axis 1 is out of range for rank 1; expected 0 <= axis < 1}}
  %tok, %r0, %r1 = "coll.all_gather"(%t0, %t1) {devices = array<i64: 0, 1>, gather_axis = 1 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, tensor<8xf32>) -> (!coll.token, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----
func.func @unsupported_element(%t0: tensor<8xcomplex<f32>>, %t1: tensor<8xcomplex<f32>>) {
  // expected-error @+1 {{unsupported element type complex<f32>; expected one of:}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>) -> (!coll.token, tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>)
  return
}

// -----
func.func @bitwise_float(%t0: tensor<8xf32>, %t1: tensor<8xf32>) {
  // expected-error @+1 {{bitwise reduction kind 'xor' needs an integer or i1 element type, got f32}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "xor", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, tensor<8xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----
func.func @encoding(%t0: tensor<8xf32, "enc">, %t1: tensor<8xf32, "enc">) {
  // expected-error @+1 {{input #0 is tensor<8xf32, "enc">, a tensor with an encoding; expected a plain ranked tensor}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32, "enc">, tensor<8xf32, "enc">) -> (!coll.token, tensor<8xf32, "enc">, tensor<8xf32, "enc">)
  return
}

// -----
func.func @devices_count(%t0: tensor<8xf32>, %t1: tensor<8xf32>) {
  // expected-error @+1 {{'devices' names 3 devices but the op has 2 inputs; expected one device per input}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1, 2>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, tensor<8xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----
func.func @broadcast_results(%t: tensor<8xf32>) {
  // expected-error @+1 {{'devices' names 2 devices but the op has 3 tensor results; expected one device per tensor result}}
  %tok, %r0, %r1, %r2 = "coll.broadcast"(%t) {devices = array<i64: 0, 1>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----
func.func @spmd_two_results(%t: tensor<8xf32>) attributes {coll.ranks = 2 : i64} {
  // expected-error @+1 {{in an SPMD function (coll.ranks = 2) a collective takes one input and returns one tensor (this rank's) and names its group devices = [0..1]}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----
func.func @not_shaped(%a: i32, %b: i32) {
  // expected-error @+1 {{input #0 is i32; expected a memref or a ranked tensor with a static shape}}
  %tok, %r0, %r1 = "coll.all_reduce"(%a, %b) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (i32, i32) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----
func.func @unranked(%a: tensor<*xf32>, %b: tensor<*xf32>) {
  // expected-error @+1 {{input #0 is tensor<*xf32>; expected a memref or a ranked tensor with a static shape}}
  %tok, %r0, %r1 = "coll.all_reduce"(%a, %b) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<*xf32>, tensor<*xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----
// The results are tensors: IRDL rejects a memref among them.
func.func @memref_result(%t0: tensor<8xf32>) {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.memref'}}
  %tok, %r0 = "coll.all_reduce"(%t0) {devices = array<i64: 0>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf32>) -> (!coll.token, memref<8xf32>)
  return
}
