// The bufferize part of every route (core/routes.py, routes.bufferize):
// coll-bufferize, one-shot-bufferize, results as out-parameters (a returned
// allocation becomes the parameter itself), the other allocations freed at
// the end. coll-bufferize also runs nested on functions.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},coll-free-local-buffers)' | filecheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(func.func(coll-bufferize),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map})' | filecheck %s --check-prefix=NESTED

// CHECK-LABEL: func.func @scatter_negate_gather(%arg0: memref<4x2xf32>, %arg1: memref<4x2xf32>, %arg2: memref<4x2xf32>, %arg3: memref<4x2xf32>) {
// CHECK-NOT: memref.copy
// CHECK: %[[A:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK: "coll.reduce_scatter"(%arg0, %arg1, %[[A]], %[[B]])
// CHECK: "coll.wait"
// CHECK: linalg.negf ins(%[[A]] : memref<2x2xf32>) outs(%[[A]] : memref<2x2xf32>)
// CHECK: linalg.negf ins(%[[B]] : memref<2x2xf32>) outs(%[[B]] : memref<2x2xf32>)
// CHECK: "coll.all_gather"(%[[A]], %[[B]], %arg2, %arg3)
// CHECK: "coll.wait"
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
// NESTED-LABEL: func.func @scatter_negate_gather(%arg0: memref<4x2xf32>, %arg1: memref<4x2xf32>) -> (memref<4x2xf32>, memref<4x2xf32>)
// NESTED: "coll.reduce_scatter"
// NESTED: "coll.all_gather"
func.func @scatter_negate_gather(%m0: tensor<4x2xf32>, %m1: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %t, %s0, %s1 = "coll.reduce_scatter"(%m0, %m1) {devices = array<i64: 0, 1>, kind = "sum", scatter_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<4x2xf32>, tensor<4x2xf32>) -> (!coll.token, tensor<2x2xf32>, tensor<2x2xf32>)
  %n0 = linalg.negf ins(%s0 : tensor<2x2xf32>) outs(%s0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %n1 = linalg.negf ins(%s1 : tensor<2x2xf32>) outs(%s1 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %t2, %g0, %g1 = "coll.all_gather"(%n0, %n1) {devices = array<i64: 0, 1>, gather_axis = 0 : i64, operandSegmentSizes = array<i32: 2, 0, 0>}
      : (tensor<2x2xf32>, tensor<2x2xf32>) -> (!coll.token, tensor<4x2xf32>, tensor<4x2xf32>)
  return %g0, %g1 : tensor<4x2xf32>, tensor<4x2xf32>
}
