// coll-bufferize: each tensor collective becomes to_buffer of its inputs, an
// alloc per output (or the input's own buffer, in place), the memref-form
// collective and to_tensor restrict of its outputs; upstream
// one-shot-bufferize then finishes the function in the same pipeline.
// RUN: coll-opt %s --coll-bufferize | FileCheck %s --check-prefix=COLL
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},coll-check-results)' | FileCheck %s --check-prefix=MEM
// The memref form goes on down the explicit route:
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},coll-check-results,coll-lower-collectives)' | FileCheck %s --check-prefix=LOW

// In place: the inputs die here, so the outputs are their buffers.
// COLL-LABEL: func.func @all_reduce
// COLL: %[[B0:.*]] = bufferization.to_buffer %arg0 : tensor<8xf32> to memref<8xf32>
// COLL: %[[B1:.*]] = bufferization.to_buffer %arg1 : tensor<8xf32> to memref<8xf32>
// COLL: %[[T:.*]] = "coll.all_reduce"(%[[B0]], %[[B1]], %[[B0]], %[[B1]]) {coll.result_ids = array<i64: {{[0-9, ]+}}>, devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
// COLL: %[[R0:.*]] = bufferization.to_tensor %[[B0]] restrict writable : memref<8xf32> to tensor<8xf32>
// COLL: %[[R1:.*]] = bufferization.to_tensor %[[B1]] restrict writable
// COLL: "coll.wait"(%[[T]])
// COLL: return {{.*}}%[[R0]], %[[R1]]
// MEM-LABEL: func.func @all_reduce(%arg0: memref<8xf32>, %arg1: memref<8xf32>) -> (memref<8xf32>, memref<8xf32>)
// MEM-NOT: memref.alloc
// MEM-NOT: memref.copy
// MEM: "coll.all_reduce"(%arg0, %arg1, %arg0, %arg1)
// MEM: return %arg0, %arg1
// LOW-LABEL: func.func @all_reduce
// LOW: coll.implements
func.func @all_reduce(%t0: tensor<8xf32>, %t1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, tensor<8xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return %r0, %r1 : tensor<8xf32>, tensor<8xf32>
}

// An input used later is only read: a fresh output, no copy.
// COLL-LABEL: func.func @all_reduce_input_live
// COLL: bufferization.to_buffer %arg0 read_only
// COLL: memref.alloc() : memref<8xf32>
// MEM-LABEL: func.func @all_reduce_input_live
// MEM-COUNT-1: memref.alloc
// MEM-NOT: memref.copy
// MEM: "coll.all_reduce"(%arg0, %alloc)
// MEM: return %alloc, %arg0
func.func @all_reduce_input_live(%t: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %tok, %r = "coll.all_reduce"(%t) {devices = array<i64: 0>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>)
  return %r, %t : tensor<8xf32>, tensor<8xf32>
}

// A read-only argument (upstream's bufferization.writable = false) is not
// written in place either.
// MEM-LABEL: func.func @read_only_arg
// MEM-COUNT-1: memref.alloc
// MEM-NOT: memref.copy
// MEM: return
func.func @read_only_arg(%t: tensor<8xf32> {bufferization.writable = false}) -> tensor<8xf32> {
  %tok, %r = "coll.all_reduce"(%t) {devices = array<i64: 0>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>)
  return %r : tensor<8xf32>
}

