// The bufferize part of every route (core/routes.py, routes.bufferize):
// coll-bufferize, one-shot-bufferize, results as out-parameters (a returned
// allocation becomes the parameter itself), the other allocations freed at
// the end. coll-bufferize also runs nested on functions.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},coll-check-results,coll-distinct-results,buffer-results-to-out-params{hoist-static-allocs modify-public-functions},coll-free-local-buffers)' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(func.func(coll-bufferize),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},coll-check-results)' | FileCheck %s --check-prefix=NESTED

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

// A collective on loop-carried tensors: in place on the iteration's buffer
// (one-shot-bufferize with allow-return-allocs-from-loops), waited for in
// the loop body.
// CHECK-LABEL: func.func @in_loop(%arg0: memref<4xf32>, %arg1: memref<4xf32>)
// CHECK: scf.for {{.*}} iter_args(%[[A:.*]] = %arg0) -> (memref<4xf32>)
// CHECK-NEXT: %[[T:.*]] = "coll.all_reduce"(%[[A]], %[[A]])
// CHECK-NEXT: "coll.wait"(%[[T]])
// CHECK-NEXT: scf.yield %[[A]]
func.func @in_loop(%t: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %t) -> tensor<4xf32> {
    %tok, %b = "coll.all_reduce"(%a) {devices = array<i64: 0>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>}
        : (tensor<4xf32>) -> (!coll.token, tensor<4xf32>)
    scf.yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
