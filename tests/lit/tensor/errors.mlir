// What the tensor form refuses, as located errors: dynamic shapes and
// element types we have no kernels for (the verifier, before coll-bufferize
// runs), and a tensor collective given to a lowering that needs buffers.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries},coll-check-results)'
// RUN: not coll-opt %S/Inputs/not_bufferized.mlir --coll-lower-collectives 2>&1 | FileCheck %s --check-prefix=LOWER
// RUN: not coll-opt %S/Inputs/not_bufferized.mlir --coll-choose-strategy 2>&1 | FileCheck %s --check-prefix=CHOOSE
// RUN: not coll-opt %S/Inputs/not_bufferized.mlir --coll-check-order 2>&1 | FileCheck %s --check-prefix=ORDER

// LOWER: not_bufferized.mlir:4:20: error: coll-lower-collectives: 'coll.all_gather' is in the tensor form; expected memrefs: bufferize it first (coll-bufferize,one-shot-bufferize{bufferize-function-boundaries})
// CHOOSE: not_bufferized.mlir:4:20: error: coll-choose-strategy: 'coll.all_gather' is in the tensor form
// ORDER: not_bufferized.mlir:4:20: error: coll-check-order: 'coll.all_gather' is in the tensor form

func.func @dynamic(%t0: tensor<?x4xf32>, %t1: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{input #0 has dynamic shape tensor<?x4xf32>; dynamic shapes are not supported yet, expected a static shape}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<?x4xf32>, tensor<?x4xf32>) -> (!coll.token, tensor<?x4xf32>, tensor<?x4xf32>)
  return %r0 : tensor<?x4xf32>
}

// -----
func.func @dynamic_result(%t0: tensor<8xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{result #1 has dynamic shape tensor<?xf32>; dynamic shapes are not supported yet, expected a static shape}}
  %tok, %r = "coll.all_gather"(%t0) {devices = array<i64: 0>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf32>) -> (!coll.token, tensor<?xf32>)
  return %r : tensor<?xf32>
}

// -----
func.func @element(%t0: tensor<8xui32>, %t1: tensor<8xui32>) -> tensor<8xui32> {
  // expected-error @+1 {{unsupported element type ui32; expected one of: f16, bf16, f8E4M3FN, f8E5M2, f32, f64, i1, i8, i16, i32, i64}}
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xui32>, tensor<8xui32>) -> (!coll.token, tensor<8xui32>, tensor<8xui32>)
  return %r0 : tensor<8xui32>
}

// -----
func.func @index_element(%t0: tensor<8xindex>) -> tensor<8xindex> {
  // A collective without a reduction: coll-bufferize refuses the type.
  // expected-error @+1 {{coll-bufferize: input #0 has unsupported element type index; expected one of: f16, bf16, f8E4M3FN, f8E5M2, f32, f64, i1, i8, i16, i32, i64}}
  %tok, %r = "coll.broadcast"(%t0) {devices = array<i64: 0>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xindex>) -> (!coll.token, tensor<8xindex>)
  return %r : tensor<8xindex>
}