// linalg on tensors around a collective: the matmul's buffer is reduced in
// place and the elementwise op runs in place on it: one allocation (the
// matmul's), no copy.
// MEM-LABEL: func.func @mlp
// MEM-COUNT-1: memref.alloc
// MEM-NOT: memref.alloc
// MEM-NOT: memref.copy
// MEM: linalg.matmul ins(%arg0, %arg1 : memref<2x4xf32>, memref<4x4xf32>) outs(%[[M:.*]] : memref<2x4xf32>)
// MEM: "coll.all_reduce"(%[[M]], %[[M]])
// MEM: "coll.wait"
// MEM: linalg.exp ins(%[[M]] : memref<2x4xf32>) outs(%[[M]] : memref<2x4xf32>)
// MEM: return %[[M]]
func.func @mlp(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %c0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %tok, %s = "coll.all_reduce"(%m) {devices = array<i64: 0>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<2x4xf32>) -> (!coll.token, tensor<2x4xf32>)
  %y = linalg.exp ins(%s : tensor<2x4xf32>) outs(%s : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// COLL-LABEL: func.func @reduce_scatter
// COLL-COUNT-2: bufferization.to_buffer %arg{{[01]}} read_only
// COLL-COUNT-2: memref.alloc() : memref<4x2xf32>
// COLL: "coll.reduce_scatter"({{.*}}) {coll.result_ids = array<i64: {{[0-9, ]+}}>, devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>, scatter_axis = 0 : i64} : (memref<8x2xf32>, memref<8x2xf32>, memref<4x2xf32>, memref<4x2xf32>) -> !coll.token
// MEM-LABEL: func.func @reduce_scatter
// MEM-COUNT-2: memref.alloc
// MEM-NOT: memref.copy
// MEM: "coll.reduce_scatter"(%arg0, %arg1, %alloc, %alloc_0)
func.func @reduce_scatter(%t0: tensor<8x2xf32>, %t1: tensor<8x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %tok, %r0, %r1 = "coll.reduce_scatter"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8x2xf32>, tensor<8x2xf32>) -> (!coll.token, tensor<4x2xf32>, tensor<4x2xf32>)
  return %r0, %r1 : tensor<4x2xf32>, tensor<4x2xf32>
}

// COLL-LABEL: func.func @all_gather
// COLL-COUNT-2: memref.alloc() : memref<2x6xf16>
// COLL: "coll.all_gather"({{.*}}) {coll.result_ids = array<i64: {{[0-9, ]+}}>, devices = array<i64: 0, 1>, gather_axis = 1 : i64, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<2x3xf16>, memref<2x3xf16>, memref<2x6xf16>, memref<2x6xf16>) -> !coll.token
// MEM-LABEL: func.func @all_gather
// MEM-NOT: memref.copy
// MEM: "coll.all_gather"(%arg0, %arg1, %alloc, %alloc_0)
func.func @all_gather(%t0: tensor<2x3xf16>, %t1: tensor<2x3xf16>) -> (tensor<2x6xf16>, tensor<2x6xf16>) {
  %tok, %r0, %r1 = "coll.all_gather"(%t0, %t1) {devices = array<i64: 0, 1>, gather_axis = 1 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<2x3xf16>, tensor<2x3xf16>) -> (!coll.token, tensor<2x6xf16>, tensor<2x6xf16>)
  return %r0, %r1 : tensor<2x6xf16>, tensor<2x6xf16>
}

// The root (device 1) is in the group: its input is the output, in place.
// COLL-LABEL: func.func @reduce
// COLL: bufferization.to_buffer %arg0 read_only
// COLL: %[[B1:.*]] = bufferization.to_buffer %arg1 : tensor<8xi8>
// COLL-NOT: memref.alloc
// COLL: "coll.reduce"(%{{.*}}, %[[B1]], %{{.*}}, %[[B1]]) {coll.result_ids = array<i64: {{[0-9, ]+}}>, devices = array<i64: 0, 1, 2>, kind = "xor", operandSegmentSizes = array<i32: 3, 1, 0>, root = 1 : i64}
// MEM-LABEL: func.func @reduce
// MEM-NOT: memref.alloc
// MEM-NOT: memref.copy
// MEM: return %arg1
func.func @reduce(%t0: tensor<8xi8>, %t1: tensor<8xi8>, %t2: tensor<8xi8>) -> tensor<8xi8> {
  %tok, %r = "coll.reduce"(%t0, %t1, %t2) {devices = array<i64: 0, 1, 2>, kind = "xor", root = 1 : i64, operandSegmentSizes = array<i32: 3, 0, 0>}
      : (tensor<8xi8>, tensor<8xi8>, tensor<8xi8>) -> (!coll.token, tensor<8xi8>)
  return %r : tensor<8xi8>
}

// The root outside the group: a fresh output.
// COLL-LABEL: func.func @reduce_outside
// COLL: memref.alloc() : memref<8xi8>
// COLL: "coll.reduce"({{.*}}operandSegmentSizes = array<i32: 2, 1, 0>, root = 5 : i64}
func.func @reduce_outside(%t0: tensor<8xi8>, %t1: tensor<8xi8>) -> tensor<8xi8> {
  %tok, %r = "coll.reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", root = 5 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xi8>, tensor<8xi8>) -> (!coll.token, tensor<8xi8>)
  return %r : tensor<8xi8>
}

