// The tensor form of every collective (value semantics, for frontends):
// tensor inputs, no `outputs` operands, the token first and then one tensor
// per output. It parses, verifies and prints back unchanged, in coll-opt and
// in upstream mlir-opt with the IRDL file; deps tokens work as for memrefs.
// RUN: coll-opt %s | FileCheck %s
// RUN: coll-opt %s | coll-opt | FileCheck %s
// RUN: %mlir-opt --irdl-file=%irdl %s | FileCheck %s

// CHECK-LABEL: func.func @all_reduce
// CHECK: %{{.*}}:3 = "coll.all_reduce"(%arg0, %arg1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>} : (tensor<8xf32>, tensor<8xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
// CHECK: return %{{.*}}#1, %{{.*}}#2
func.func @all_reduce(%t0: tensor<8xf32>, %t1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %tok, %r0, %r1 = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8xf32>, tensor<8xf32>) -> (!coll.token, tensor<8xf32>, tensor<8xf32>)
  return %r0, %r1 : tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @all_reduce_to_device
// CHECK: "coll.all_reduce"(%arg0, %arg1) {devices = array<i64: 0, 1>, kind = "max", operandSegmentSizes = array<i32: 2, 0, 0>, to_device = 1 : i64} : (tensor<4x2xi32>, tensor<4x2xi32>) -> (!coll.token, tensor<4x2xi32>)
func.func @all_reduce_to_device(%t0: tensor<4x2xi32>, %t1: tensor<4x2xi32>) -> tensor<4x2xi32> {
  %tok, %r = "coll.all_reduce"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "max", to_device = 1 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<4x2xi32>, tensor<4x2xi32>) -> (!coll.token, tensor<4x2xi32>)
  return %r : tensor<4x2xi32>
}

// CHECK-LABEL: func.func @reduce_scatter
// CHECK: "coll.reduce_scatter"(%arg0, %arg1) {{.*}} : (tensor<8x2xf32>, tensor<8x2xf32>) -> (!coll.token, tensor<4x2xf32>, tensor<4x2xf32>)
func.func @reduce_scatter(%t0: tensor<8x2xf32>, %t1: tensor<8x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %tok, %r0, %r1 = "coll.reduce_scatter"(%t0, %t1) {devices = array<i64: 0, 1>, kind = "sum", scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<8x2xf32>, tensor<8x2xf32>) -> (!coll.token, tensor<4x2xf32>, tensor<4x2xf32>)
  return %r0, %r1 : tensor<4x2xf32>, tensor<4x2xf32>
}

// CHECK-LABEL: func.func @all_gather
// CHECK: "coll.all_gather"(%arg0, %arg1) {{.*}} : (tensor<2x3xf16>, tensor<2x3xf16>) -> (!coll.token, tensor<2x6xf16>, tensor<2x6xf16>)
func.func @all_gather(%t0: tensor<2x3xf16>, %t1: tensor<2x3xf16>) -> (tensor<2x6xf16>, tensor<2x6xf16>) {
  %tok, %r0, %r1 = "coll.all_gather"(%t0, %t1) {devices = array<i64: 0, 1>, gather_axis = 1 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<2x3xf16>, tensor<2x3xf16>) -> (!coll.token, tensor<2x6xf16>, tensor<2x6xf16>)
  return %r0, %r1 : tensor<2x6xf16>, tensor<2x6xf16>
}

// CHECK-LABEL: func.func @reduce
// CHECK: "coll.reduce"(%arg0, %arg1, %arg2) {{.*}} : (tensor<8xi8>, tensor<8xi8>, tensor<8xi8>) -> (!coll.token, tensor<8xi8>)
func.func @reduce(%t0: tensor<8xi8>, %t1: tensor<8xi8>, %t2: tensor<8xi8>) -> tensor<8xi8> {
  %tok, %r = "coll.reduce"(%t0, %t1, %t2) {devices = array<i64: 0, 1, 2>, kind = "xor", root = 3 : i64, operandSegmentSizes = array<i32: 3, 0, 0>}
      : (tensor<8xi8>, tensor<8xi8>, tensor<8xi8>) -> (!coll.token, tensor<8xi8>)
  return %r : tensor<8xi8>
}

// CHECK-LABEL: func.func @broadcast
// CHECK: "coll.broadcast"(%arg0) {{.*}} : (tensor<8xf64>) -> (!coll.token, tensor<8xf64>, tensor<8xf64>)
func.func @broadcast(%t: tensor<8xf64>) -> (tensor<8xf64>, tensor<8xf64>) {
  %tok, %r0, %r1 = "coll.broadcast"(%t) {devices = array<i64: 0, 1>, root = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf64>) -> (!coll.token, tensor<8xf64>, tensor<8xf64>)
  return %r0, %r1 : tensor<8xf64>, tensor<8xf64>
}

// CHECK-LABEL: func.func @all_to_all
// CHECK: "coll.all_to_all"(%arg0, %arg1) {{.*}} : (tensor<4x2xbf16>, tensor<4x2xbf16>) -> (!coll.token, tensor<2x4xbf16>, tensor<2x4xbf16>)
func.func @all_to_all(%t0: tensor<4x2xbf16>, %t1: tensor<4x2xbf16>) -> (tensor<2x4xbf16>, tensor<2x4xbf16>) {
  %tok, %r0, %r1 = "coll.all_to_all"(%t0, %t1) {devices = array<i64: 0, 1>, split_axis = 0 : i64, concat_axis = 1 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<4x2xbf16>, tensor<4x2xbf16>) -> (!coll.token, tensor<2x4xbf16>, tensor<2x4xbf16>)
  return %r0, %r1 : tensor<2x4xbf16>, tensor<2x4xbf16>
}

// deps: the second collective starts after the first, as in the memref form.
// CHECK-LABEL: func.func @chained
// CHECK: %[[A:.*]]:2 = "coll.all_reduce"(%arg0)
// CHECK: "coll.all_gather"(%[[A]]#1, %[[A]]#0) {{.*}}operandSegmentSizes = array<i32: 1, 0, 1>} : (tensor<4xf32>, !coll.token) -> (!coll.token, tensor<4xf32>)
// CHECK: "coll.wait"
func.func @chained(%t: tensor<4xf32>) -> tensor<4xf32> {
  %a:2 = "coll.all_reduce"(%t) {devices = array<i64: 0>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<4xf32>) -> (!coll.token, tensor<4xf32>)
  %b:2 = "coll.all_gather"(%a#1, %a#0) {devices = array<i64: 0>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 1>}
      : (tensor<4xf32>, !coll.token) -> (!coll.token, tensor<4xf32>)
  "coll.wait"(%b#0) : (!coll.token) -> ()
  return %b#1 : tensor<4xf32>
}

// SPMD form: one rank's tensor, the collective naming its group.
// CHECK-LABEL: func.func @spmd
// CHECK-SAME: coll.ranks = 4
// CHECK: "coll.all_reduce"(%arg0) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>)
func.func @spmd(%t: tensor<8xf32>) -> tensor<8xf32> attributes {coll.ranks = 4 : i64} {
  %tok, %r = "coll.all_reduce"(%t) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<8xf32>) -> (!coll.token, tensor<8xf32>)
  return %r : tensor<8xf32>
}
