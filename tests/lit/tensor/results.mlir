// A collective's result is never overwritten while it is still read.
// coll-bufferize writes a result into its input's buffer only when no tensor
// that may share that buffer (destination-passing ties, views) is used after
// the collective; coll-check-results verifies upstream's bufferization
// against the readers coll-bufferize tagged; coll-distinct-results gives a
// buffer returned twice a copy (upstream buffer-results-to-out-params
// crashes on it, LLVM 22.1.8).
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-bufferize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops},coll-check-results,coll-distinct-results,buffer-results-to-out-params{hoist-static-allocs modify-public-functions})' | FileCheck %s

// %x's buffer is %e's, and %y is written into %e's buffer after the
// collective while %r is still read: in place, %y would overwrite %r (the
// 2-D JAX step of issue 33: pmean's divisor written over pmean(g)). So the
// result gets a buffer of its own.
// CHECK-LABEL: func.func @class_used_later
// CHECK: linalg.generic {{.*}} outs(%[[E:.*]] : memref<4xf32>)
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4xf32>
// CHECK: "coll.all_reduce"(%[[E]], %[[OUT]])
#id = affine_map<(d) -> (d)>
func.func @class_used_later(%a: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> attributes {coll.ranks = 2 : i64} {
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %t, %r = "coll.all_reduce"(%x) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4xf32>) -> (!coll.token, tensor<4xf32>)
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %n = math.exp %i : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %z = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%r, %y : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// Nothing else shares %x's buffer: in place.
// CHECK-LABEL: func.func @in_place
// CHECK: linalg.generic {{.*}} outs(%[[B:.*]] : memref<4xf32>)
// CHECK: "coll.all_reduce"(%[[B]], %[[B]])
#id = affine_map<(d) -> (d)>
func.func @in_place(%a: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> attributes {coll.ranks = 2 : i64} {
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %n = arith.negf %i : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %t, %r = "coll.all_reduce"(%x) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4xf32>) -> (!coll.token, tensor<4xf32>)
  return %r : tensor<4xf32>
}

// -----

// One result returned twice: the second return is a copy, and upstream's
// buffer-results-to-out-params gets two buffers (it crashed on one).
// CHECK-LABEL: func.func @returned_twice
// CHECK-SAME: (%[[A:.*]]: memref<4xi32>, %[[Y0:.*]]: memref<4xi32>, %[[Y1:.*]]: memref<4xi32>)
// CHECK: "coll.all_reduce"(%[[A]], %[[Y0]])
// CHECK: memref.copy %[[Y0]], %[[Y1]]
// CHECK-NEXT: return
func.func @returned_twice(%a: tensor<4xi32> {bufferization.writable = false}) -> (tensor<4xi32>, tensor<4xi32>) attributes {coll.ranks = 2 : i64} {
  %t, %r = "coll.all_reduce"(%a) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4xi32>) -> (!coll.token, tensor<4xi32>)
  return %r, %r : tensor<4xi32>, tensor<4xi32>
}