// COLL-LABEL: func.func @broadcast
// COLL: %[[B:.*]] = bufferization.to_buffer %arg0 : tensor<8xf64>
// COLL: %[[A:.*]] = memref.alloc() : memref<8xf64>
// COLL: "coll.broadcast"(%[[B]], %[[B]], %[[A]]) {coll.result_ids = array<i64: {{[0-9, ]+}}>, devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 2, 0>, root = 0 : i64}
// MEM-LABEL: func.func @broadcast
// MEM-COUNT-1: memref.alloc
// MEM-NOT: memref.copy
// MEM: return %arg0, %alloc
func.func @broadcast(%t: tensor<8xf64>) -> (tensor<8xf64>, tensor<8xf64>) {
  %tok, %r0, %r1 = "coll.broadcast"(%t) {devices = array<i64: 0, 1>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf64>) -> (!coll.token, tensor<8xf64>, tensor<8xf64>)
  return %r0, %r1 : tensor<8xf64>, tensor<8xf64>
}

// COLL-LABEL: func.func @all_to_all
// COLL-COUNT-2: memref.alloc() : memref<2x4xbf16>
// COLL: "coll.all_to_all"({{.*}}) {coll.result_ids = array<i64: {{[0-9, ]+}}>, concat_axis = 1 : i64, devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>, split_axis = 0 : i64} : (memref<4x2xbf16>, memref<4x2xbf16>, memref<2x4xbf16>, memref<2x4xbf16>) -> !coll.token
// MEM-LABEL: func.func @all_to_all
// MEM-NOT: memref.copy
// MEM: "coll.all_to_all"(%arg0, %arg1, %alloc, %alloc_0)
func.func @all_to_all(%t0: tensor<4x2xbf16>, %t1: tensor<4x2xbf16>) -> (tensor<2x4xbf16>, tensor<2x4xbf16>) {
  %tok, %r0, %r1 = "coll.all_to_all"(%t0, %t1) {devices = array<i64: 0, 1>, split_axis = 0 : i64, concat_axis = 1 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<4x2xbf16>, tensor<4x2xbf16>) -> (!coll.token, tensor<2x4xbf16>, tensor<2x4xbf16>)
  return %r0, %r1 : tensor<2x4xbf16>, tensor<2x4xbf16>
}

// Value semantics over tokens: a collective reading another's result waits
// for it (its token is added to deps), and host code waits for the last.
// COLL-LABEL: func.func @chain
// COLL: %[[T1:.*]] = "coll.all_reduce"
// COLL: %[[T2:.*]] = "coll.all_gather"({{.*}}, %[[T1]]) {{.*}}operandSegmentSizes = array<i32: 2, 2, 1>}
// COLL: "coll.wait"(%[[T2]])
// COLL-NEXT: return
func.func @chain(%t: tensor<4xf32>) -> tensor<8xf32> {
  %a:2 = "coll.all_reduce"(%t) {devices = array<i64: 0>, kind = "max", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<4xf32>) -> (!coll.token, tensor<4xf32>)
  %b:3 = "coll.all_gather"(%a#1, %a#1) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<4xf32>, tensor<4xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return %b#1 : tensor<8xf32>
}

// Writing in place into a tensor an earlier collective reads: after it.
// COLL-LABEL: func.func @war
// COLL: %[[T1:.*]] = "coll.all_gather"
// COLL: "coll.all_reduce"({{.*}}, %[[T1]]) {{.*}}operandSegmentSizes = array<i32: 1, 1, 1>}
func.func @war(%t: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a:2 = "coll.all_gather"(%t) {devices = array<i64: 0>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<4xf32>) -> (!coll.token, tensor<4xf32>)
  %b:2 = "coll.all_reduce"(%t) {devices = array<i64: 0>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<4xf32>) -> (!coll.token, tensor<4xf32>)
  return %a#1, %b#1 : tensor<4xf32>, tensor<4xf32>
}
